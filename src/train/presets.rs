//! Named pre-training runs — the model zoo of the figures: the ablations of Wu, Conneau et al. (2020), Table 1, for
//! a language pair, plus monolingual models (Emerging §5: Figures 4, 6, 7) and one multilingual model over
//! en/fr/de/ru/zh (the stand-in for mBERT in Liu et al. 2020), each at a scale.
//!
//! | preset | languages | what changes from `default` |
//! |---|---|---|
//! | `default` | any ≥ 1 | joint BPE over all languages, everything shared, same domain (novels) |
//! | `mono` | exactly 1 | `default` for one language (vocabulary halved: one language's share of a pair's) |
//! | `multilingual` | ≥ 3 (e.g. `en-fr-de-ru-zh`) | `default` with the vocabulary grown to `n/2` pairs' worth, capped at 2× |
//! | `domain-mismatch` | 2 | English novels vs the other language's news (the study's Wiki-CC row; the bundle's second domain) |
//! | `no-anchors` | 2 | per-language BPE with language-prefixed tokens: no shared strings |
//! | `default-anchors` | 2 | per-language BPE, vocabulary = union (shared strings merge) |
//! | `extra-anchors` | 2 | `default` + MUSE code-switching of the training text |
//! | `sep-emb` | 2 | per-language BPE, vocabulary = union; per-language word and position embeddings (and tied softmax) |
//! | `sep-l1-3`, `sep-l1-6` | 2 | per-language BPE, vocabulary = union; per-language bottom layers 1–3 / 1–6 of 8 |
//! | `sep-emb-l1-3`, `sep-emb-l1-6` | 2 | both |
//!
//! The five Sep rows use the per-language BPE of `default-anchors`, as Table 1 gives them ("BPE Merges 40k/40k",
//! anchors "-" for Sep L1-3 / L1-6 and "0*" for the rows with separate embeddings); Sep Emb separates "the embedding
//! layers (including positional embeddings)" (§4.3), see [`crate::model::embeddings`]; every Sep row draws its
//! random MLM replacements from the language's own tokens ([`crate::train::model_cache::SEP_LAYERS_FORMAT`]).
//!
//! Languages are given as one hyphenated list (`en`, `en-fr`, `en-fr-de-ru-zh`); the ablations take exactly two.
//! A language may be a pseudo-language ([`crate::text::pseudo`]): `en2`, English′, reads the English datasets and
//! half of the English documents, and `en` in the same run reads the other half. `sep-emb` over `en-en2` is the
//! bilingual en–en′ model of Emerging §5.2 (Figure 7: "trained on English data but with separate embeddings matrix
//! as in §4.3"); from a script, `train::model(#{ preset: "sep-emb", langs: "en-en2" })`.
//! A pair's joint vocabulary that includes Chinese or Japanese limits its alphabet by SentencePiece's
//! `character_coverage` ([`RICH_CHARSET_COVERAGE`]; [`CODESWITCHED_RICH_CHARSET_COVERAGE`] for `extra-anchors`)
//! and caps it at half the vocabulary ([`RICH_CHARSET_MAX_ALPHABET_SHARE`]).
//! Languages are sampled during training with probability ∝ (share of sentences)^0.7 (see
//! [`crate::text::sampling`]).
//!
//! Depths scale with the model: the study's `k` of 8 layers becomes `max(1, round(k · L / 8))` of `L` (smoke
//! L = 2: 1 and 2; cpu L = 4: 2 and 3; paper L = 8: 3 and 6).
//!
//! Scales (`SCALE` of DESIGN.md; [`Pretraining::at`]): `smoke` — 2 layers × 32, 300 sentences, 4 steps: seconds, for
//! tests; `cpu` — 4 layers × 128 × 4 heads with pre-LN blocks and no dropout, 100k sentences per language, 8k BPE
//! per pair, 10,000 steps of 32 × 64 tokens (20.5M) at a peak learning rate of 1e-3 after 200 warm-up steps, with
//! snapshots at 0.5, 1, 3.1 and 10M tokens (the candidate `preln` of the `emergence` curves, chosen as CHANGELOG.md,
//! *`preln`: 2026-11-29 to 2026-11-30* tells; 1,500 post-LN steps with dropout and 1,000 warm-up
//! steps before); since 2026-12-01 the same with 40 % of the tokens masked for 6,000 steps (12.3M tokens; snapshots
//! at 0.5, 1, 3.1 and 6.1M), the candidate `mask40` (docs/studies/plateau.md, *Levers on the plateau*); `paper` — the
//! study's architecture (8 layers, 768 wide, 12 heads, 256-token streams) with our step budget (100k steps of
//! 32 × 256).
//! The step budgets, learning rates and corpus caps of `cpu` and `paper` are this project's choices, not the
//! paper's.
use crate::error::{Error, Result};
use crate::model::ModelConfig;
use crate::scale::Scale;
use crate::text::corpus::DEFAULT_VALID_PER_MILLE;
use crate::text::masking::MaskingConfig;
use crate::text::pseudo::{halves, text_language};
use crate::text::tokenize::{AnchorScheme, TokenizerSpec};
use crate::train::extra_anchors::CodeSwitchConfig;
use crate::train::run::{RunConfig, RunCorpus};
use crate::train::trainer::TrainConfig;
use serde::{Deserialize, Serialize};
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

