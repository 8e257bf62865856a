//! Named pre-training runs: the ablations of Wu, Conneau et al. (2020), Table 1, for a language pair at a scale.
//!
//! | preset | what changes from `default` |
//! |---|---|
//! | `default` | joint BPE over both languages, everything shared, same domain (novels) |
//! | `domain-mismatch` | English novels vs the other language's news (the study's Wiki-CC row; the bundle's second domain) |
//! | `no-anchors` | per-language BPE with language-prefixed tokens: no shared strings |
//! | `default-anchors` | per-language BPE, vocabulary = union (shared strings merge) |
//! | `extra-anchors` | `default` + MUSE code-switching of the training text |
//! | `sep-emb` | per-language embeddings (and tied softmax) |
//! | `sep-l1-3`, `sep-l1-6` | per-language bottom layers 1–3 / 1–6 of 8 |
//! | `sep-emb-l1-3`, `sep-emb-l1-6` | both |
//!
//! Depths scale with the model: the study's `k` of 8 layers becomes `max(1, round(k · L / 8))` of `L` (smoke
//! L = 2: 1 and 2; cpu L = 4: 2 and 3; paper L = 8: 3 and 6).
//!
//! Scales (`SCALE` of DESIGN.md): `smoke` — tiny, seconds on a CPU, for tests; `cpu` — 4 layers × 256 (model
//! preset `cpu`), 100k sentences per language, 16k BPE, 3,000 steps of 32 × 128 tokens; `paper` — the study's
//! architecture (8 layers, 768 wide, 12 heads, 256-token streams) with our step budget (100k steps of 32 × 256).
//! The step budgets, learning rates and corpus caps of `cpu` and `paper` are this project's choices, not the
//! paper's.
use crate::error::{Error, Result};
use crate::model::ModelConfig;
use crate::text::corpus::DEFAULT_VALID_PER_MILLE;
use crate::text::tokenize::{AnchorScheme, TokenizerSpec};
use crate::train::extra_anchors::CodeSwitchConfig;
use crate::train::run::{RunConfig, RunCorpus};
use crate::train::trainer::TrainConfig;
use std::collections::BTreeMap;

/// The ablation names, in Table 1 order.
pub const ABLATIONS: [&str; 10] = [
    "default",
    "domain-mismatch",
    "no-anchors",
    "default-anchors",
    "extra-anchors",
    "sep-emb",
    "sep-l1-3",
    "sep-l1-6",
    "sep-emb-l1-3",
    "sep-emb-l1-6",
];

/// Running-text datasets per language in the novels domain (the study's Wikipedia stand-in here).
fn novels(lang: &str) -> Result<Vec<String>> {
    let ids: &[&str] = match lang {
        "en" => &["eltec-en"],
        "fr" => &["eltec-fr"],
        "de" => &["eltec-de"],
        "ru" => &["novels-ru"],
        "zh" => &["novels-zh", "zhwiki", "zhwiki-sampled", "clue-small"],
        other => return Err(Error::Invalid(format!("no running-text datasets for language '{other}'"))),
    };
    Ok(ids.iter().map(|s| s.to_string()).collect())
}

/// `k` of the study's 8 layers, scaled to `layers`.
pub fn scaled_depth(k: usize, layers: usize) -> usize {
    ((k as f64 * layers as f64 / 8.0).round() as usize).clamp(1, layers)
}

