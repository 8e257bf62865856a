//! `crossling bench word2vec`: training speed and quality of crossling's word2vec ([`word2vec::train_model`])
//! against gensim's `Word2Vec` (`src/bench/reference/bench_word2vec.py`) on the same sentences with the same settings,
//! in one command.
//!
//! Corpus: real text of the data mirror, `--langs` trained jointly (Liu et al. 2020's setting): per language the
//! WMT newstest sentences (de-duplicated), then ELTeC novels split into sentences, up to `--tokens-per-lang`
//! tokens; words by `text::segment::words`, lower-cased. The sentences are shuffled (seeded), every
//! `1 / --heldout`-th is held out, and the rest become a [`Corpus`] (min count applied) whose sentences are written
//! to one file, one sentence of space-separated words per line, which gensim reads — so both sides train on the
//! identical token sequence and vocabulary.
//!
//! Timed: training only — crossling's epochs ([`crossling::wordvec::sampling::TrainReport::seconds`]), gensim's
//! `train()` call; vocabulary building, weight initialisation and corpus reading are excluded on both sides.
//! Words/s are raw corpus words (`epochs × tokens`, gensim's `raw_word_count`), effective words (kept by
//! sub-sampling) beside them. gensim runs in its two input modes: `iterable` (sentences as Python lists, the
//! usual API; its token lookup and sub-sampling run in Python under the GIL) and `corpus_file` (its workers read
//! the file in C++).
//!
//! Quality, computed here by the same code for every model (gensim's input and output vectors are read back from
//! `.safetensors` files):
//! - **held-out loss**: the skip-gram negative-sampling loss `−log σ(u_c·v'_w) − Σ_k log σ(−u_c·v'_{n_k})` per
//!   (context, centre) pair of the held-out sentences, full window, with the same pre-drawn noise words
//!   (`∝ count^0.75`) for every model;
//! - **word retrieval** (Liu et al. 2020, §3.1.1): MRR / P@1 of the MUSE `src-tgt` pairs in the joint space, no
//!   mapping, every target-language word a candidate ([`crossling::analysis::word_retrieval::mrr`]);
//! - **BLI after Procrustes**: an orthogonal map fitted on the in-vocabulary pairs of MUSE's train split (source
//!   ranks 0–5000), MRR / P@1 on its test split (5000–6500) against the same candidates;
//! - **neighbour overlap**: the share of the top-10 cosine neighbours (among the source-language words) of the
//!   1,000 most frequent source-language words that two models have in common — crossling against gensim beside
//!   gensim against itself in its other mode, i.e. the run-to-run variation.
//!
//! Pairs whose source and target are the same string are left out of both dictionary measures (in a joint
//! vocabulary they are one word, trivially retrieved).
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use crossling::analysis::{procrustes, word_retrieval};
use crossling::data::documents::{file_documents, file_lang, paragraphs_are_sentences};
use crossling::data::formats::muse::{layout_for, read as read_muse};
use crossling::data::manifest::Catalog;
use crossling::data::resolve::DataRoots;
use crossling::text::codeswitch::SplitMix64;
use crossling::text::evalsets::muse_split;
use crossling::text::segment::words;
use crossling::text::sentences::split_sentences;
use crossling::wordvec::sampling::NoiseSampler;
use crossling::wordvec::word2vec::{self, Arch, Word2VecConfig};
use crossling::wordvec::{Corpus, WordVectors};
use serde_json::{json, Value};
use tch::Tensor;

use super::common::{cpu_seconds, run_reference, script, tempfile_dir};