/// What a scale fixes for every pre-training run (a script may change any of it for one model:
/// [`crate::train::request::ModelRequest`]'s `shape`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pretraining {
    pub layers: usize,
    pub heads: usize,
    pub hidden: usize,
    /// Sentences per language (cap on the corpus).
    pub max_sentences: usize,
    /// BPE vocabulary of a language pair.
    pub vocab: usize,
    pub seq_len: usize,
    pub batch: usize,
    pub steps: u64,
    pub warmup: u64,
    pub peak_lr: f64,
    pub eval_every: u64,
    pub eval_batches: usize,
    /// Dropout of the encoder (embeddings, attention probabilities, block outputs): BERT's 0.1 at smoke and paper,
    /// none at cpu.
    pub dropout: f64,
    /// Pre-LN blocks instead of BERT's post-LN ([`ModelConfig::pre_ln`]): at cpu only.
    pub pre_ln: bool,
    /// Share of the tokens selected for the MLM loss ([`crate::text::masking::MaskingConfig::mask_prob`]):
    /// [`CPU_MASK_PROB`] at cpu, BERT's 0.15 at smoke and paper; the 80/10/10 split of the selected tokens stays.
    /// (Absent from settings written before it existed: BERT's.)
    #[serde(default = "bert_mask_prob")]
    pub mask_prob: f64,
    /// Steps after which every model of the scale keeps a copy of itself ([`TrainConfig::snapshot_steps`]; a
    /// request for a shorter budget drops those past it, [`crate::train::request::ModelRequest::run_config`]): at cpu
    /// the `emergence` curves' budgets, so that figure reads the very models the other figures use. Empty at smoke
    /// and paper.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshot_steps: Vec<u64>,
}

/// BERT's share of masked tokens (Devlin et al. 2019), [`MaskingConfig`]'s default.
pub fn bert_mask_prob() -> f64 {
    MaskingConfig::default().mask_prob
}

impl Pretraining {
    /// The settings of `scale`: the architecture of [`ModelConfig::at`], and this module's data and step budgets.
    pub fn at(scale: Scale) -> Pretraining {
        let arch = ModelConfig::at(scale, 0, Vec::<String>::new());
        let s = |max_sentences, vocab, seq_len, batch, steps, warmup, peak_lr, eval_every, eval_batches| Pretraining {
            layers: arch.layers,
            heads: arch.heads,
            hidden: arch.hidden,
            max_sentences,
            vocab,
            seq_len,
            batch,
            steps,
            warmup,
            peak_lr,
            eval_every,
            eval_batches,
            dropout: arch.dropout,
            pre_ln: arch.pre_ln,
            mask_prob: bert_mask_prob(),
            snapshot_steps: Vec::new(),
        };
        match scale {
            Scale::Smoke => s(300, 400, 32, 4, 4, 2, 5e-4, 2, 1),
            // The regime candidate `mask40` (docs/studies/cpu-regime.md, *The presets since 2026-12-01: `mask40`*):
            // pre-LN, no dropout, 200 warm-up steps, 40 % of the tokens masked, 6,000 steps (12.3M tokens). With 40 %
            // masked the en–fr bilingual model leaves the MLM plateau after about 2,500 steps where it took
            // 5,000–6,000 at BERT's 15 % (the `preln` presets of 2026-11-29, 10,000 steps), and after 6,000 steps its
            // perplexity is below theirs after 10,000.
            Scale::Cpu => Pretraining {
                dropout: 0.0,
                pre_ln: true,
                mask_prob: CPU_MASK_PROB,
                snapshot_steps: CPU_SNAPSHOT_STEPS.to_vec(),
                ..s(100_000, 8_000, 64, 32, 6_000, 200, 1e-3, 500, 10)
            },
            Scale::Paper => s(1_000_000, 64_000, 256, 32, 100_000, 10_000, 1e-4, 5_000, 20),
        }
    }
}

