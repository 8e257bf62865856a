//! word2vec: skip-gram and CBOW with negative sampling (Mikolov, Chen, Corrado & Dean 2013, "Efficient Estimation
//! of Word Representations in Vector Space", ICLR workshop; Mikolov, Sutskever, Chen, Corrado & Dean 2013,
//! "Distributed Representations of Words and Phrases and their Compositionality", NeurIPS), following the
//! original `word2vec.c` — the static baseline of Liu et al. (2020, §3) trained on the MLM's own data.
//!
//! For every kept token `w_t` of a sentence (after frequent-word sub-sampling, so the window spans the dropped
//! tokens) a reduced window `b` is drawn uniformly from `[1, window]`, and
//! - **skip-gram** trains each context word's input vector `v_{w_{t+j}}` (`0 < |j| ≤ b`) to predict `w_t`:
//!   `−log σ(v'_{w_t}·v_{w_{t+j}}) − Σ_{k=1..negative} log σ(−v'_{n_k}·v_{w_{t+j}})` with `n_k ~ P_n ∝ c^0.75`;
//! - **CBOW** trains the mean `h` of the context input vectors to predict `w_t` with the same loss, and adds the
//!   gradient of `h` to every context word's input vector (as `word2vec.c` and gensim's `cbow_mean=1` do).
//!
//! Plain SGD with the learning rate decaying linearly from `alpha` to `min_alpha` over all epochs' tokens; input
//! vectors start uniform in `±0.5 / dim` (`word2vec.c`; gensim 4 uses `±1 / dim`), output vectors at zero. The
//! formulas of sub-sampling, the noise distribution and the sigmoid table are in [`super::sampling`]. One deviation
//! from `word2vec.c`: the noise words are drawn exactly from `c^0.75` (alias table) rather than from a rounded
//! 10⁸-entry table.
//!
//! **Threads.** With `threads = 1` training is deterministic: the same corpus, config and seed give bit-identical
//! vectors (on any x86-64 CPU, with or without AVX2). With `threads > 1` the corpus is cut into contiguous chunks,
//! one per thread, each with its own seeded generator, and the threads update the shared parameters without locks
//! (Hogwild, as `word2vec.c` and gensim do); the result then depends on thread timing and is **not** reproducible
//! bit for bit.
use serde::{Deserialize, Serialize};

use super::corpus::Corpus;
use super::sampling::{
    axpy, has_avx2, train_epochs, Matrix, NegativeSampling, NoiseSampler, Schedule, Shared, SigmoidTable, TrainReport,
    Worker,
};
use super::vectors::WordVectors;
use crate::error::{Error, Result};

/// The word2vec architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// Context words predict the centre word, pair by pair.
    #[default]
    SkipGram,
    /// The mean of the context words predicts the centre word.
    Cbow,
}

/// word2vec hyper-parameters; the defaults are those of gensim 4 (`word2vec.c` differs in `alpha` for CBOW,
/// 0.05). `min_count` is the corpus's ([`Corpus::from_sentences`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Word2VecConfig {
    /// `skip_gram` or `cbow`.
    pub arch: Arch,
    /// Vector dimension.
    pub dim: usize,
    /// Largest distance between the centre and a context word (the window drawn per token is in `[1, window]`).
    pub window: usize,
    /// Noise words per positive pair.
    pub negative: usize,
    /// Sub-sampling threshold (0: no sub-sampling).
    pub sample: f64,
    /// Passes over the corpus.
    pub epochs: usize,
    /// Initial learning rate.
    pub alpha: f64,
    /// Final learning rate (reached after the last token).
    pub min_alpha: f64,
    /// Training threads; more than 1 is Hogwild and not deterministic.
    pub threads: usize,
    pub seed: u64,
}

impl Default for Word2VecConfig {
    fn default() -> Self {
        Word2VecConfig {
            arch: Arch::SkipGram,
            dim: 100,
            window: 5,
            negative: 5,
            sample: 1e-3,
            epochs: 5,
            alpha: 0.025,
            min_alpha: 0.0001,
            threads: 1,
            seed: 1,
        }
    }
}

impl Word2VecConfig {
    /// Rejects values the trainer cannot use.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Invalid(format!("word2vec config: {what}")));
        if self.dim == 0 || self.window == 0 || self.epochs == 0 || self.threads == 0 {
            return bad("dim, window, epochs and threads must be at least 1");
        }
        if self.negative == 0 {
            return bad("negative must be at least 1 (only negative sampling is implemented)");
        }
        if [self.sample, self.alpha, self.min_alpha].iter().any(|v| v.is_nan() || *v < 0.0) {
            return bad("sample, alpha and min_alpha must be non-negative numbers");
        }
        Ok(())
    }

    pub(crate) fn schedule(&self) -> Schedule {
        Schedule {
            epochs: self.epochs,
            threads: self.threads,
            seed: self.seed,
            sample: self.sample,
            alpha: self.alpha,
            min_alpha: self.min_alpha,
        }
    }
}

