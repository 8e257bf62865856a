//! Zero-shot cross-lingual dependency parsing end to end (Wu, Conneau et al. 2020 §3, Table 1): fine-tune the
//! biaffine parser of [`crate::tasks::parse`] with the encoder on English Universal Dependencies, keep the state with the best
//! English dev LAS, then report UAS and LAS on the test treebank of each requested language with no target-language
//! training.
//!
//! **Data** (UD v2 CoNLL-U, read through the manifests, every file recorded with its sha256). The mirror has no
//! English-EWT or GSD *train* files, so the English training set is the train files of **English-LinES** (3,457
//! sentences) and **English-ParTUT** (1,781), and model selection uses **English-EWT dev** (2,001). Evaluation uses
//! the test file of:
//!
//! | lang | treebank | sentences |
//! |---|---|---:|
//! | en | English-EWT (in-language reference) | 2,077 |
//! | fr | French-GSD | 416 |
//! | de | German-GSD | 977 |
//! | ru | Russian-GSD | 601 |
//! | zh | **Chinese-GSDSimp** — the simplified-script conversion of Chinese-GSD, since the project's Chinese corpora (and so its tokenizers) are simplified | 500 |
//!
//! Only syntactic words are used: multiword-token lines (`1-2`) and empty nodes (`8.1`) are set aside by the reader,
//! so the parser sees and is scored on exactly the basic-tree words. Relations are reduced to their universal part
//! ([`crate::tasks::parse::universal_label`]); gold UPOS decides the punctuation policy (excluded by default).
//!
//! **Caps.** `max_train` draws a seeded sample of the training sentences (kept in file order); `max_dev` and `max_eval`
//! take the first sentences of the dev and test files. Sentences whose subwords do not fit `max_len` (capped by the
//! model's positions) lose their trailing words, which are scored as missed; the counts are reported.
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::data::formats::conllu;
use crate::data::manifest::{Catalog, Manifest};
use crate::data::resolve::DataRoots;
use crate::data::FilesRead;
use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::{LoadedModel, ModelTokenizer};
use crate::tasks::backbone::TaskModel;
use crate::tasks::common::{check_languages, model_languages, ModelInfo, TRAIN_LANG};
use crate::tasks::finetune::{mix, permutation, DevPoint, FreezeReport, LossSummary, SPLIT};
use crate::tasks::items::ItemScores;
use crate::tasks::parse::metrics::Parse;
use crate::tasks::parse::{label_vocabulary, universal_label, ParseConfig, ParseFinetune, ParseItem};
use crate::tasks::word_inputs::WordEncoder;

/// English training treebanks (their `train` files).
pub const TRAIN_TREEBANKS: [&str; 2] = ["ud-en-lines", "ud-en-partut"];
/// English treebank whose `dev` file selects the model.
pub const DEV_TREEBANK: &str = "ud-en-ewt";
/// Evaluation treebank (its `test` file) of each language.
pub const EVAL_TREEBANKS: [(&str, &str); 5] =
    [("en", "ud-en-ewt"), ("fr", "ud-fr-gsd"), ("de", "ud-de-gsd"), ("ru", "ud-ru-gsd"), ("zh", "ud-zh-gsdsimp")];

/// The languages parsing can be evaluated on, in [`EVAL_TREEBANKS`] order, then the synthetic languages rewritten
/// from them (`enx`: the English test treebank, rewritten).
pub fn parse_languages() -> Vec<String> {
    crate::text::pseudo::with_synthetic(EVAL_TREEBANKS.iter().map(|(l, _)| l.to_string()).collect())
}

/// The evaluation treebank id of `lang` (of its source, for a synthetic language).
pub fn eval_treebank(lang: &str) -> Result<&'static str> {
    let lang = crate::text::pseudo::eval_file_language(lang);
    EVAL_TREEBANKS.iter().find(|(l, _)| *l == lang).map(|(_, id)| *id).ok_or_else(|| {
        Error::Invalid(format!(
            "no parsing test treebank for language '{lang}' (available: {})",
            parse_languages().join(", ")
        ))
    })
}

/// One gold-parsed sentence: its syntactic words, their UPOS and the tree with universal labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSentence {
    pub words: Vec<String>,
    /// `glued[i]`: word `i` follows word `i − 1` with no space in the sentence's text ([`conllu::Sentence::glued`]).
    pub glued: Vec<bool>,
    pub upos: Vec<String>,
    pub gold: Parse,
}