/// The snapshots every `cpu` model keeps: 0.5, 1, 3.1, 6.1 and 12.3M tokens of 2,048-token steps.
pub const CPU_SNAPSHOT_STEPS: [u64; 5] = [250, 500, 1_500, 3_000, 6_000];

/// Share of the tokens the `cpu` models are trained to predict (Wettig et al. 2023, "Should You Mask 15% in Masked
/// Language Modeling?"): at 40 % the presets' models leave the MLM plateau in about half the steps
/// (`figures/regime/plateau-levers.*`, docs/studies/plateau.md, *Levers on the plateau*).
pub const CPU_MASK_PROB: f64 = 0.4;

/// Running-text datasets per language in the novels domain (the study's Wikipedia stand-in here); a pseudo-language
/// reads its source language's.
fn novels(lang: &str) -> Result<Vec<String>> {
    let ids: &[&str] = match text_language(lang) {
        "en" => &["eltec-en"],
        "fr" => &["eltec-fr"],
        "de" => &["eltec-de"],
        "ru" => &["novels-ru"],
        "zh" => &["novels-zh", "zhwiki", "zhwiki-sampled", "clue-small"],
        other => return Err(Error::Invalid(format!("no running-text datasets for language '{other}'"))),
    };
    Ok(ids.iter().map(|s| s.to_string()).collect())
}

/// Presets beyond the ablations: one language, and many.
pub const ZOO: [&str; 2] = ["mono", "multilingual"];

/// The languages of the multilingual model of the figures (Liu et al. use mBERT; this is our stand-in).
pub const MULTILINGUAL: [&str; 5] = ["en", "fr", "de", "ru", "zh"];