/// The run config of `ablation` for `pair` (e.g. `en-fr`) at `scale` (`smoke`, `cpu`, `paper`).
pub fn preset(ablation: &str, pair: &str, scale: &str) -> Result<RunConfig> {
    if !ABLATIONS.contains(&ablation) {
        return Err(Error::Invalid(format!("unknown preset '{ablation}'; known: {}", ABLATIONS.join(", "))));
    }
    let (a, b) = pair
        .split_once('-')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty() && a != b)
        .ok_or_else(|| Error::Invalid(format!("language pair '{pair}': expected e.g. en-fr")))?;
    let languages = vec![a.to_string(), b.to_string()];
    let (model_preset, max_sentences, vocab, seq_len, batch, steps, warmup, peak_lr, eval_every) = match scale {
        "smoke" => ("smoke", 300, 400, 32, 4, 4, 2, 5e-4, 2),
        "cpu" => ("cpu", 100_000, 16_000, 128, 32, 3_000, 300, 5e-4, 500),
        "paper" => ("paper", 1_000_000, 64_000, 256, 32, 100_000, 10_000, 1e-4, 5_000),
        other => return Err(Error::Invalid(format!("unknown scale '{other}'; known: smoke, cpu, paper"))),
    };
    let mut model = ModelConfig::preset(model_preset, vocab, languages.clone())?;
    model.max_positions = model.max_positions.max(seq_len);
    if scale == "smoke" {
        model.hidden = 32;
    }
    let sep = |k: usize| scaled_depth(k, model.layers);
    (model.sharing.sep_emb, model.sharing.sep_layers) = match ablation {
        "sep-emb" => (true, 0),
        "sep-l1-3" => (false, sep(3)),
        "sep-l1-6" => (false, sep(6)),
        "sep-emb-l1-3" => (true, sep(3)),
        "sep-emb-l1-6" => (true, sep(6)),
        _ => (false, 0),
    };
    let scheme = match ablation {
        "no-anchors" => AnchorScheme::NoAnchors,
        "default-anchors" => AnchorScheme::PerLanguageUnion,
        _ => AnchorScheme::Joint,
    };
    let mut datasets = BTreeMap::new();
    for lang in &languages {
        let ids =
            if ablation == "domain-mismatch" && lang != "en" { vec!["news-mono".to_string()] } else { novels(lang)? };
        datasets.insert(lang.clone(), ids);
    }
    let codeswitch = (ablation == "extra-anchors").then(|| CodeSwitchConfig {
        dictionary: pair.to_string(),
        p: 0.3,
        max_fraction: 0.15,
        group: 64,
    });
    let select_lang = if languages.iter().any(|l| l == "en") { "en".to_string() } else { languages[0].clone() };
    let cfg = RunConfig {
        languages,
        corpus: RunCorpus {
            datasets,
            max_sentences: Some(max_sentences),
            max_bytes: None,
            valid_per_mille: DEFAULT_VALID_PER_MILLE,
        },
        tokenizer: TokenizerSpec::new(scheme, vocab),
        train: TrainConfig {
            model,
            seq_len,
            batch_size: batch,
            steps,
            warmup_steps: warmup,
            peak_lr,
            eval_every,
            eval_batches: if scale == "smoke" { 1 } else { 20 },
            checkpoint_every: eval_every,
            select_lang,
            ..TrainConfig::default()
        },
        codeswitch,
    };
    cfg.validate()?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ablation_builds_at_every_scale() {
        for scale in ["smoke", "cpu", "paper"] {
            for ab in ABLATIONS {
                let cfg = preset(ab, "en-fr", scale).unwrap();
                cfg.train.model.validate().unwrap();
                assert_eq!(cfg.languages, ["en", "fr"]);
            }
        }
    }

    #[test]
    fn ablations_switch_the_right_things() {
        let d = preset("default", "en-ru", "cpu").unwrap();
        assert_eq!(d.tokenizer.scheme, AnchorScheme::Joint);
        assert!(!d.train.model.sharing.sep_emb && d.train.model.sharing.sep_layers == 0 && d.codeswitch.is_none());
        assert_eq!(preset("no-anchors", "en-ru", "cpu").unwrap().tokenizer.scheme, AnchorScheme::NoAnchors);
        assert_eq!(preset("sep-emb-l1-6", "en-zh", "cpu").unwrap().train.model.sharing.sep_layers, 3);
        assert_eq!(preset("sep-l1-3", "en-zh", "paper").unwrap().train.model.sharing.sep_layers, 3);
        assert_eq!(preset("extra-anchors", "en-fr", "smoke").unwrap().codeswitch.unwrap().dictionary, "en-fr");
        assert_eq!(preset("domain-mismatch", "en-fr", "smoke").unwrap().corpus.datasets["fr"], ["news-mono"]);
        assert_eq!(preset("default", "en-zh", "smoke").unwrap().corpus.datasets["zh"][0], "novels-zh");
    }

    #[test]
    fn depth_mapping_and_errors() {
        assert_eq!([scaled_depth(3, 2), scaled_depth(6, 2)], [1, 2]);
        assert_eq!([scaled_depth(3, 4), scaled_depth(6, 4)], [2, 3]);
        assert_eq!([scaled_depth(3, 8), scaled_depth(6, 8)], [3, 6]);
        assert!(preset("sep-l1-9", "en-fr", "cpu").unwrap_err().to_string().contains("known: default"));
        assert!(preset("default", "enfr", "cpu").unwrap_err().to_string().contains("expected e.g. en-fr"));
        assert!(preset("default", "en-fr", "huge").unwrap_err().to_string().contains("unknown scale"));
    }
}