/// The sentences of one CoNLL-U file.
#[derive(Debug, Clone)]
pub struct Treebank {
    /// Manifest id, e.g. `ud-fr-gsd`.
    pub id: String,
    /// Mirror path of the file.
    pub file: String,
    pub sentences: Vec<TreeSentence>,
}

/// The parsing data of a run.
#[derive(Debug, Clone)]
pub struct ParseData {
    /// English training treebanks, in [`TRAIN_TREEBANKS`] order.
    pub train: Vec<Treebank>,
    pub dev: Treebank,
    /// Test treebank of each requested language.
    pub eval: BTreeMap<String, Treebank>,
    /// Files read, as (mirror path, sha256).
    pub files: FilesRead,
}

/// The sentences of a CoNLL-U file as gold trees: basic-tree words only, labels reduced to their universal part.
/// A word without a head (HEAD `_`) is an error naming the file and sentence.
pub fn read_trees(path: &Path) -> Result<Vec<TreeSentence>> {
    let mut out = Vec::new();
    for (k, s) in conllu::read(path)?.into_iter().enumerate() {
        let mut t = TreeSentence {
            words: Vec::with_capacity(s.tokens.len()),
            glued: s.glued(),
            upos: Vec::with_capacity(s.tokens.len()),
            gold: Parse::default(),
        };
        for tok in s.tokens {
            let head = tok.head.ok_or_else(|| {
                let sid = s.sent_id.as_deref().map_or_else(|| format!("#{}", k + 1), |id| format!("'{id}'"));
                Error::format_file(
                    path,
                    format!("sentence {sid}, word {} '{}': HEAD is `_` (expected a basic-tree head)", tok.id, tok.form),
                )
            })?;
            t.gold.heads.push(head);
            t.gold.labels.push(universal_label(&tok.deprel).to_string());
            t.words.push(tok.form);
            t.upos.push(tok.upos);
        }
        out.push(t);
    }
    Ok(out)
}

/// Reads the `split` (`train`, `dev`, `test`) file of treebank `id`, recording it in `files`.
fn read_split(catalog: &Catalog, roots: &DataRoots, id: &str, split: &str, files: &mut FilesRead) -> Result<Treebank> {
    let m: &Manifest = catalog.get(id)?;
    let suffix = format!("-ud-{split}.conllu");
    let entry = m.files.iter().find(|f| f.is_data() && f.path.ends_with(&suffix)).ok_or_else(|| {
        Error::Invalid(format!(
            "treebank {id} has no {split} file (expected a file ending in {suffix} in its manifest)"
        ))
    })?;
    let path = roots.resolve(entry)?;
    let sentences = read_trees(&path)?;
    if sentences.is_empty() {
        return Err(Error::format_file(&path, "no sentences (expected CoNLL-U word lines)"));
    }
    files.push((entry.path.clone(), entry.sha256.clone()));
    Ok(Treebank { id: id.to_string(), file: entry.path.clone(), sentences })
}

/// Reads the English training and dev treebanks and the test treebank of each of `langs`.
pub fn load_parse_data(catalog: &Catalog, roots: &DataRoots, langs: &[String]) -> Result<ParseData> {
    let mut files = Vec::new();
    let mut train = Vec::new();
    for id in TRAIN_TREEBANKS {
        train.push(read_split(catalog, roots, id, "train", &mut files)?);
    }
    let dev = read_split(catalog, roots, DEV_TREEBANK, "dev", &mut files)?;
    let mut eval = BTreeMap::new();
    for lang in langs {
        let mut bank = read_split(catalog, roots, eval_treebank(lang)?, "test", &mut files)?;
        if let Some((_, r)) = crate::text::pseudo::eval_source(lang) {
            for s in &mut bank.sentences {
                s.words = r.words(&s.words);
                // A reversed sentence's running text is its words joined by spaces ([`Rewrite::sentence`]).
                s.glued = if r.reverses() { vec![false; s.words.len()] } else { s.glued.clone() };
                s.upos = r.order(&s.upos);
                s.gold.heads = r.heads(&s.gold.heads);
                s.gold.labels = r.order(&s.gold.labels);
            }
        }
        eval.insert(lang.clone(), bank);
    }
    Ok(ParseData { train, dev, eval, files })
}

/// The parsing languages `model` can read, in [`EVAL_TREEBANKS`] order (the default evaluation languages).
pub fn default_langs(model: &LoadedModel) -> Vec<String> {
    let known = model_languages(model);
    parse_languages().into_iter().filter(|l| known.as_ref().is_none_or(|k| k.contains(l))).collect()
}