/// A trained word2vec model: input vectors (the embeddings) and output vectors (`syn1neg`) of the corpus's
/// vocabulary, with the training report.
#[derive(Debug, Clone)]
pub struct Word2Vec {
    pub config: Word2VecConfig,
    words: Vec<String>,
    input: Matrix,
    output: Matrix,
    pub report: TrainReport,
    corpus_tokens: usize,
}

impl Word2Vec {
    /// The vocabulary, in the corpus's order (descending count).
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Input vectors `[vocab, dim]` (the word embeddings).
    pub fn input(&self) -> &Matrix {
        &self.input
    }

    /// Output vectors `[vocab, dim]` (`syn1neg`).
    pub fn output(&self) -> &Matrix {
        &self.output
    }

    fn vectors_of(&self, m: &Matrix, which: &str) -> Result<WordVectors> {
        let mut v = WordVectors::new(self.words.clone(), m.dim(), m.to_dense())?;
        v.metadata.insert("kind".into(), "word2vec".into());
        v.metadata.insert("vectors".into(), which.into());
        v.metadata.insert("config".into(), serde_json::to_string(&self.config).unwrap_or_default());
        v.metadata.insert("corpus_tokens".into(), self.corpus_tokens.to_string());
        v.metadata.insert("report".into(), serde_json::to_string(&self.report).unwrap_or_default());
        Ok(v)
    }

    /// The word embeddings (input vectors) with provenance metadata (kind, config, corpus tokens, report).
    pub fn to_vectors(&self) -> Result<WordVectors> {
        self.vectors_of(&self.input, "input")
    }

    /// The output vectors (`syn1neg`), e.g. for a held-out loss.
    pub fn output_vectors(&self) -> Result<WordVectors> {
        self.vectors_of(&self.output, "output")
    }
}

/// Trains word2vec on `corpus` and returns the word embeddings (input vectors) and the training report.
/// `progress` draws a bar.
pub fn train(corpus: &Corpus, cfg: &Word2VecConfig, progress: bool) -> Result<(WordVectors, TrainReport)> {
    let model = train_model(corpus, cfg, progress)?;
    Ok((model.to_vectors()?, model.report))
}

/// Trains word2vec on `corpus`; the model keeps both matrices and the report (words/s, loss by epoch).
pub fn train_model(corpus: &Corpus, cfg: &Word2VecConfig, progress: bool) -> Result<Word2Vec> {
    train_with(corpus, cfg, progress, has_avx2())
}

/// [`train_model`] with the AVX2 build of the kernel on or off (`avx2` only where the CPU has it).
fn train_with(corpus: &Corpus, cfg: &Word2VecConfig, progress: bool, avx2: bool) -> Result<Word2Vec> {
    cfg.validate()?;
    let vocab = corpus.vocab.len();
    let mut input = Matrix::uniform(vocab, cfg.dim, 0.5 / cfg.dim as f32, cfg.seed, u64::MAX);
    let mut output = Matrix::zeros(vocab, cfg.dim);
    let noise = NoiseSampler::new(corpus.vocab.counts(), 0.75)?;
    let sigmoid = SigmoidTable::new();
    let k = Kernel {
        syn0: input.shared(),
        syn1: output.shared(),
        window: cfg.window,
        ns: NegativeSampling { negative: cfg.negative, noise: &noise, sigmoid: &sigmoid },
        cbow: cfg.arch == Arch::Cbow,
        avx2: avx2 && has_avx2(),
    };
    let stride = input.stride();
    let name = match cfg.arch {
        Arch::SkipGram => "word2vec skip-gram",
        Arch::Cbow => "word2vec cbow",
    };
    let report = train_epochs(
        corpus,
        &cfg.schedule(),
        name,
        progress,
        || (vec![0f32; stride], vec![0f32; stride]),
        |sentence, w, (neu1, neu1e)| k.sentence(sentence, w, neu1, neu1e),
    );
    Ok(Word2Vec {
        config: cfg.clone(),
        words: corpus.vocab.words().to_vec(),
        input,
        output,
        report,
        corpus_tokens: corpus.n_tokens(),
    })
}