#[derive(Args)]
pub struct BenchWord2vecArgs {
    /// Languages trained jointly; retrieval goes from the first to the second.
    #[arg(long, default_value = "en,fr", value_delimiter = ',')]
    langs: Vec<String>,
    /// Tokens read per language (news sentences first, then novels).
    #[arg(long, default_value_t = 4_000_000)]
    tokens_per_lang: usize,
    /// skip_gram or cbow.
    #[arg(long, default_value = "skip_gram")]
    arch: String,
    #[arg(long, default_value_t = 100)]
    dim: usize,
    #[arg(long, default_value_t = 5)]
    window: usize,
    #[arg(long, default_value_t = 5)]
    negative: usize,
    #[arg(long, default_value_t = 1e-3)]
    sample: f64,
    #[arg(long, default_value_t = 5)]
    min_count: u64,
    #[arg(long, default_value_t = 3)]
    epochs: usize,
    #[arg(long, default_value_t = 0.025)]
    alpha: f64,
    #[arg(long, default_value_t = 0.0001)]
    min_alpha: f64,
    /// Share of the sentences held out for the held-out loss.
    #[arg(long, default_value_t = 0.01)]
    heldout: f64,
    /// gensim's input mode: iterable, corpus_file or both.
    #[arg(long, default_value = "both")]
    gensim: String,
    /// Time crossling alone.
    #[arg(long)]
    no_reference: bool,
    /// Training threads of both (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Python with gensim (default: $CROSSLING_PYTHON, else the project's .venv/bin/python).
    #[arg(long)]
    python: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep the temporary folder (corpus file, vectors) and print its path.
    #[arg(long)]
    keep: bool,
    #[arg(long)]
    json: bool,
}

/// Lower-cased words of a sentence by `text::segment::words`, applied token by token to tokens that are not all
/// punctuation (such tokens, e.g. `"…`, are kept whole: `words` fails on them when its leading and trailing
/// punctuation overlap).
fn sentence_words(sentence: &str, lang: &str) -> Vec<String> {
    if lang == "zh" {
        return words(sentence, lang);
    }
    let punct = |c: char| c.is_ascii_punctuation() || "«»“”„‘’—–…".contains(c);
    let mut out = Vec::new();
    for raw in sentence.split_whitespace() {
        if raw.chars().all(punct) {
            out.push(raw.to_lowercase());
        } else {
            out.extend(words(raw, lang).into_iter().map(|w| w.to_lowercase()));
        }
    }
    out
}

/// Sentences of one language: news (de-duplicated lines) first, then novels, until `cap` tokens.
fn read_lang(catalog: &Catalog, roots: &DataRoots, lang: &str, cap: usize) -> Result<(Vec<Vec<String>>, usize)> {
    let mut out = Vec::new();
    let (mut tokens, mut seen) = (0usize, HashSet::new());
    let sources = ["news-mono".to_string(), format!("eltec-{lang}")];
    'sources: for id in &sources {
        let Ok(m) = catalog.get(id) else { continue };
        for file in m.files.iter().filter(|f| f.is_data() && file_lang(m, f) == Some(lang)) {
            for doc in file_documents(m, file, roots)? {
                for para in doc?.paragraphs {
                    if paragraphs_are_sentences(m.format)
                        && !seen.insert(crossling::text::corpus::fnv1a(0, para.as_bytes()))
                    {
                        continue;
                    }
                    let sentences =
                        if paragraphs_are_sentences(m.format) { vec![para] } else { split_sentences(&para, lang) };
                    for s in sentences {
                        let w = sentence_words(&s, lang);
                        if w.is_empty() {
                            continue;
                        }
                        tokens += w.len();
                        out.push(w);
                        if tokens >= cap {
                            break 'sources;
                        }
                    }
                }
            }
        }
    }
    if out.is_empty() {
        bail!("no running text for '{lang}' in news-mono or eltec-{lang} (is CROSSLING_DATA set?)");
    }
    Ok((out, tokens))
}

/// Rows of `v` in the order of `words` (every word must be there).
fn rows_in_order(v: &WordVectors, words: &[String], who: &str) -> Result<Vec<f32>> {
    let mut out = Vec::with_capacity(words.len() * v.dim());
    for w in words {
        out.extend_from_slice(v.get(w).with_context(|| format!("{who}: no vector for '{w}'"))?);
    }
    Ok(out)
}

/// A model's input and output vectors in the corpus's vocabulary order, `[V, D]` each.
struct Model {
    name: String,
    input: Vec<f32>,
    output: Vec<f32>,
}

