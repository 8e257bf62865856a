//! `lang::` — language-specific information and the mean-difference shift (Liu et al. 2020, §4; formulas in
//! [`crate::analysis::language`]), on any model a script holds (crossling or an imported Hugging Face BERT).
//!
//! ```rhai
//! let r = lang::mds(model, #{
//!     src: "en", tgt: "fr",
//!     corpus_src: en_texts, corpus_tgt: fr_texts,   // means of language R_l and token sets T_src, T_tgt
//!     test_src: en_test, test_ref: fr_test,          // sentences to translate, and their references
//!     layers: [0, 1, 2, 3, 4], alphas: [0.0, 0.5, 1.0],
//!     samples: 3,                                    // sample translations at the best BLEU-1 cell
//!     sample_cells: [#{ layer: 3, alpha: 1.0 }],     // … and at these cells (optional)
//! });
//! // r.convert_rate[a][l], r.bleu1[a][l], r.best = #{ layer, alpha, bleu1, convert_rate },
//! // r.counts[a][l] = #{ target_only, source_only, shared, neither, target_only_symbols, matched,
//! //   target_only_matched, reference } (summed over the test sentences),
//! // r.items[a][l] = #{ convert, converted_symbols, outside, unigram, converted_in_reference }: per test sentence
//! //   [numerator, denominator], ready for results::score(KEY, #{ ratio: r.items[a][l].convert }),
//! // r.brevity_penalty (BLEU-1's, the same in every cell), r.token_sets = #{ src, tgt, both } (sizes),
//! // r.shift_norms, r.samples = [#{ source, source_tokens, output, reference, source_text, output_text,
//! //   reference_text, converted_content }] (token lists and their decoded text),
//! // r.cell_samples = [#{ layer, alpha, samples: [...] }]
//! ```
//! The means and the shift are also there on their own, as per-layer features with one row:
//! ```rhai
//! let r_en = lang::means(model, en_texts, "en");   // Features [L+1, 1, d]: R_l(en), mean over non-special tokens
//! let d = lang::shift(r_en, lang::means(model, fr_texts, "fr"));   // D_l = R_l(fr) − R_l(en)
//! let n = lang::norms(d);                          // [‖D_0‖, …, ‖D_L‖]
//! ```
//! How separable the languages are by layer (nearest mean of language, [`crate::analysis::language_id`]):
//! ```rhai
//! let hits = lang::identify([en_fit, fr_fit], [en_test, fr_test]);   // sentence features; hits[l] = [0/1, …]
//! ```
//! Results of `lang::mds` are cached in `$CROSSLING_MODELS/analysis/` by a hash of the model's weights and the spec, so the five
//! Liu scripts that share one grid compute it once (`--fresh` recomputes).
//!
//! The grid itself is [`crate::analysis::token_translation::mds_grid`] (also behind `crossling analyse lang`);
//! `r.shift_norms[l]` is `‖D_l‖₂` for every layer of the model.
use rhai::{Array, Dynamic, Map, Module, NativeCallContext};

use super::handles::{Features, ModelRef};
use super::ns_common::{floats, from_script, native, rhai_err, strings, Res, Session};
use crate::analysis::token_translation::{language_means, mds_grid, MdsSpec};
use crate::model::load::LoadedModel;

/// Format of cached MDS results; bump when `mds` changes what it computes (3: the convert rate's denominator keeps
/// the tokens in neither set; per-sentence counts and items; samples at requested cells).
const MDS_CACHE_FORMAT: u32 = 3;

/// Where the result of `spec` on `m` is cached: `MODELS/analysis/mds-KEY.json`, KEY = sha256 of the cache format,
/// the model's weights sha256 and kind, and the spec.
fn cache_file(
    models_dir: &std::path::Path,
    m: &LoadedModel,
    spec: &MdsSpec,
) -> crate::error::Result<std::path::PathBuf> {
    use sha2::{Digest, Sha256};
    let spec_json = serde_json::to_string(spec).map_err(|e| crate::error::Error::Invalid(e.to_string()))?;
    let key = format!("{MDS_CACHE_FORMAT}\n{}\n{}\n{spec_json}", m.source.kind.name(), m.source.weights_sha256);
    let hash = hex::encode(Sha256::digest(key.as_bytes()));
    Ok(models_dir.join("analysis").join(format!("mds-{}.json", &hash[..16])))
}

