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
//! });
//! // r.convert_rate[a][l], r.bleu1[a][l], r.best = #{ layer, alpha, bleu1, convert_rate },
//! // r.token_sets = #{ src, tgt, both } (sizes), r.samples = [#{ source, source_tokens, output, reference,
//! //   source_text, output_text, reference_text }] (token lists and their decoded text)
//! ```
//! Results are cached in `$CROSSLING_MODELS/analysis/` by a hash of the model's weights and the spec, so the five
//! Liu scripts that share one grid compute it once (`--fresh` recomputes).
//!
//! Every position of a test sentence (specials excluded) is decoded with the MLM head after adding α·D_l,
//! `D_l = R_l(tgt) − R_l(src)`, to layer l's hidden states (l = 0: the embedding output); the predicted subword
//! tokens are the hypothesis, the reference sentence's subword tokens (same tokenizer) the reference of BLEU-1.
use std::collections::HashSet;

use rhai::{Array, Dynamic, Map, Module, NativeCallContext};
use serde::Deserialize;
use tch::{Device, Tensor};

use super::engine::{at, rhai_err, Session};
use super::handles::ModelRef;
use crate::analysis::language::{bleu1, convert_rate, predict_tokens, shifted_hidden, LayerMeans};
use crate::features::batch::{length_batches, padded};
use crate::model::load::LoadedModel;

type Res<T> = Result<T, Box<rhai::EvalAltResult>>;

/// What `lang::mds` computes.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MdsSpec {
    pub src: String,
    pub tgt: String,
    pub corpus_src: Vec<String>,
    pub corpus_tgt: Vec<String>,
    pub test_src: Vec<String>,
    pub test_ref: Vec<String>,
    pub layers: Vec<usize>,
    pub alphas: Vec<f64>,
    #[serde(default)]
    pub samples: usize,
    /// Padded tokens per forward pass.
    #[serde(default = "default_batch_tokens")]
    pub batch_tokens: usize,
}

fn default_batch_tokens() -> usize {
    8192
}

/// Sequences of ids (with specials), cut to the model's positions.
fn encode(m: &LoadedModel, texts: &[String], lang: &str) -> crate::error::Result<Vec<Vec<i64>>> {
    let max = m.config.max_positions;
    texts
        .iter()
        .map(|t| {
            let mut ids = m.tokenizer.encode_words(t, lang)?.tokenized.ids;
            if ids.len() > max {
                let last = ids[ids.len() - 1];
                ids.truncate(max - 1);
                ids.push(last);
            }
            Ok(ids)
        })
        .collect()
}

/// Length batches of at most `budget` padded tokens: `(ids [b, seq], mask [b, seq], rows)`.
fn batches(seqs: &[Vec<i64>], pad: i64, budget: usize, device: Device) -> Vec<(Tensor, Tensor, Vec<usize>)> {
    let lens: Vec<usize> = seqs.iter().map(Vec::len).collect();
    length_batches(&lens, budget)
        .into_iter()
        .map(|rows| {
            let s: Vec<&[i64]> = rows.iter().map(|&i| seqs[i].as_slice()).collect();
            let (ids, mask, _) = padded(&s, pad, device);
            (ids, mask, rows)
        })
        .collect()
}

/// Whether a position holds a real, non-special token.
fn content_mask(ids: &Tensor, mask: &Tensor, specials: &[i64]) -> Tensor {
    let mut keep = mask.ne(0);
    for &s in specials {
        keep = keep.logical_and(&ids.ne(s));
    }
    keep
}

/// Per-layer means of the language `lang` over `texts` (`[layers + 1, hidden]`), and the set of token ids seen.
fn means_and_tokens(
    m: &LoadedModel,
    texts: &[String],
    lang: &str,
    specials: &[i64],
    budget: usize,
) -> crate::error::Result<(Tensor, HashSet<u32>)> {
    let seqs = encode(m, texts, lang)?;
    let mut acc = LayerMeans::new(m.config.layers + 1, m.config.hidden);
    let mut set = HashSet::new();
    for s in &seqs {
        set.extend(s.iter().filter(|id| !specials.contains(id)).map(|&id| id as u32));
    }
    let pad = m.tokenizer.specials().pad as i64;
    for (ids, mask, _) in batches(&seqs, pad, budget, m.device()) {
        let out = m.hidden_states(&ids, Some(&mask), lang)?;
        acc.add(&out.hidden_states, &content_mask(&ids, &mask, specials))?;
    }
    Ok((acc.means()?, set))
}