fn log_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// Mean negative-sampling loss per (context, centre) pair of `sentences` (see the module docs).
fn heldout_loss(m: &Model, dim: usize, sentences: &[Vec<u32>], window: usize, noise: &[u32], negative: usize) -> f64 {
    let row = |v: &[f32], i: u32| v[i as usize * dim..(i as usize + 1) * dim].to_vec();
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum::<f64>();
    let (mut loss, mut pairs, mut k) = (0f64, 0usize, 0usize);
    for s in sentences {
        for (i, &centre) in s.iter().enumerate() {
            let out = row(&m.output, centre);
            for (j, &context) in s.iter().enumerate().take((i + window + 1).min(s.len())).skip(i.saturating_sub(window))
            {
                if j == i {
                    continue;
                }
                let u = row(&m.input, context);
                loss -= log_sigmoid(dot(&u, &out));
                for _ in 0..negative {
                    let n = noise[k % noise.len()];
                    k += 1;
                    if n != centre {
                        loss -= log_sigmoid(-dot(&u, &m.output[n as usize * dim..(n as usize + 1) * dim]));
                    }
                }
                pairs += 1;
            }
        }
    }
    loss / pairs.max(1) as f64
}

/// Dictionary pairs as (source row, candidate row): source words of the first language, candidates of the second.
struct Retrieval {
    src_words: Vec<u32>,
    cand_words: Vec<u32>,
    /// All of MUSE `src-tgt`, and its train / test splits, as (source row, candidate row).
    all: Vec<(i64, i64)>,
    train: Vec<(i64, i64)>,
    test: Vec<(i64, i64)>,
}

fn unit_rows(t: &Tensor) -> Tensor {
    t / t.norm_scalaropt_dim(2, [1], true).clamp_min(1e-12)
}

fn gather(m: &Model, ids: &[u32], dim: usize) -> Tensor {
    let mut v = Vec::with_capacity(ids.len() * dim);
    for &i in ids {
        v.extend_from_slice(&m.input[i as usize * dim..(i as usize + 1) * dim]);
    }
    Tensor::from_slice(&v).view([ids.len() as i64, dim as i64])
}

/// The `k` nearest neighbours (by cosine, itself excluded) of the first `n` words of `pool` among all of `pool`.
/// # Shapes
/// → `[n, k]` indices into `pool`
fn neighbours(m: &Model, pool: &[u32], n: usize, k: i64, dim: usize) -> Result<Vec<Vec<i64>>> {
    let p = unit_rows(&gather(m, pool, dim));
    let n = n.min(pool.len()) as i64;
    let sims = p.narrow(0, 0, n).mm(&p.tr()); // [n, |pool|]
    let diag = Tensor::arange(n, (tch::Kind::Int64, tch::Device::Cpu));
    let sims = sims.index_put(&[Some(diag.shallow_clone()), Some(diag)], &Tensor::from(f32::NEG_INFINITY), false);
    let (_, idx) = sims.topk(k, 1, true, true);
    Ok(Vec::<Vec<i64>>::try_from(idx)?)
}

/// Mean share of top-k neighbours that two models have in common.
fn overlap(a: &[Vec<i64>], b: &[Vec<i64>]) -> f64 {
    let per_word = a.iter().zip(b).map(|(x, y)| {
        let y: HashSet<&i64> = y.iter().collect();
        x.iter().filter(|v| y.contains(v)).count() as f64 / x.len().max(1) as f64
    });
    per_word.sum::<f64>() / a.len().max(1) as f64
}

/// Joint-space retrieval and Procrustes BLI of one model.
fn retrieval(m: &Model, r: &Retrieval, dim: usize) -> Result<Value> {
    let (src, cand) = (gather(m, &r.src_words, dim), gather(m, &r.cand_words, dim));
    let joint = word_retrieval::mrr(&src, &cand, &r.all)?;
    // Orthogonal Procrustes on unit vectors (the project's `analysis::procrustes`).
    let (su, cu) = (unit_rows(&src), unit_rows(&cand));
    let (x, y) = procrustes::paired_rows(&su, &cu, &r.train)?;
    let mapped = procrustes::apply_map(&su, &procrustes::procrustes(&x, &y)?)?;
    let bli = word_retrieval::mrr(&mapped, &cu, &r.test)?;
    Ok(json!({
        "joint_mrr": joint.mrr, "joint_p_at_1": joint.p_at_1, "joint_pairs": joint.pairs,
        "procrustes_mrr": bli.mrr, "procrustes_p_at_1": bli.p_at_1, "procrustes_train_pairs": r.train.len(),
        "procrustes_test_pairs": bli.pairs, "candidates": joint.candidates,
    }))
}