/// Checks, before any data is read, that `cfg` is valid for `model`, that each of `langs` has a test treebank and
/// that `model` can read English and each of them.
pub fn check_setup(model: &LoadedModel, langs: &[String], cfg: &ParseConfig) -> Result<()> {
    cfg.validate()?;
    check_languages(model, langs, cfg.finetune.freeze_layers, "parsing", |l| eval_treebank(l).map(|_| ()))
}

/// Encoded sentences and what truncation dropped.
#[derive(Debug, Clone)]
pub struct Encoded {
    pub items: Vec<ParseItem>,
    /// Sentences that lost words to `max_len`.
    pub truncated_sentences: usize,
    /// Words dropped by truncation.
    pub truncated_words: usize,
}

/// Encodes gold-tokenized sentences of language `lang` into at most `max_len` subwords each. `what` names the data
/// in errors.
pub fn encode_trees(
    tok: &ModelTokenizer,
    sentences: &[&TreeSentence],
    lang: &str,
    max_len: usize,
    what: &str,
) -> Result<Encoded> {
    let mut enc = WordEncoder::new(tok, lang);
    let mut out = Encoded { items: Vec::with_capacity(sentences.len()), truncated_sentences: 0, truncated_words: 0 };
    for (i, s) in sentences.iter().enumerate() {
        let input = enc
            .encode(&s.words, &s.glued, max_len)
            .map_err(|e| Error::Invalid(format!("{what}: sentence {}: {e}", i + 1)))?;
        let dropped = input.words - input.kept();
        out.truncated_sentences += usize::from(dropped > 0);
        out.truncated_words += dropped;
        let item = ParseItem { input, gold: s.gold.clone(), upos: s.upos.clone() };
        item.check().map_err(|e| Error::Invalid(format!("{what}: sentence {}: {e}", i + 1)))?;
        out.items.push(item);
    }
    Ok(out)
}

/// The training sentences: all of them, or a seeded sample of `max_train` kept in file order.
pub fn select_train(n: usize, cfg: &ParseConfig) -> Vec<usize> {
    match cfg.finetune.max_train {
        Some(cap) if cap < n => {
            let mut pick = permutation(n, mix(cfg.finetune.seed, SPLIT, 0));
            pick.truncate(cap);
            pick.sort_unstable();
            pick
        }
        _ => (0..n).collect(),
    }
}

/// UAS / LAS on one test treebank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LangParse {
    /// Manifest id and mirror path of the test file.
    pub treebank: String,
    pub file: String,
    pub sentences: usize,
    pub words: usize,
    pub uas: f64,
    pub las: f64,
    /// Words scored under the punctuation policy, and left out by it.
    pub scored: usize,
    pub excluded: usize,
    /// Words dropped by `max_len` (scored as missed) and the sentences that lost any.
    pub truncated_words: usize,
    pub truncated_sentences: usize,
    /// Words whose gold label is not among the labeller's classes (can never count for LAS).
    pub unknown_label_words: usize,
}

/// The result of [`run_parse`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParseResult {
    /// `parse`.
    pub task: String,
    pub model: ModelInfo,
    pub config: ParseConfig,
    /// The `max_len` used (the config's, capped by the model's positions).
    pub max_len: usize,
    pub device: String,
    pub train_lang: String,
    /// `mst` or `greedy`.
    pub decode: String,
    /// How words are scored: punctuation and label policy in words.
    pub scoring: String,
    /// Training treebanks (manifest ids), the dev treebank.
    pub train_treebanks: Vec<String>,
    pub dev_treebank: String,
    /// Sentences available / used for training, dev sentences used.
    pub train_available: usize,
    pub train_sentences: usize,
    pub dev_sentences: usize,
    pub truncated_train_words: usize,
    /// The labeller's classes (universal UD relations of the training sentences).
    pub labels: Vec<String>,
    pub freeze: FreezeReport,
    pub steps: u64,
    pub epochs: usize,
    /// The step whose state was kept (best English dev LAS).
    pub best_step: u64,
    pub en_dev_las: f64,
    pub dev_history: Vec<DevPoint>,
    /// Zero-shot scores per language (`en`, when asked for, is the in-language reference on EWT test).
    pub results: BTreeMap<String, LangParse>,
    /// Per-sentence `[words with gold head and label, scored words]` behind each language's LAS
    /// ([`ItemScores::Ratio`]); not in the JSON.
    #[serde(skip)]
    pub items: BTreeMap<String, ItemScores>,
    pub loss: LossSummary,
    pub files: FilesRead,
    pub train_seconds: f64,
    pub total_seconds: f64,
    /// Notes from loading the model.
    pub notes: Vec<String>,
}