fn token_strings(m: &LoadedModel, ids: &[i64]) -> Vec<String> {
    ids.iter().map(|&i| m.tokenizer.id_to_token(i as u32).unwrap_or_else(|| format!("<{i}>"))).collect()
}

/// Readable text of token ids: the tokenizer's decoding, else the tokens joined by spaces.
fn text_of(m: &LoadedModel, ids: &[i64]) -> String {
    let ids32: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
    match m.tokenizer.decode(&ids32) {
        Ok(t) if !t.trim().is_empty() => t,
        _ => token_strings(m, ids).join(" "),
    }
}

fn floats(v: &[f64]) -> Dynamic {
    Dynamic::from_array(v.iter().map(|&x| Dynamic::from_float(x)).collect())
}

/// A grid of numbers; an undefined cell (NaN: e.g. a convert rate when no prediction is language-exclusive) is `()`.
fn grid(v: &[Vec<f64>]) -> Dynamic {
    let cell = |x: f64| if x.is_finite() { Dynamic::from_float(x) } else { Dynamic::UNIT };
    Dynamic::from_array(v.iter().map(|r| Dynamic::from_array(r.iter().map(|&x| cell(x)).collect())).collect())
}

fn strings(v: &[String]) -> Dynamic {
    Dynamic::from_array(v.iter().map(|s| Dynamic::from(s.clone())).collect())
}

/// Arg-max tokens (never a special) of the MLM head at the positions where `keep` is true, row-major; logits are
/// computed only there, in chunks of at most 256 MiB (`chunk × vocab` f32), so a 120k-token vocabulary fits.
///
/// # Shapes
/// `hidden`: `[batch, seq, d]`, `keep`: `[batch, seq]` bool → one id per kept position.
fn decode_positions(
    m: &LoadedModel,
    hidden: &Tensor,
    keep: &Tensor,
    lang: &str,
    excluded: &[u32],
) -> crate::error::Result<Vec<i64>> {
    let d = hidden.size()[2];
    let idx = keep.flatten(0, -1).nonzero().squeeze_dim(1);
    let rows = hidden.reshape([-1, d]).index_select(0, &idx); // [n, d]
    let chunk = ((256usize << 20) / (4 * m.config.vocab_size.max(1))).max(1) as i64;
    let mut out = Vec::with_capacity(rows.size()[0] as usize);
    let n = rows.size()[0];
    let mut start = 0;
    while start < n {
        let len = chunk.min(n - start);
        let logits = m.model.logits(&rows.narrow(0, start, len).unsqueeze(0), lang)?; // [1, len, vocab]
        let pred = predict_tokens(&logits, excluded).flatten(0, -1);
        out.extend(Vec::<i64>::try_from(pred).map_err(|e| crate::error::Error::Invalid(e.to_string()))?);
        start += len;
    }
    Ok(out)
}