/// Most frequent source-language words whose neighbour lists are compared, and the neighbours per word.
const NN_WORDS: usize = 1000;
const NN_K: i64 = 10;

/// The training sentences as a [`Corpus`], which of its words occur in each language, and the held-out sentences.
struct Data {
    corpus: Corpus,
    /// `in_lang[l][id]`: word `id` occurs in a training sentence of language `l`.
    in_lang: [Vec<bool>; 2],
    /// Held-out sentences as word ids (words outside the vocabulary dropped; at least two words each).
    held: Vec<Vec<u32>>,
    /// Tokens read per language.
    lang_tokens: Vec<usize>,
    read_seconds: f64,
}

/// Step 1: sentences of both languages, shuffled with the seed, every `1 / heldout`-th held out.
fn read_data(a: &BenchWord2vecArgs, catalog: &Catalog, roots: &DataRoots, say: &dyn Fn(String)) -> Result<Data> {
    let t0 = Instant::now();
    let mut all: Vec<(usize, Vec<String>)> = Vec::new();
    let mut lang_tokens = Vec::new();
    for (l, lang) in a.langs.iter().enumerate() {
        say(format!("reading {} tokens of '{lang}' …", a.tokens_per_lang));
        let (s, n) = read_lang(catalog, roots, lang, a.tokens_per_lang)?;
        lang_tokens.push(n);
        all.extend(s.into_iter().map(|s| (l, s)));
    }
    let mut rng = SplitMix64::new(a.seed);
    for i in (1..all.len()).rev() {
        all.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let every = if a.heldout > 0.0 { (1.0 / a.heldout).round() as usize } else { usize::MAX };
    let (mut train_text, mut held_text) = (Vec::new(), Vec::new());
    for (i, s) in all.into_iter().enumerate() {
        if every != usize::MAX && i % every == every - 1 {
            held_text.push(s.1);
        } else {
            train_text.push(s);
        }
    }
    let corpus = Corpus::from_sentences(train_text.iter().map(|(_, s)| s.iter()), a.min_count)?;
    let read_seconds = t0.elapsed().as_secs_f64();
    let mut in_lang = [vec![false; corpus.vocab.len()], vec![false; corpus.vocab.len()]];
    for (l, s) in &train_text {
        for w in s {
            if let Some(id) = corpus.vocab.id(w) {
                in_lang[*l][id as usize] = true;
            }
        }
    }
    let held = held_text
        .iter()
        .map(|s| s.iter().filter_map(|w| corpus.vocab.id(w)).collect::<Vec<_>>())
        .filter(|s| s.len() > 1)
        .collect();
    Ok(Data { corpus, in_lang, held, lang_tokens, read_seconds })
}

/// The corpus as gensim reads it: one sentence of space-separated words per line.
fn write_corpus(corpus: &Corpus, path: &std::path::Path) -> Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for s in corpus.sentences() {
        let line: Vec<&str> = s.iter().map(|&i| corpus.vocab.word(i)).collect();
        writeln!(f, "{}", line.join(" "))?;
    }
    f.flush()?;
    Ok(())
}

/// Step 2: crossling's word2vec; its vectors and its timing report.
fn run_crossling(a: &BenchWord2vecArgs, corpus: &Corpus, arch: Arch, threads: usize) -> Result<(Model, Value)> {
    let cfg = Word2VecConfig {
        arch,
        dim: a.dim,
        window: a.window,
        negative: a.negative,
        sample: a.sample,
        epochs: a.epochs,
        alpha: a.alpha,
        min_alpha: a.min_alpha,
        threads,
        seed: a.seed,
    };
    let cpu0 = cpu_seconds();
    let ours = word2vec::train_model(corpus, &cfg, !a.json)?;
    let cpu = cpu_seconds() - cpu0;
    let r = &ours.report;
    let model = Model { name: "crossling".into(), input: ours.input().to_dense(), output: ours.output().to_dense() };
    let side = json!({
        "name": "crossling", "seconds": r.seconds, "cpu_seconds": cpu, "raw_words": r.raw_words,
        "effective_words": r.effective_words, "words_per_s": r.words_per_s,
        "effective_words_per_s": r.effective_words_per_s, "epoch_losses": r.epoch_losses,
    });
    Ok((model, side))
}