/// Parse `en`, `en-fr`, `en-fr-de-ru-zh`, `en-en2` into distinct language codes (lowercase letters, then digits
/// allowed: pseudo-languages such as `en2`).
pub fn parse_languages(spec: &str) -> Result<Vec<String>> {
    let langs: Vec<String> = spec.split('-').map(str::to_string).collect();
    let mut seen = std::collections::BTreeSet::new();
    let well_formed = |l: &str| {
        l.starts_with(|c: char| c.is_ascii_lowercase())
            && l.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    if !langs.iter().all(|l| well_formed(l)) || !langs.iter().all(|l| seen.insert(l)) {
        return Err(Error::Invalid(format!(
            "languages '{spec}': expected distinct lowercase codes joined by '-', e.g. en, en-fr or en-fr-de-ru-zh"
        )));
    }
    Ok(langs)
}

/// Character coverage of a joint pair vocabulary shared with a language of a rich character set: SentencePiece's
/// documented value for Chinese and Japanese (Kudo & Richardson 2018; `character_coverage`). Without it the Chinese
/// alphabet alone fills the `cpu` scale's 8,000 entries of an en–zh vocabulary and English stays in single letters
/// (counts with and without it: docs/usage/pretraining.md, *en–zh joint vocabularies*).
pub const RICH_CHARSET_COVERAGE: f64 = 0.9995;

/// Coverage of `extra-anchors`: its code-switched English carries the dictionary's Chinese words, so at
/// [`RICH_CHARSET_COVERAGE`] the alphabet keeps more characters than `default`'s and English stays split finely
/// (`cpu`, en–zh). 0.999 gives it about `default`'s share of Chinese entries and tokens a word back
/// (docs/usage/pretraining.md, *en–zh joint vocabularies*).
pub const CODESWITCHED_RICH_CHARSET_COVERAGE: f64 = 0.999;

/// Largest share of a rich-character-set joint pair vocabulary that its alphabet may take
/// ([`crate::text::tokenize::TokenizerSpec::max_alphabet_share`]), set with the coverage. Coverage alone grows the
/// alphabet with the corpus: at the `cpu` presets (100,000 sentences a language) the Default and Extra anchors en–zh
/// alphabets at 0.9995 / 0.999 took 7,970 and 8,043 of their 8,304 and 8,310 entries, and English was left in single
/// letters (4.47 tokens a word). Half the vocabulary leaves the other half to merges (docs/usage/pretraining.md,
/// *en–zh joint vocabularies*).
pub const RICH_CHARSET_MAX_ALPHABET_SHARE: f64 = 0.5;

/// The preset's `character_coverage`: for a joint vocabulary of a pair one of whose languages is Chinese or
/// Japanese, [`RICH_CHARSET_COVERAGE`] ([`CODESWITCHED_RICH_CHARSET_COVERAGE`] with code-switching); else none
/// (every character kept). `multilingual` keeps every character: its vocabulary is twice a pair's, and its English
/// is split far less than in the en–zh pair (docs/usage/pretraining.md, *en–zh joint vocabularies*).
fn character_coverage(scheme: AnchorScheme, languages: &[String], codeswitched: bool) -> Option<f64> {
    let rich = languages.iter().map(|l| text_language(l)).any(|l| l == "zh" || l == "ja");
    let coverage = if codeswitched { CODESWITCHED_RICH_CHARSET_COVERAGE } else { RICH_CHARSET_COVERAGE };
    (scheme == AnchorScheme::Joint && languages.len() == 2 && rich).then_some(coverage)
}

/// `k` of the study's 8 layers, scaled to `layers`.
pub fn scaled_depth(k: usize, layers: usize) -> usize {
    ((k as f64 * layers as f64 / 8.0).round() as usize).clamp(1, layers)
}

/// The run config of preset `name` (an ablation of [`ABLATIONS`] or one of [`ZOO`]) for `langs` (e.g. `en-fr`) at
/// `scale` ([`Scale`]).
pub fn preset(name: &str, langs: &str, scale: Scale) -> Result<RunConfig> {
    preset_at(name, langs, &Pretraining::at(scale))
}

/// The run config of preset `name` for `langs` at the settings `sc` (a named scale, possibly changed).
pub fn preset_at(name: &str, langs: &str, sc: &Pretraining) -> Result<RunConfig> {
    if !ABLATIONS.contains(&name) && !ZOO.contains(&name) {
        return Err(Error::Invalid(format!(
            "unknown preset '{name}'; known: {}, {}",
            ABLATIONS.join(", "),
            ZOO.join(", ")
        )));
    }
    let ablation = if ZOO.contains(&name) { "default" } else { name };
    let languages = parse_languages(langs)?;
    let n = languages.len();
    let wrong_count = match name {
        "default" => None,
        "mono" => (n != 1).then_some("exactly one language, e.g. en"),
        "multilingual" => (n < 3).then_some("three or more languages, e.g. en-fr-de-ru-zh"),
        _ => (n != 2).then_some("exactly two languages, e.g. en-fr"),
    };
    if let Some(expected) = wrong_count {
        return Err(Error::Invalid(format!("preset '{name}' needs {expected}; got '{langs}'")));
    }
    // The scale's vocabulary is sized for a pair: half for one language, n/2 pairs' worth (at most 2x) for many.
    let vocab = match n {
        1 => sc.vocab / 2,
        2 => sc.vocab,
        _ => (sc.vocab * n / 2).min(2 * sc.vocab),
    };
    let mut model = ModelConfig {
        vocab_size: vocab,
        hidden: sc.hidden,
        layers: sc.layers,
        heads: sc.heads,
        languages: languages.clone(),
        dropout: sc.dropout,
        attention_dropout: sc.dropout,
        pre_ln: sc.pre_ln,
        ..ModelConfig::default()
    };
    model.max_positions = model.max_positions.max(sc.seq_len);
    let sep = |k: usize| scaled_depth(k, model.layers);
    (model.sharing.sep_emb, model.sharing.sep_layers) = match ablation {
        "sep-emb" => (true, 0),
        "sep-l1-3" => (false, sep(3)),
        "sep-l1-6" => (false, sep(6)),
        "sep-emb-l1-3" => (true, sep(3)),
        "sep-emb-l1-6" => (true, sep(6)),
        _ => (false, 0),
    };
    // Table 1's "BPE Merges 40k/40k": Default anchors and every row that separates parameters.
    let scheme = match ablation {
        "no-anchors" => AnchorScheme::NoAnchors,
        "default-anchors" => AnchorScheme::PerLanguageUnion,
        _ if model.sharing.is_separated() => AnchorScheme::PerLanguageUnion,
        _ => AnchorScheme::Joint,
    };
    let mut datasets = BTreeMap::new();
    for lang in &languages {
        let ids =
            if ablation == "domain-mismatch" && lang != "en" { vec!["news-mono".to_string()] } else { novels(lang)? };
        datasets.insert(lang.clone(), ids);
    }
    let codeswitch = (ablation == "extra-anchors").then(|| CodeSwitchConfig {
        dictionary: langs.to_string(),
        p: 0.3,
        max_fraction: 0.15,
        group: 64,
    });
    let select_lang = if languages.iter().any(|l| l == "en") { "en".to_string() } else { languages[0].clone() };
    let halves = halves(&languages)?;
    let character_coverage = character_coverage(scheme, &languages, codeswitch.is_some());
    let cfg = RunConfig {
        languages,
        corpus: RunCorpus {
            datasets,
            max_sentences: Some(sc.max_sentences),
            max_bytes: None,
            valid_per_mille: DEFAULT_VALID_PER_MILLE,
            halves,
            seed: None,
        },
        tokenizer: TokenizerSpec {
            character_coverage,
            max_alphabet_share: character_coverage.map(|_| RICH_CHARSET_MAX_ALPHABET_SHARE),
            ..TokenizerSpec::new(scheme, vocab)
        },
        train: TrainConfig {
            model,
            seq_len: sc.seq_len,
            batch_size: sc.batch,
            steps: sc.steps,
            warmup_steps: sc.warmup,
            peak_lr: sc.peak_lr,
            eval_every: sc.eval_every,
            eval_batches: sc.eval_batches,
            checkpoint_every: sc.eval_every,
            snapshot_steps: sc.snapshot_steps.clone(),
            masking: MaskingConfig { mask_prob: sc.mask_prob, ..MaskingConfig::default() },
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
        for scale in Scale::ALL {
            for ab in ABLATIONS {
                let cfg = preset(ab, "en-fr", scale).unwrap();
                cfg.train.model.validate().unwrap();
                assert_eq!(cfg.languages, ["en", "fr"]);
            }
        }
    }

    #[test]
    fn ablations_switch_the_right_things() {
        let d = preset("default", "en-ru", Scale::Cpu).unwrap();
        assert_eq!(d.tokenizer.scheme, AnchorScheme::Joint);
        assert!(!d.train.model.sharing.sep_emb && d.train.model.sharing.sep_layers == 0 && d.codeswitch.is_none());
        assert_eq!(preset("no-anchors", "en-ru", Scale::Cpu).unwrap().tokenizer.scheme, AnchorScheme::NoAnchors);
        // Table 1: every Sep row has "BPE Merges 40k/40k", the per-language vocabularies of Default anchors.
        for ab in ["default-anchors", "sep-emb", "sep-l1-3", "sep-l1-6", "sep-emb-l1-3", "sep-emb-l1-6"] {
            assert_eq!(
                preset(ab, "en-zh", Scale::Cpu).unwrap().tokenizer.scheme,
                AnchorScheme::PerLanguageUnion,
                "{ab}"
            );
        }
        for ab in ["default", "domain-mismatch", "extra-anchors"] {
            assert_eq!(preset(ab, "en-zh", Scale::Cpu).unwrap().tokenizer.scheme, AnchorScheme::Joint, "{ab}");
        }
        assert_eq!(preset("sep-emb-l1-6", "en-zh", Scale::Cpu).unwrap().train.model.sharing.sep_layers, 3);
        assert_eq!(preset("sep-l1-3", "en-zh", Scale::Paper).unwrap().train.model.sharing.sep_layers, 3);
        assert_eq!(preset("extra-anchors", "en-fr", Scale::Smoke).unwrap().codeswitch.unwrap().dictionary, "en-fr");
        assert_eq!(preset("domain-mismatch", "en-fr", Scale::Smoke).unwrap().corpus.datasets["fr"], ["news-mono"]);
        assert_eq!(preset("default", "en-zh", Scale::Smoke).unwrap().corpus.datasets["zh"][0], "novels-zh");
    }

    #[test]
    fn monolingual_and_multilingual_zoo() {
        for scale in Scale::ALL {
            for lang in MULTILINGUAL {
                let m = preset("mono", lang, scale).unwrap();
                assert_eq!(m.languages, [lang]);
                assert_eq!(m.train.select_lang, lang);
                assert_eq!(m.tokenizer.vocab_size * 2, preset("default", "en-fr", scale).unwrap().tokenizer.vocab_size);
            }
            let multi = preset("multilingual", &MULTILINGUAL.join("-"), scale).unwrap();
            assert_eq!(multi.languages, MULTILINGUAL);
            assert_eq!(multi.train.select_lang, "en");
            assert_eq!(multi.tokenizer.scheme, AnchorScheme::Joint);
            assert_eq!(multi.corpus.datasets.len(), 5);
            assert_eq!(multi.tokenizer.vocab_size, 2 * preset("default", "en-fr", scale).unwrap().tokenizer.vocab_size);
        }
    }

    #[test]
    fn joint_vocabularies_with_chinese_limit_the_alphabet() {
        let cov = |name: &str, langs: &str| preset(name, langs, Scale::Cpu).unwrap().tokenizer.character_coverage;
        assert_eq!(cov("default", "en-zh"), Some(RICH_CHARSET_COVERAGE));
        assert_eq!(cov("domain-mismatch", "en-zh"), Some(RICH_CHARSET_COVERAGE));
        assert_eq!(cov("extra-anchors", "en-zh"), Some(CODESWITCHED_RICH_CHARSET_COVERAGE));
        assert_eq!(cov("multilingual", "en-fr-de-ru-zh"), None);
        assert_eq!(cov("default", "en-fr-de-ru-zh"), None);
        assert_eq!(cov("no-anchors", "en-zh"), None);
        assert_eq!(cov("default-anchors", "en-zh"), None);
        assert_eq!(cov("sep-emb-l1-6", "en-zh"), None);
        assert_eq!(cov("default", "en-fr"), None);
        assert_eq!(cov("mono", "zh"), None);
        let cap = |name: &str, langs: &str| preset(name, langs, Scale::Cpu).unwrap().tokenizer.max_alphabet_share;
        assert_eq!(cap("default", "en-zh"), Some(RICH_CHARSET_MAX_ALPHABET_SHARE));
        assert_eq!(cap("extra-anchors", "en-zh"), Some(RICH_CHARSET_MAX_ALPHABET_SHARE));
        assert_eq!(cap("default", "en-fr"), None);
        assert_eq!(cap("no-anchors", "en-zh"), None);
    }

    #[test]
    fn english_prime_reads_the_other_half_of_english() {
        for scale in [Scale::Smoke, Scale::Cpu] {
            let cfg = preset("sep-emb", "en-en2", scale).unwrap();
            assert_eq!(cfg.languages, ["en", "en2"]);
            assert!(cfg.train.model.sharing.sep_emb && cfg.train.model.sharing.sep_layers == 0);
            assert_eq!(cfg.corpus.datasets["en2"], ["eltec-en"]);
            assert_eq!((cfg.corpus.halves["en"].half, cfg.corpus.halves["en2"].half), (0, 1));
            assert_eq!(cfg.corpus.halves["en2"].lang, "en");
            assert_eq!((cfg.train.select_lang.as_str(), cfg.tokenizer.character_coverage), ("en", None));
            let json = serde_json::to_string(&cfg).unwrap();
            assert!(json.contains(r#""halves":{"en":{"lang":"en","half":0},"en2":{"lang":"en","half":1}}"#), "{json}");
            // The run config round-trips through the run.toml it is recorded in.
            let toml = toml::to_string_pretty(&cfg).unwrap();
            assert_eq!(RunConfig::from_toml(&toml, std::path::Path::new("run.toml")).unwrap(), cfg);
        }
        let catalog = crate::data::manifest::Catalog::load_default().unwrap();
        let cfg = preset("mono", "en2", Scale::Smoke).unwrap();
        let data = crate::train::model_cache::run_data_files(&cfg, &catalog).unwrap();
        assert!(!data.is_empty() && data.keys().all(|p| p.starts_with("mono/en/")), "en2 reads the English files");
        assert!(!serde_json::to_string(&preset("sep-emb", "en-fr", Scale::Cpu).unwrap()).unwrap().contains("halves"));
        assert!(parse_languages("2en").is_err() && parse_languages("en-EN2").is_err());
        let mut bad = preset("sep-emb", "en-en2", Scale::Smoke).unwrap();
        bad.corpus.halves.get_mut("en2").unwrap().half = 2;
        assert!(bad.validate().unwrap_err().to_string().contains("half 0 or 1"));
    }

    #[test]
    fn the_synthetic_pair_reads_english_halves_and_rewrites_one() {
        let catalog = crate::data::manifest::Catalog::load_default().unwrap();
        for ab in ABLATIONS {
            for x in ["enx", "enxrev"] {
                let cfg = preset(ab, &format!("en-{x}"), Scale::Smoke).unwrap();
                assert_eq!((cfg.corpus.halves["en"].half, cfg.corpus.halves[x].half), (0, 1), "{ab} {x}");
                assert_eq!(cfg.corpus.halves["en"].rewrite, None);
                assert!(cfg.corpus.halves[x].rewrite.is_some());
                let data = crate::train::model_cache::run_data_files(&cfg, &catalog).unwrap();
                let english =
                    |p: &str| p.starts_with("mono/en/") || p.ends_with(".en.gz") || p == "dict/muse/en-fr.dict";
                assert!(data.keys().all(|p| english(p)), "{ab} {x}: {data:?}");
            }
        }
        let extra = preset("extra-anchors", "en-enx", Scale::Smoke).unwrap();
        let data = crate::train::model_cache::run_data_files(&extra, &catalog).unwrap();
        assert!(data.contains_key("dict/muse/en-fr.dict"), "the identity dictionary is read from en-fr");
        let json = serde_json::to_string(&preset("default", "en-enxrev", Scale::Cpu).unwrap()).unwrap();
        assert!(json.contains(r#""enxrev":{"lang":"en","half":1,"rewrite":"script-reversed"}"#), "{json}");
    }

    /// The model-cache keys of presets whose cpu models are trained and cached (seed 0): a new config field must be
    /// left out of the serialised config when unset, or every cached model would be retrained. (Key format v2: the
    /// device left out, the precision resolved; see [`crate::train::model_cache`].) Pinned at the `mask40` presets of
    /// 2026-12-01 (40 % masked, 6,000 steps); the masking share is serialised in every config, so runs at BERT's 15 %
    /// kept their keys when it became a preset setting.
    #[test]
    fn cache_keys_of_trained_presets_are_unchanged() {
        let catalog = crate::data::manifest::Catalog::load_default().unwrap();
        let pinned = [
            ("default", "en-fr", "b7e0bb7f6ef7af2a"),
            ("default", "en-de", "97055fc54596c86f"),
            ("default", "en-ru", "ebaa22581414b816"),
            ("mono", "en", "66cf61936c4410e4"),
            ("mono", "fr", "4b50d06f2b8f2910"),
            ("mono", "de", "e8061ed5b4321e33"),
        ];
        let found: Vec<_> = pinned
            .iter()
            .map(|&(name, langs, _)| {
                let mut cfg = preset(name, langs, Scale::Cpu).unwrap();
                cfg.train.seed = 0;
                let data = crate::train::model_cache::run_data_files(&cfg, &catalog).unwrap();
                (name, langs, crate::train::model_cache::cache_key(&cfg, &data).unwrap())
            })
            .collect();
        let expected: Vec<_> = pinned.iter().map(|&(n, l, k)| (n, l, k.to_string())).collect();
        assert_eq!(found, expected, "cpu seed 0");
    }

    #[test]
    fn depth_mapping_and_errors() {
        assert_eq!([scaled_depth(3, 2), scaled_depth(6, 2)], [1, 2]);
        assert_eq!([scaled_depth(3, 4), scaled_depth(6, 4)], [2, 3]);
        assert_eq!([scaled_depth(3, 8), scaled_depth(6, 8)], [3, 6]);
        assert!(preset("sep-l1-9", "en-fr", Scale::Cpu).unwrap_err().to_string().contains("known: default"));
        assert!(preset("default", "en-", Scale::Cpu).unwrap_err().to_string().contains("e.g. en, en-fr"));
        assert!(preset("default", "en-en", Scale::Cpu).unwrap_err().to_string().contains("distinct"));
        assert!(preset("sep-emb", "en", Scale::Cpu).unwrap_err().to_string().contains("exactly two languages"));
        assert!(preset("mono", "en-fr", Scale::Cpu).unwrap_err().to_string().contains("exactly one language"));
        assert!(preset("multilingual", "en-fr", Scale::Cpu).unwrap_err().to_string().contains("three or more"));
    }
}