/// Runs the MDS grid of `spec` on `m`.
pub fn mds(m: &LoadedModel, spec: &MdsSpec) -> crate::error::Result<Map> {
    use crate::error::Error;
    for (what, v) in [("corpus_src", &spec.corpus_src), ("corpus_tgt", &spec.corpus_tgt), ("test_src", &spec.test_src)]
    {
        if v.is_empty() {
            return Err(Error::Invalid(format!("lang::mds: {what} is empty")));
        }
    }
    if spec.test_src.len() != spec.test_ref.len() {
        return Err(Error::Invalid(format!(
            "lang::mds: {} test sentences but {} references",
            spec.test_src.len(),
            spec.test_ref.len()
        )));
    }
    if spec.layers.is_empty() || spec.alphas.is_empty() {
        return Err(Error::Invalid("lang::mds: layers and alphas must not be empty".into()));
    }
    let s = m.tokenizer.specials();
    let specials: Vec<i64> = [s.pad, s.unk, s.cls, s.sep, s.mask].iter().map(|&x| x as i64).collect();
    let excluded: Vec<u32> = specials.iter().map(|&x| x as u32).collect();
    let (r_src, t_src) = means_and_tokens(m, &spec.corpus_src, &spec.src, &specials, spec.batch_tokens)?;
    let (r_tgt, t_tgt) = means_and_tokens(m, &spec.corpus_tgt, &spec.tgt, &specials, spec.batch_tokens)?;
    let shift = &r_tgt - &r_src; // [layers + 1, hidden]
    let test = encode(m, &spec.test_src, &spec.src)?;
    let ref_ids: Vec<Vec<i64>> =
        encode(m, &spec.test_ref, &spec.tgt)?.into_iter().map(|ids| ids[1..ids.len() - 1].to_vec()).collect();
    let refs: Vec<Vec<String>> = ref_ids.iter().map(|ids| token_strings(m, ids)).collect();
    let pad = s.pad as i64;
    let batched = batches(&test, pad, spec.batch_tokens, m.device());
    let (mut cr, mut bl) =
        (vec![vec![0.0; spec.layers.len()]; spec.alphas.len()], vec![vec![0.0; spec.layers.len()]; spec.alphas.len()]);
    let mut outputs: Vec<Vec<Vec<Vec<i64>>>> = Vec::new(); // [a][l][sentence] predicted ids, kept for samples
    let bar = crate::progress::bar(
        (spec.alphas.len() * spec.layers.len()) as u64,
        "MDS grid [{bar:30}] {pos}/{len} cells, eta {eta}",
    );
    for &alpha in &spec.alphas {
        let mut per_layer = Vec::new();
        for &layer in &spec.layers {
            if layer > m.config.layers {
                return Err(Error::Invalid(format!(
                    "lang::mds: layer {layer} > the model's {} layers",
                    m.config.layers
                )));
            }
            let mut hyps = vec![Vec::new(); test.len()];
            let mut hyp_ids = vec![Vec::new(); test.len()];
            let mut preds_all = Vec::new();
            for (ids, mask, rows) in &batched {
                let keep = content_mask(ids, mask, &specials);
                let keep_v: Vec<bool> =
                    Vec::try_from(keep.flatten(0, -1)).map_err(|e: tch::TchError| Error::Invalid(e.to_string()))?;
                let pred_v = tch::no_grad(|| {
                    let h =
                        shifted_hidden(&m.model, ids, Some(mask), &spec.src, layer, &shift.get(layer as i64), alpha)?;
                    decode_positions(m, &h, &keep, &spec.src, &excluded)
                })?;
                // pred_v follows the kept positions in row-major order.
                let seq = ids.size()[1] as usize;
                let mut next = 0;
                for (r, &i) in rows.iter().enumerate() {
                    let n = (0..seq).filter(|&t| keep_v[r * seq + t]).count();
                    let sel: Vec<i64> = pred_v[next..next + n].to_vec();
                    next += n;
                    preds_all.extend(sel.iter().map(|&x| x as u32));
                    hyps[i] = token_strings(m, &sel);
                    hyp_ids[i] = sel;
                }
            }
            let (a_i, l_i) = (per_layer_index(&spec.alphas, alpha), per_layer.len());
            cr[a_i][l_i] = convert_rate(&preds_all, &t_src, &t_tgt).rate;
            bl[a_i][l_i] = bleu1(&hyps, &refs)?;
            per_layer.push(hyp_ids);
            bar.inc(1);
        }
        outputs.push(per_layer);
    }
    bar.finish_and_clear();
    let (mut best_a, mut best_l) = (0, 0);
    for a in 0..spec.alphas.len() {
        for l in 0..spec.layers.len() {
            if bl[a][l] > bl[best_a][best_l] {
                (best_a, best_l) = (a, l);
            }
        }
    }
    let mut out = Map::new();
    out.insert("convert_rate".into(), grid(&cr));
    out.insert("bleu1".into(), grid(&bl));
    out.insert(
        "layers".into(),
        Dynamic::from_array(spec.layers.iter().map(|&l| Dynamic::from_int(l as i64)).collect()),
    );
    out.insert("alphas".into(), floats(&spec.alphas));
    let mut best = Map::new();
    best.insert("layer".into(), Dynamic::from_int(spec.layers[best_l] as i64));
    best.insert("alpha".into(), Dynamic::from_float(spec.alphas[best_a]));
    best.insert("bleu1".into(), Dynamic::from_float(bl[best_a][best_l]));
    best.insert("convert_rate".into(), Dynamic::from_float(cr[best_a][best_l]));
    out.insert("best".into(), Dynamic::from_map(best));
    let shared = t_src.intersection(&t_tgt).count();
    let mut sets = Map::new();
    sets.insert("src".into(), Dynamic::from_int(t_src.len() as i64));
    sets.insert("tgt".into(), Dynamic::from_int(t_tgt.len() as i64));
    sets.insert("both".into(), Dynamic::from_int(shared as i64));
    out.insert("token_sets".into(), Dynamic::from_map(sets));
    let samples: Array = (0..spec.samples.min(test.len()))
        .map(|i| {
            let mut s = Map::new();
            s.insert("source".into(), Dynamic::from(spec.test_src[i].clone()));
            let src_ids = &test[i][1..test[i].len() - 1];
            let out_ids = &outputs[best_a][best_l][i];
            s.insert("source_tokens".into(), strings(&token_strings(m, src_ids)));
            s.insert("output".into(), strings(&token_strings(m, out_ids)));
            s.insert("reference".into(), strings(&refs[i]));
            s.insert("source_text".into(), Dynamic::from(text_of(m, src_ids)));
            s.insert("output_text".into(), Dynamic::from(text_of(m, out_ids)));
            s.insert("reference_text".into(), Dynamic::from(text_of(m, &ref_ids[i])));
            Dynamic::from_map(s)
        })
        .collect();
    out.insert("samples".into(), Dynamic::from_array(samples));
    Ok(out)
}