/// Step 3: gensim in input mode `mode` on the corpus file; its vectors (in the corpus's vocabulary order) and its
/// report, with the ratio of its seconds to `our_seconds`.
#[allow(clippy::too_many_arguments)]
fn run_gensim(
    a: &BenchWord2vecArgs,
    corpus: &Corpus,
    corpus_path: &std::path::Path,
    dir: &std::path::Path,
    mode: &str,
    arch: Arch,
    threads: usize,
    our_seconds: f64,
) -> Result<(Model, Value)> {
    let python = crossling::paths::python(a.python.as_deref());
    let prefix = dir.join(format!("gensim-{mode}"));
    let mut args: Vec<String> = vec![corpus_path.display().to_string(), prefix.display().to_string()];
    for (flag, v) in [
        ("--mode", mode.to_string()),
        ("--sg", u8::from(arch == Arch::SkipGram).to_string()),
        ("--dim", a.dim.to_string()),
        ("--window", a.window.to_string()),
        ("--negative", a.negative.to_string()),
        ("--sample", a.sample.to_string()),
        ("--min-count", a.min_count.to_string()),
        ("--epochs", a.epochs.to_string()),
        ("--alpha", a.alpha.to_string()),
        ("--min-alpha", a.min_alpha.to_string()),
        ("--workers", threads.to_string()),
        ("--seed", a.seed.to_string()),
    ] {
        args.push(flag.into());
        args.push(v);
    }
    let mut rep = run_reference(&python, &script("bench_word2vec.py"), &args)?;
    let input = WordVectors::load(&prefix.with_extension("in.safetensors"))?;
    let output = WordVectors::load(&prefix.with_extension("out.safetensors"))?;
    if input.len() != corpus.vocab.len() {
        bail!("gensim kept {} words, crossling {}: the vocabularies differ", input.len(), corpus.vocab.len());
    }
    let name = format!("gensim {mode}");
    let vocab_words = corpus.vocab.words();
    let model = Model {
        name: name.clone(),
        input: rows_in_order(&input, vocab_words, &name)?,
        output: rows_in_order(&output, vocab_words, &name)?,
    };
    let secs = rep["seconds"].as_f64().context("reference JSON lacks seconds")?;
    rep["name"] = json!(name);
    rep["ratio"] = json!(secs / our_seconds);
    Ok((model, rep))
}

/// The MUSE pairs of `--langs` as rows of the source words (of the first language) and candidates (of the second).
fn muse_retrieval(a: &BenchWord2vecArgs, catalog: &Catalog, roots: &DataRoots, data: &Data) -> Result<Retrieval> {
    let corpus = &data.corpus;
    let pair = format!("{}-{}", a.langs[0], a.langs[1]);
    let (split, _) = muse_split(catalog, roots, &pair)?;
    let muse_file = catalog
        .get("muse")?
        .files
        .iter()
        .find(|f| f.path == format!("dict/muse/{pair}.dict"))
        .context("no MUSE file")?
        .clone();
    let muse_path = roots.resolve(&muse_file)?;
    let full = read_muse(&muse_path, layout_for(&muse_path))?;
    let in_lang = |l: usize| (0..corpus.vocab.len() as u32).filter(|&i| data.in_lang[l][i as usize]).collect();
    let (src_words, cand_words): (Vec<u32>, Vec<u32>) = (in_lang(0), in_lang(1));
    let src_row: HashMap<u32, i64> = src_words.iter().enumerate().map(|(r, &i)| (i, r as i64)).collect();
    let cand_row: HashMap<u32, i64> = cand_words.iter().enumerate().map(|(r, &i)| (i, r as i64)).collect();
    let rows = |pairs: &[crossling::data::formats::muse::DictPair]| -> Vec<(i64, i64)> {
        let mut seen = HashSet::new();
        pairs
            .iter()
            .filter(|p| p.src != p.tgt)
            .filter_map(|p| {
                let s = src_row.get(&corpus.vocab.id(&p.src)?)?;
                let t = cand_row.get(&corpus.vocab.id(&p.tgt)?)?;
                seen.insert((*s, *t)).then_some((*s, *t))
            })
            .collect()
    };
    let (all, train, test) = (rows(&full), rows(&split.train), rows(&split.test));
    if train.len() < a.dim || test.is_empty() {
        bail!("too few MUSE pairs in the vocabulary ({} train, {} test): read more tokens", train.len(), test.len());
    }
    Ok(Retrieval { src_words, cand_words, all, train, test })
}