/// The sentence kernel: both matrices as Hogwild handles and the settings of the hot loop.
struct Kernel<'a> {
    syn0: Shared,
    syn1: Shared,
    window: usize,
    ns: NegativeSampling<'a>,
    cbow: bool,
    avx2: bool,
}

impl Kernel<'_> {
    fn sentence(&self, s: &[u32], w: &mut Worker, neu1: &mut [f32], neu1e: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2.
            return unsafe { self.sentence_avx2(s, w, neu1, neu1e) };
        }
        self.sentence_generic::<false>(s, w, neu1, neu1e)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn sentence_avx2(&self, s: &[u32], w: &mut Worker, neu1: &mut [f32], neu1e: &mut [f32]) {
        self.sentence_generic::<true>(s, w, neu1, neu1e)
    }

    #[inline(always)]
    fn sentence_generic<const AVX2: bool>(&self, s: &[u32], w: &mut Worker, neu1: &mut [f32], neu1e: &mut [f32]) {
        if self.cbow {
            self.cbow::<AVX2>(s, w, neu1, neu1e)
        } else {
            self.skip_gram::<AVX2>(s, w, neu1e)
        }
    }

    #[inline(always)]
    fn skip_gram<const AVX2: bool>(&self, s: &[u32], w: &mut Worker, neu1e: &mut [f32]) {
        let mut loss = 0f32;
        for (i, &centre) in s.iter().enumerate() {
            let b = self.window - w.rng.below(self.window); // in [1, window]
            let (lo, hi) = (i.saturating_sub(b), (i + b + 1).min(s.len()));
            for (j, &context) in s.iter().enumerate().take(hi).skip(lo) {
                if j == i {
                    continue;
                }
                // SAFETY: ids are < vocab = rows; `input` is a row of syn0, the step only touches rows of syn1.
                unsafe {
                    let input = self.syn0.row(context as usize);
                    neu1e.fill(0.0);
                    loss += self.ns.step::<AVX2>(input, neu1e, self.syn1, centre, w.alpha, &mut w.rng);
                    axpy(1.0, neu1e, input);
                }
                w.pairs += 1;
            }
        }
        w.loss += loss as f64;
    }

    #[inline(always)]
    fn cbow<const AVX2: bool>(&self, s: &[u32], w: &mut Worker, neu1: &mut [f32], neu1e: &mut [f32]) {
        let mut loss = 0f32;
        for (i, &centre) in s.iter().enumerate() {
            let b = self.window - w.rng.below(self.window);
            let (lo, hi) = (i.saturating_sub(b), (i + b + 1).min(s.len()));
            let cw = hi - lo - 1;
            if cw == 0 {
                continue;
            }
            neu1.fill(0.0);
            for (j, &context) in s.iter().enumerate().take(hi).skip(lo) {
                if j != i {
                    // SAFETY: ids are rows of syn0; the row is only read here.
                    axpy(1.0, unsafe { self.syn0.row(context as usize) }, neu1);
                }
            }
            let inv = 1.0 / cw as f32;
            neu1.iter_mut().for_each(|v| *v *= inv);
            neu1e.fill(0.0);
            // SAFETY: neu1 and neu1e are scratch rows of the matrices' stride, not rows of syn1.
            loss += unsafe { self.ns.step::<AVX2>(neu1, neu1e, self.syn1, centre, w.alpha, &mut w.rng) };
            w.pairs += 1;
            for (j, &context) in s.iter().enumerate().take(hi).skip(lo) {
                if j != i {
                    // SAFETY: as above.
                    axpy(1.0, neu1e, unsafe { self.syn0.row(context as usize) });
                }
            }
        }
        w.loss += loss as f64;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::text::codeswitch::SplitMix64;

    /// Sentences drawn from `groups` disjoint topic groups of `per_group` words: every sentence uses the words of
    /// one group only, so words co-occur only within their group (word `gG_k`).
    pub(crate) fn topic_corpus(groups: usize, per_group: usize, sentences: usize, len: usize, seed: u64) -> Corpus {
        let mut rng = SplitMix64::new(seed);
        let text: Vec<Vec<String>> = (0..sentences)
            .map(|_| {
                let g = rng.below(groups as u64);
                (0..len).map(|_| format!("g{g}_{}", rng.below(per_group as u64))).collect()
            })
            .collect();
        Corpus::from_sentences(text.iter().map(|s| s.iter()), 1).unwrap()
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let d: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let n = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        d / (n(a) * n(b)).max(1e-12)
    }

    fn group(word: &str) -> &str {
        word.split('_').next().unwrap_or("")
    }

    /// Share of words whose `k` nearest neighbours by cosine are all in their own topic group.
    pub(crate) fn neighbours_in_group(v: &WordVectors, k: usize) -> f64 {
        let mut good = 0;
        for i in 0..v.len() {
            let mut sims: Vec<(f32, usize)> =
                (0..v.len()).filter(|&j| j != i).map(|j| (cosine(v.row(i), v.row(j)), j)).collect();
            sims.sort_by(|a, b| b.0.total_cmp(&a.0));
            if sims.iter().take(k).all(|&(_, j)| group(&v.words()[j]) == group(&v.words()[i])) {
                good += 1;
            }
        }
        good as f64 / v.len() as f64
    }

    fn small(arch: Arch) -> Word2VecConfig {
        Word2VecConfig { arch, dim: 16, window: 3, negative: 5, sample: 0.0, epochs: 3, ..Default::default() }
    }

    #[test]
    fn skip_gram_and_cbow_recover_planted_neighbours() {
        let corpus = topic_corpus(4, 12, 1500, 10, 3);
        for arch in [Arch::SkipGram, Arch::Cbow] {
            let cfg = Word2VecConfig { alpha: 0.05, ..small(arch) };
            let model = train_model(&corpus, &cfg, false).unwrap();
            let share = neighbours_in_group(&model.to_vectors().unwrap(), 5);
            assert!(share > 0.95, "{arch:?}: {share} of the words have their 5 neighbours in their group");
            let losses = &model.report.epoch_losses;
            assert!(losses[2] < losses[0], "{arch:?}: loss {losses:?} does not fall");
            assert_eq!(model.report.raw_words, 3 * 15_000);
            // Without learning nothing is recovered: the test can fail.
            let (frozen, _) = train(&corpus, &Word2VecConfig { alpha: 0.0, min_alpha: 0.0, ..cfg }, false).unwrap();
            let share = neighbours_in_group(&frozen, 5);
            assert!(share < 0.2, "{arch:?} with alpha 0: {share}");
        }
    }

    #[test]
    fn one_thread_is_deterministic_and_the_seed_matters() {
        let corpus = topic_corpus(3, 10, 300, 8, 5);
        for arch in [Arch::SkipGram, Arch::Cbow] {
            let cfg = Word2VecConfig { sample: 1e-2, ..small(arch) };
            let (a, _) = train(&corpus, &cfg, false).unwrap();
            let (b, _) = train(&corpus, &cfg, false).unwrap();
            assert_eq!(a.data(), b.data(), "{arch:?}");
            let (c, _) = train(&corpus, &Word2VecConfig { seed: 2, ..cfg.clone() }, false).unwrap();
            assert_ne!(a.data(), c.data(), "{arch:?}");
            // The generic and the AVX2 build of the kernel agree bit for bit.
            let generic = train_with(&corpus, &cfg, false, false).unwrap();
            assert_eq!(generic.to_vectors().unwrap().data(), a.data(), "{arch:?}");
        }
    }

    #[test]
    fn hogwild_threads_train_too() {
        let corpus = topic_corpus(4, 12, 1500, 10, 9);
        let cfg = Word2VecConfig { alpha: 0.05, threads: 2, ..small(Arch::SkipGram) };
        let model = train_model(&corpus, &cfg, false).unwrap();
        assert_eq!(model.report.threads, 2);
        assert_eq!(model.report.raw_words, 3 * 15_000);
        let share = neighbours_in_group(&model.to_vectors().unwrap(), 5);
        assert!(share > 0.95, "{share}");
    }

    #[test]
    fn config_is_strict_and_validated() {
        let cfg: Word2VecConfig = serde_json::from_str(r#"{"arch": "cbow", "dim": 8}"#).unwrap();
        assert_eq!((cfg.arch, cfg.dim, cfg.window), (Arch::Cbow, 8, 5));
        assert!(serde_json::from_str::<Word2VecConfig>(r#"{"dimension": 8}"#).is_err());
        assert!(serde_json::from_str::<Word2VecConfig>(r#"{"arch": "skipgram"}"#).is_err());
        let corpus = topic_corpus(2, 3, 10, 4, 1);
        assert!(train(&corpus, &Word2VecConfig { dim: 0, ..Default::default() }, false).is_err());
        assert!(train(&corpus, &Word2VecConfig { negative: 0, ..Default::default() }, false).is_err());
        assert!(train(&corpus, &Word2VecConfig { alpha: f64::NAN, ..Default::default() }, false).is_err());
    }
}