fn per_layer_index(alphas: &[f64], alpha: f64) -> usize {
    alphas.iter().position(|&a| a == alpha).unwrap_or(0)
}

/// Format of cached MDS results; bump when `mds` changes what it computes.
const MDS_CACHE_FORMAT: u32 = 1;

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

fn write_atomic(path: &std::path::Path, text: &str) -> crate::error::Result<()> {
    use crate::error::Error;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// The `lang` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("mds", move |ctx: NativeCallContext, model: ModelRef, spec: Map| {
        let f = || -> Res<Map> {
            let spec: MdsSpec = rhai::serde::from_dynamic(&Dynamic::from_map(spec))
                .map_err(|e| rhai_err(format!("lang::mds spec: {e}")))?;
            let loaded = super::ns_features::open(&s, &model).map_err(rhai_err)?;
            let cache = cache_file(&s.env.models_dir, &loaded, &spec).map_err(rhai_err)?;
            let out = match std::fs::read_to_string(&cache) {
                Ok(text) if !s.env.fresh => {
                    let v: serde_json::Value = serde_json::from_str(&text)
                        .map_err(|e| rhai_err(format!("{}: {e} (delete it or run with --fresh)", cache.display())))?;
                    s.env.log.push(format!("lang::mds {}: cached result {}", model.name, cache.display()));
                    rhai::serde::to_dynamic(v)?.cast::<Map>()
                }
                _ => {
                    let out = mds(&loaded, &spec).map_err(rhai_err)?;
                    let v: serde_json::Value = rhai::serde::from_dynamic(&Dynamic::from_map(out.clone()))?;
                    write_atomic(&cache, &v.to_string()).map_err(rhai_err)?;
                    out
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
        };
        f().map_err(|e| at(&ctx, e))
    });
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Kind;

    #[test]
    fn batches_respect_the_budget_and_cover_every_row() {
        let seqs = vec![vec![1, 5, 2], vec![1, 5, 6, 7, 2], vec![1, 2], vec![1, 9, 9, 2]];
        let b = batches(&seqs, 0, 8, Device::Cpu);
        let mut rows: Vec<usize> = b.iter().flat_map(|(_, _, r)| r.clone()).collect();
        rows.sort();
        assert_eq!(rows, [0, 1, 2, 3]);
        for (ids, mask, r) in &b {
            assert!(ids.size()[0] * ids.size()[1] <= 8 || r.len() == 1);
            assert_eq!(
                mask.sum(Kind::Int64).int64_value(&[]) as usize,
                r.iter().map(|&i| seqs[i].len()).sum::<usize>()
            );
        }
        let ids = Tensor::from_slice(&[1i64, 5, 2, 0]).view([1, 4]);
        let mask = Tensor::from_slice(&[1i64, 1, 1, 0]).view([1, 4]);
        let keep: Vec<bool> = Vec::try_from(content_mask(&ids, &mask, &[0, 1, 2]).flatten(0, -1)).unwrap();
        assert_eq!(keep, [false, true, false, false]);
    }
}