/// Step 4: the quality of every model by the same code, and the neighbour overlap of every two models.
fn quality(a: &BenchWord2vecArgs, data: &Data, ret: &Retrieval, models: &[Model]) -> Result<(Vec<Value>, Vec<Value>)> {
    let noise_sampler = NoiseSampler::new(data.corpus.vocab.counts(), 0.75)?;
    let mut nrng = crossling::wordvec::sampling::Rng::new(a.seed, 77);
    let noise: Vec<u32> = (0..1 << 20).map(|_| noise_sampler.sample(nrng.next_u64())).collect();
    let mut quality = Vec::new();
    let mut nn = Vec::new();
    for m in models {
        let loss = heldout_loss(m, a.dim, &data.held, a.window, &noise, a.negative);
        let mut q = retrieval(m, ret, a.dim)?;
        q["name"] = json!(m.name);
        q["heldout_loss"] = json!(loss);
        quality.push(q);
        nn.push(neighbours(m, &ret.src_words, NN_WORDS, NN_K, a.dim)?);
    }
    let mut overlaps = Vec::new();
    for i in 0..models.len() {
        for j in i + 1..models.len() {
            overlaps.push(json!({ "a": models[i].name, "b": models[j].name, "overlap": overlap(&nn[i], &nn[j]) }));
        }
    }
    Ok((quality, overlaps))
}