fn non_empty_texts(a: &Array, what: &str) -> Res<Vec<String>> {
    let v = strings(a, what)?;
    if v.iter().all(|t| t.trim().is_empty()) {
        return Err(rhai_err(format!("{what}: no texts")));
    }
    Ok(v)
}

/// `to − from` for two single-row stacks of the same shape.
fn shift(from: &Features, to: &Features) -> Res<Features> {
    let (a, b) = (from.tensor(), to.tensor());
    if a.size() != b.size() || a.size()[1] != 1 {
        return Err(rhai_err(format!(
            "lang::shift: expected two means of language of the same model ([layers, 1, d]), got {:?} and {:?}",
            a.size(),
            b.size()
        )));
    }
    Ok(Features::new(&b - &a, format!("shift {} → {}", from.what, to.what)))
}

/// `‖f[l, 0]‖₂` for every layer of a single-row stack.
fn norms(f: &Features) -> Res<Array> {
    let t = f.tensor();
    if t.size()[1] != 1 {
        return Err(rhai_err(format!("lang::norms: expected one row per layer, {} has {:?}", f.what, t.size())));
    }
    let n = t.squeeze_dim(1).to_kind(tch::Kind::Double).norm_scalaropt_dim(2, [1i64].as_slice(), false);
    let v = Vec::<f64>::try_from(n).map_err(|e| rhai_err(e.to_string()))?;
    Ok(floats(v))
}

/// The `lang` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("means", move |ctx: NativeCallContext, model: ModelRef, texts: Array, lang: &str| {
        native(&ctx, || -> Res<Features> {
            let texts = non_empty_texts(&texts, "lang::means")?;
            let loaded = super::ns_features::open(&s, &model)?;
            let (means, tokens) = language_means(&loaded, &texts, lang, 8192)?;
            s.env.log.push(format!(
                "lang::means {} {lang}: {} texts, {} token types",
                model.name,
                texts.len(),
                tokens.len()
            ));
            Ok(Features::new(means.unsqueeze(1), format!("mean of {lang} under {}", model.name)))
        })
    });
    m.set_native_fn("shift", |ctx: NativeCallContext, from: Features, to: Features| native(&ctx, || shift(&from, &to)));
    m.set_native_fn("norms", |ctx: NativeCallContext, f: Features| native(&ctx, || norms(&f)));
    m.set_native_fn("identify", |ctx: NativeCallContext, fit: Array, test: Array| {
        native(&ctx, || -> Res<Array> {
            let stacks = |a: Array, what: &str| -> Res<Vec<tch::Tensor>> {
                a.into_iter()
                    .map(|v| {
                        v.try_cast::<Features>()
                            .map(|f| f.tensor())
                            .ok_or_else(|| rhai_err(format!("lang::identify: {what} must be sentence features")))
                    })
                    .collect()
            };
            let hits = crate::analysis::language_id::nearest_mean_hits(&stacks(fit, "fit")?, &stacks(test, "test")?)?;
            Ok(hits.into_iter().map(|h| Dynamic::from_array(floats(h))).collect())
        })
    });
    let s = session.clone();
    m.set_native_fn("mds", move |ctx: NativeCallContext, model: ModelRef, spec: Map| {
        native(&ctx, || -> Res<Map> {
            let spec: MdsSpec = from_script(&Dynamic::from_map(spec), "lang::mds spec")?;
            let loaded = super::ns_features::open(&s, &model)?;
            let cache = cache_file(&s.env.models_dir, &loaded, &spec)?;
            let out = match std::fs::read_to_string(&cache) {
                Ok(text) if !s.env.fresh => {
                    let v: serde_json::Value = serde_json::from_str(&text)
                        .map_err(|e| rhai_err(format!("{}: {e} (delete it or run with --fresh)", cache.display())))?;
                    s.env.log.push(format!("lang::mds {}: cached result {}", model.name, cache.display()));
                    rhai::serde::to_dynamic(v)?.cast::<Map>()
                }
                _ => {
                    let out = mds_grid(&loaded, &spec)?;
                    let v = serde_json::to_value(&out).map_err(|e| rhai_err(e.to_string()))?;
                    crate::atomic_file::write_atomic(&cache, v.to_string())?;
                    rhai::serde::to_dynamic(v)?.cast::<Map>()
                }
            };
            s.env.log.push(format!(
                "lang::mds {} {}→{}: {} test sentences, {} layers × {} alphas",
                model.name,
                spec.src,
                spec.tgt,
                spec.test_src.len(),
                spec.layers.len(),
                spec.alphas.len()
            ));
            Ok(out)
        })
    });
    m
}