/// Fine-tunes `model` (an encoder with the parser, or a stack on a frozen layer: [`TaskModel`]) on English UD and
/// evaluates on the test treebanks of `langs` (see the module docs); the model's weights are consumed.
/// `compute.device` must be the model's device.
pub fn run_parse(
    model: TaskModel,
    data: &ParseData,
    langs: &[String],
    cfg: &ParseConfig,
    compute: Compute,
    progress: bool,
) -> Result<ParseResult> {
    let started = Instant::now();
    cfg.validate()?;
    model.check_langs(langs)?;
    if let Some(l) = langs.iter().find(|l| !data.eval.contains_key(*l)) {
        return Err(Error::Invalid(format!("no test treebank of '{l}' was loaded")));
    }
    let max_len = cfg.finetune.max_len.min(model.backbone.max_positions());
    if max_len < 3 {
        return Err(Error::Invalid(format!("the model has {max_len} positions; parsing needs at least 3")));
    }
    let backbone = &model.backbone;
    let en_tok = backbone.tokenizer(TRAIN_LANG)?;
    let all_train: Vec<&TreeSentence> = data.train.iter().flat_map(|t| &t.sentences).collect();
    let picked: Vec<&TreeSentence> = select_train(all_train.len(), cfg).into_iter().map(|i| all_train[i]).collect();
    let train = encode_trees(en_tok, &picked, TRAIN_LANG, max_len, "English UD train")?;
    let dev_rows: Vec<&TreeSentence> =
        data.dev.sentences.iter().take(cfg.max_dev.unwrap_or(data.dev.sentences.len())).collect();
    let dev = encode_trees(en_tok, &dev_rows, TRAIN_LANG, max_len, &format!("{} dev", data.dev.id))?;
    let mut eval = BTreeMap::new();
    for lang in langs {
        let tb = &data.eval[lang];
        let rows: Vec<&TreeSentence> =
            tb.sentences.iter().take(cfg.finetune.max_eval.unwrap_or(tb.sentences.len())).collect();
        let tok = backbone.tokenizer(lang)?;
        eval.insert(lang.clone(), encode_trees(tok, &rows, lang, max_len, &format!("{} test", tb.id))?);
    }
    let labels = label_vocabulary(&train.items);
    let pad = backbone.pad()?;
    let TaskModel { backbone, vs, info: model, notes } = model;
    let mut ft = ParseFinetune::new(backbone, vs, pad, compute, labels.clone(), cfg)?;
    let outcome = ft.train(&train.items, &dev.items, TRAIN_LANG, cfg, progress)?;
    let options = cfg.attachment_options();
    let mut results = BTreeMap::new();
    let mut per_item = BTreeMap::new();
    for (lang, enc) in &eval {
        let e = ft.evaluate(&enc.items, lang, cfg.decode, &options, cfg.finetune.eval_batch_tokens)?;
        per_item.insert(lang.clone(), ItemScores::counts(e.sentences.iter().copied()));
        let tb = &data.eval[lang];
        let unknown = enc.items.iter().flat_map(|it| &it.gold.labels).filter(|l| !labels.contains(l)).count();
        results.insert(
            lang.clone(),
            LangParse {
                treebank: tb.id.clone(),
                file: tb.file.clone(),
                sentences: enc.items.len(),
                words: enc.items.iter().map(|it| it.input.words).sum(),
                uas: e.uas,
                las: e.las,
                scored: e.scored,
                excluded: e.excluded,
                truncated_words: enc.truncated_words,
                truncated_sentences: enc.truncated_sentences,
                unknown_label_words: unknown,
            },
        );
    }
    let punct = if cfg.include_punct { "punctuation included" } else { "punctuation (gold UPOS PUNCT) excluded" };
    Ok(ParseResult {
        task: "parse".into(),
        model,
        config: cfg.clone(),
        max_len,
        device: compute.describe(),
        train_lang: TRAIN_LANG.into(),
        decode: cfg.decode.name().into(),
        scoring: format!(
            "{punct}; universal labels (subtype after ':' stripped); words dropped by max_len scored as missed"
        ),
        train_treebanks: data.train.iter().map(|t| t.id.clone()).collect(),
        dev_treebank: data.dev.id.clone(),
        train_available: all_train.len(),
        train_sentences: train.items.len(),
        dev_sentences: dev.items.len(),
        truncated_train_words: train.truncated_words,
        labels,
        freeze: ft.freeze.clone(),
        steps: outcome.steps,
        epochs: outcome.epochs,
        best_step: outcome.best_step,
        en_dev_las: outcome.best_dev_score,
        dev_history: outcome.dev_history,
        results,
        items: per_item,
        loss: outcome.loss,
        files: data.files.clone(),
        train_seconds: outcome.seconds,
        total_seconds: started.elapsed().as_secs_f64(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONLLU: &str = "# sent_id = s1\n# text = Don't go.\n\
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n\
1\tDo\tdo\tAUX\t_\t_\t3\taux\t_\t_\n\
2\tn't\tnot\tPART\t_\t_\t3\tadvmod\t_\t_\n\
3\tgo\tgo\tVERB\t_\t_\t0\troot\t_\t_\n\
3.1\tgo\tgo\tVERB\t_\t_\t_\t_\t3:conj\t_\n\
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_\n\n\
# sent_id = s2\n\
1\tThey\tthey\tPRON\t_\t_\t2\tnsubj:pass\t_\t_\n\
2\twent\tgo\tVERB\t_\t_\t0\troot\t_\t_\n\n";

    #[test]
    fn trees_keep_syntactic_words_and_universal_labels() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.conllu");
        std::fs::write(&p, CONLLU).unwrap();
        let t = read_trees(&p).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].words, ["Do", "n't", "go", "."]);
        assert_eq!(t[0].gold.heads, [3, 3, 0, 3]);
        assert_eq!(t[0].gold.labels, ["aux", "advmod", "root", "punct"]);
        assert_eq!(t[0].upos[3], "PUNCT");
        assert_eq!(t[1].gold.labels, ["nsubj", "root"]);
        std::fs::write(&p, "# sent_id = bad\n1\tx\tx\tX\t_\t_\t_\tdep\t_\t_\n\n").unwrap();
        let e = read_trees(&p).unwrap_err().to_string();
        assert!(e.contains("x.conllu") && e.contains("sentence 'bad', word 1 'x': HEAD is `_`"), "{e}");
    }

    #[test]
    fn treebanks_languages_and_sampling() {
        assert_eq!(eval_treebank("zh").unwrap(), "ud-zh-gsdsimp");
        assert_eq!(eval_treebank("fr").unwrap(), "ud-fr-gsd");
        assert!(eval_treebank("sw").unwrap_err().to_string().contains("en, fr, de, ru, zh"));
        let catalog = Catalog::load_default().unwrap();
        for id in TRAIN_TREEBANKS {
            assert!(catalog.get(id).unwrap().files.iter().any(|f| f.path.ends_with("-ud-train.conllu")), "{id}");
        }
        for (_, id) in EVAL_TREEBANKS {
            assert!(catalog.get(id).unwrap().files.iter().any(|f| f.path.ends_with("-ud-test.conllu")), "{id}");
        }
        let mut cfg = ParseConfig::default();
        cfg.finetune.max_train = Some(5);
        let pick = select_train(20, &cfg);
        assert_eq!(pick.len(), 5);
        assert!(pick.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(pick, select_train(20, &cfg));
        let mut other_seed = cfg.clone();
        other_seed.finetune.seed = 2;
        assert_ne!(pick, select_train(20, &other_seed));
        assert_eq!(select_train(4, &cfg), [0, 1, 2, 3]);
    }

    #[test]
    fn encoding_counts_truncation() {
        let vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "##s"];
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vocab.txt"), vocab.join("\n")).unwrap();
        let tok = ModelTokenizer::HuggingFace(crate::model::tokenizer::load_hf_tokenizer(dir.path()).unwrap());
        let s = TreeSentence {
            words: ["the", "cats", "sat"].map(String::from).to_vec(),
            glued: vec![false; 3],
            upos: ["DET", "NOUN", "VERB"].map(String::from).to_vec(),
            gold: Parse { heads: vec![2, 3, 0], labels: ["det", "nsubj", "root"].map(String::from).to_vec() },
        };
        let e = encode_trees(&tok, &[&s, &s], "en", 5, "test").unwrap();
        assert_eq!((e.truncated_sentences, e.truncated_words), (2, 2));
        assert_eq!(e.items[0].input.first, [1, 2]);
        let e = encode_trees(&tok, &[&s], "en", 64, "test").unwrap();
        assert_eq!((e.truncated_sentences, e.truncated_words), (0, 0));
    }
}