pub fn run(a: BenchWord2vecArgs) -> Result<()> {
    let arch = match a.arch.as_str() {
        "skip_gram" | "sg" => Arch::SkipGram,
        "cbow" => Arch::Cbow,
        other => bail!("unknown --arch '{other}': expected skip_gram or cbow"),
    };
    let modes: Vec<&str> = match a.gensim.as_str() {
        "both" => vec!["iterable", "corpus_file"],
        "iterable" => vec!["iterable"],
        "corpus_file" => vec!["corpus_file"],
        other => bail!("unknown --gensim '{other}': expected iterable, corpus_file or both"),
    };
    if a.langs.len() != 2 {
        bail!("--langs takes two languages (source,target), got {:?}", a.langs);
    }
    if !(0.0..0.5).contains(&a.heldout) {
        bail!("--heldout must be in [0, 0.5)");
    }
    let threads = a.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let say = |m: String| {
        if !a.json {
            eprintln!("{m}");
        }
    };
    let catalog = Catalog::load_default()?;
    let roots = DataRoots::from_env();
    let data = read_data(&a, &catalog, &roots, &say)?;
    let corpus = &data.corpus;
    let held_tokens: usize = data.held.iter().map(Vec::len).sum();
    let dir = tempfile_dir()?;
    let corpus_path = dir.join("train.txt");
    write_corpus(corpus, &corpus_path)?;
    say(format!(
        "corpus: {} sentences, {} tokens, vocabulary {} (min count {}); held out {} sentences ({held_tokens} tokens); {:.1} s",
        corpus.n_sentences(),
        corpus.n_tokens(),
        corpus.vocab.len(),
        a.min_count,
        data.held.len(),
        data.read_seconds
    ));

    say(format!("crossling: training ({threads} threads) …"));
    let (model, side) = run_crossling(&a, corpus, arch, threads)?;
    let our_seconds = side["seconds"].as_f64().unwrap_or(f64::NAN);
    let (mut models, mut sides) = (vec![model], vec![side]);
    if !a.no_reference {
        for mode in &modes {
            say(format!("gensim ({mode}): training ({threads} threads) …"));
            let (model, side) = run_gensim(&a, corpus, &corpus_path, &dir, mode, arch, threads, our_seconds)?;
            models.push(model);
            sides.push(side);
        }
    }

    say("quality: held-out loss, word retrieval, Procrustes BLI …".into());
    let ret = muse_retrieval(&a, &catalog, &roots, &data)?;
    let (quality, overlaps) = quality(&a, &data, &ret, &models)?;
    let report = json!({
        "bench": "word2vec", "arch": a.arch, "dim": a.dim, "window": a.window, "negative": a.negative,
        "sample": a.sample, "min_count": a.min_count, "epochs": a.epochs, "alpha": a.alpha, "min_alpha": a.min_alpha,
        "threads": threads, "seed": a.seed, "langs": a.langs, "tokens_read": data.lang_tokens,
        "sentences": corpus.n_sentences(), "tokens": corpus.n_tokens(), "vocab": corpus.vocab.len(),
        "heldout_sentences": data.held.len(), "heldout_tokens": held_tokens, "read_seconds": data.read_seconds,
        "runs": sides, "quality": quality, "neighbour_overlap": overlaps,
        "neighbour_overlap_words": NN_WORDS.min(ret.src_words.len()), "neighbour_overlap_k": NN_K,
    });
    if a.keep {
        say(format!("kept {}", dir.display()));
    } else {
        std::fs::remove_dir_all(&dir).ok();
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    Ok(())
}

fn print_text(r: &Value) {
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    println!(
        "word2vec {}: dim {}, window {}, negative {}, sample {}, {} epochs, alpha {} → {}, {} threads",
        r["arch"].as_str().unwrap_or("?"),
        r["dim"],
        r["window"],
        r["negative"],
        r["sample"],
        r["epochs"],
        r["alpha"],
        r["min_alpha"],
        r["threads"]
    );
    println!(
        "corpus: {} sentences, {} tokens ({} per language read), vocabulary {} (min count {}); held out {} sentences, {} tokens",
        r["sentences"], r["tokens"], r["tokens_read"], r["vocab"], r["min_count"], r["heldout_sentences"], r["heldout_tokens"]
    );
    println!("training (timed: epochs only; words = raw corpus words, epochs × tokens):");
    for s in r["runs"].as_array().into_iter().flatten() {
        println!(
            "  {:<20} {:>7.2} s  {:>10.0} words/s  ({:>9.0} effective/s)  {:>6.1} s CPU{}",
            s["name"].as_str().unwrap_or("?"),
            f(&s["seconds"]),
            f(&s["words_per_s"]),
            f(&s["effective_words_per_s"]),
            f(&s["cpu_seconds"]),
            s["ratio"].as_f64().map(|x| format!("   crossling is {x:.2}× as fast")).unwrap_or_default()
        );
    }
    println!("quality (same evaluation code for every model):");
    println!(
        "  {:<20} {:>13} {:>17} {:>10} {:>21} {:>10}",
        "", "held-out loss", "joint MRR", "P@1", "Procrustes MRR", "P@1"
    );
    for q in r["quality"].as_array().into_iter().flatten() {
        println!(
            "  {:<20} {:>13.4} {:>17.4} {:>9.1}% {:>21.4} {:>9.1}%",
            q["name"].as_str().unwrap_or("?"),
            f(&q["heldout_loss"]),
            f(&q["joint_mrr"]),
            100.0 * f(&q["joint_p_at_1"]),
            f(&q["procrustes_mrr"]),
            100.0 * f(&q["procrustes_p_at_1"])
        );
    }
    if let Some(q) = r["quality"].as_array().and_then(|a| a.first()) {
        println!(
            "  (joint: {} MUSE pairs, {} candidates; Procrustes: fitted on {} train pairs, scored on {} test pairs)",
            q["joint_pairs"], q["candidates"], q["procrustes_train_pairs"], q["procrustes_test_pairs"]
        );
    }
    for o in r["neighbour_overlap"].as_array().into_iter().flatten() {
        println!(
            "  top-{} neighbours of the {} most frequent source words shared by {} and {}: {:.1}%",
            r["neighbour_overlap_k"],
            r["neighbour_overlap_words"],
            o["a"].as_str().unwrap_or("?"),
            o["b"].as_str().unwrap_or("?"),
            100.0 * f(&o["overlap"])
        );
    }
}
