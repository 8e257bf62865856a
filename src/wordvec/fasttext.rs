//! fastText-style skip-gram with character n-grams (Bojanowski, Grave, Joulin & Mikolov 2017, "Enriching Word
//! Vectors with Subword Information", TACL), following fastText's `skipgram` model — the static baseline of Wu,
//! Conneau et al. (2020, Figure 4a).
//!
//! A word `w` is represented by its own input row and the rows of its character n-grams: the n-grams of `<w>`
//! with `min_n ≤ n ≤ max_n` characters (UTF-8 characters, as fastText counts them; `<w>` itself is one of them when
//! short enough), each hashed with fastText's 32-bit FNV-1a [`hash`] into one of `bucket` rows (row
//! `vocab + hash % bucket`; collisions share a row). Its input vector is the mean of those rows,
//! `u_w = (v_w + Σ_{g∈G(w)} z_g) / (1 + |G(w)|)`. For every kept token `w_t` and context word `w_c` within a
//! window drawn uniformly from `[1, window]`, the loss is
//! `−log σ(v'_{w_c}·u_{w_t}) − Σ_{k=1..negative} log σ(−v'_{n_k}·u_{w_t})`; the gradient of `u` is added in
//! full to each of the word's rows (fastText's `Model::update` for unsupervised models). `u` is recomputed for
//! every context word, as fastText does, so updates from one pair are seen by the next.
//!
//! As in fastText: input rows start uniform in `±1 / dim`, output rows at zero; noise words are drawn `∝ c^0.5`;
//! sub-sampling keeps a token with probability `√(t/f) + t/f` (the word2vec formula, see [`super::sampling`]);
//! the learning rate decays linearly to `min_alpha` (fastText: 0). Differences: a noise word equal to the
//! positive word is skipped (fastText draws again), the sigmoid table is word2vec's (±6, 1,000 steps; fastText's
//! is ±8, 512 steps), noise words come from an exact alias table, and sentences are the corpus's (fastText cuts
//! lines into chunks of 1,024 tokens and adds an end-of-sentence token).
//!
//! [`FastText::word_vector`] works for any word: a vocabulary word is the mean of its own row and its n-gram
//! rows, an unknown word the mean of its n-gram rows (a zero vector when it has none), as fastText's
//! `getWordVector`. Threads as in [`super::word2vec`]: one thread is deterministic, more are Hogwild.
use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::corpus::Corpus;
use super::sampling::{
    axpy, has_avx2, train_epochs, Matrix, NegativeSampling, NoiseSampler, Schedule, Shared, SigmoidTable, TrainReport,
    Worker,
};
use super::vectors::WordVectors;
use crate::arrays::stream::{read_metadata, Dtype, StreamWriter, TensorSpec};
use crate::error::{Error, Result};

/// fastText skip-gram hyper-parameters; the defaults are fastText's (`./fasttext skipgram`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FastTextConfig {
    pub dim: usize,
    /// Largest context distance (the window drawn per token is in `[1, window]`).
    pub window: usize,
    /// Noise words per positive pair.
    pub negative: usize,
    /// Sub-sampling threshold `t` (0: none).
    pub sample: f64,
    pub epochs: usize,
    /// Initial learning rate.
    pub alpha: f64,
    /// Final learning rate.
    pub min_alpha: f64,
    /// Shortest character n-gram.
    pub min_n: usize,
    /// Longest character n-gram; 0 turns n-grams off (plain skip-gram on word rows).
    pub max_n: usize,
    /// Hash buckets for the n-grams.
    pub bucket: usize,
    /// Training threads; more than 1 is Hogwild and not deterministic.
    pub threads: usize,
    pub seed: u64,
}

impl Default for FastTextConfig {
    fn default() -> Self {
        FastTextConfig {
            dim: 100,
            window: 5,
            negative: 5,
            sample: 1e-4,
            epochs: 5,
            alpha: 0.05,
            min_alpha: 0.0,
            min_n: 3,
            max_n: 6,
            bucket: 2_000_000,
            threads: 1,
            seed: 1,
        }
    }
}

impl FastTextConfig {
    /// Rejects values the trainer cannot use.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Invalid(format!("fastText config: {what}")));
        if self.dim == 0 || self.window == 0 || self.epochs == 0 || self.threads == 0 || self.negative == 0 {
            return bad("dim, window, negative, epochs and threads must be at least 1");
        }
        if [self.sample, self.alpha, self.min_alpha].iter().any(|v| v.is_nan() || *v < 0.0) {
            return bad("sample, alpha and min_alpha must be non-negative numbers");
        }
        if self.max_n > 0 && (self.min_n == 0 || self.min_n > self.max_n || self.bucket == 0) {
            return bad("with n-grams (max_n > 0) need 1 <= min_n <= max_n and bucket >= 1");
        }
        if self.max_n > 0 && self.bucket > u32::MAX as usize / 2 {
            return bad("bucket must be below 2^31");
        }
        Ok(())
    }

    /// Buckets in use (0 without n-grams).
    fn buckets(&self) -> usize {
        if self.max_n == 0 {
            0
        } else {
            self.bucket
        }
    }
}

/// fastText's string hash: 32-bit FNV-1a over the UTF-8 bytes, each byte xored in as `uint32_t(int8_t(b))` —
/// sign-extended, so bytes ≥ 0x80 flip the upper 24 bits too (`Dictionary::hash`).
pub fn hash(s: &str) -> u32 {
    let mut h: u32 = 2_166_136_261;
    for &b in s.as_bytes() {
        h ^= b as i8 as i32 as u32;
        h = h.wrapping_mul(16_777_619);
    }
    h
}

/// The character n-grams of `<word>` with `min_n ≤ n ≤ max_n` characters, in fastText's order (by start, then
/// length; `Dictionary::computeSubwords`); duplicates are kept. A lone `<` or `>` is never an n-gram.
pub fn char_ngrams(word: &str, min_n: usize, max_n: usize) -> Vec<String> {
    let w = format!("<{word}>");
    let b = w.as_bytes();
    let mut out = Vec::new();
    if max_n == 0 {
        return out;
    }
    for i in 0..b.len() {
        if b[i] & 0xC0 == 0x80 {
            continue;
        }
        let (mut j, mut n) = (i, 1);
        while j < b.len() && n <= max_n {
            j += 1;
            while j < b.len() && b[j] & 0xC0 == 0x80 {
                j += 1;
            }
            if n >= min_n && !(n == 1 && (i == 0 || j == b.len())) {
                out.push(w[i..j].to_string());
            }
            n += 1;
        }
    }
    out
}

/// A trained fastText skip-gram model.
#[derive(Debug, Clone)]
pub struct FastText {
    pub config: FastTextConfig,
    words: Vec<String>,
    index: HashMap<String, u32>,
    /// `[vocab + buckets, dim]`: word rows, then n-gram buckets.
    input: Matrix,
    /// `[vocab, dim]`.
    output: Matrix,
    /// The input rows of each vocabulary word (own row first): `rows[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<usize>,
    rows: Vec<u32>,
    pub report: TrainReport,
}

impl FastText {
    /// Trains on `corpus` (its vocabulary is the model's). `progress` draws a bar.
    pub fn train(corpus: &Corpus, cfg: &FastTextConfig, progress: bool) -> Result<FastText> {
        FastText::train_with(corpus, cfg, progress, has_avx2())
    }

    fn train_with(corpus: &Corpus, cfg: &FastTextConfig, progress: bool, avx2: bool) -> Result<FastText> {
        cfg.validate()?;
        let words = corpus.vocab.words().to_vec();
        let n_rows = words.len() + cfg.buckets();
        let mut model = FastText::assemble(
            cfg.clone(),
            words,
            Matrix::uniform(n_rows, cfg.dim, 1.0 / cfg.dim as f32, cfg.seed, u64::MAX),
            Matrix::zeros(corpus.vocab.len(), cfg.dim),
            TrainReport::default(),
        )?;
        let noise = NoiseSampler::new(corpus.vocab.counts(), 0.5)?;
        let sigmoid = SigmoidTable::new();
        let k = Kernel {
            input: model.input.shared(),
            output: model.output.shared(),
            offsets: &model.offsets,
            rows: &model.rows,
            window: cfg.window,
            ns: NegativeSampling { negative: cfg.negative, noise: &noise, sigmoid: &sigmoid },
            avx2: avx2 && has_avx2(),
        };
        let schedule = Schedule {
            epochs: cfg.epochs,
            threads: cfg.threads,
            seed: cfg.seed,
            sample: cfg.sample,
            alpha: cfg.alpha,
            min_alpha: cfg.min_alpha,
        };
        let stride = model.input.stride();
        let report = train_epochs(
            corpus,
            &schedule,
            "fasttext skip-gram",
            progress,
            || (vec![0f32; stride], vec![0f32; stride]),
            |sentence, w, (hidden, grad)| k.sentence(sentence, w, hidden, grad),
        );
        model.report = report;
        Ok(model)
    }

    /// A model from its parts (computing every word's rows); checks the shapes.
    fn assemble(
        config: FastTextConfig,
        words: Vec<String>,
        input: Matrix,
        output: Matrix,
        report: TrainReport,
    ) -> Result<FastText> {
        let n = words.len();
        if input.rows() != n + config.buckets() || output.rows() != n || input.dim() != output.dim() {
            return Err(Error::Invalid(format!(
                "fastText: input {} × {}, output {} × {} for {n} words and {} buckets",
                input.rows(),
                input.dim(),
                output.rows(),
                output.dim(),
                config.buckets()
            )));
        }
        let mut index = HashMap::with_capacity(n);
        let (mut offsets, mut rows) = (vec![0usize], Vec::new());
        for (i, w) in words.iter().enumerate() {
            if index.insert(w.clone(), i as u32).is_some() {
                return Err(Error::Invalid(format!("fastText: word '{w}' appears twice")));
            }
            rows.push(i as u32);
            rows.extend(ngram_rows(w, &config, n));
            offsets.push(rows.len());
        }
        Ok(FastText { config, words, index, input, output, offsets, rows, report })
    }

    /// The vocabulary, most frequent first.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    pub fn dim(&self) -> usize {
        self.input.dim()
    }

    /// Input rows `[vocab + buckets, dim]`: word rows, then the n-gram buckets.
    pub fn input(&self) -> &Matrix {
        &self.input
    }

    /// Output rows `[vocab, dim]`.
    pub fn output(&self) -> &Matrix {
        &self.output
    }

    /// The input rows that make up `word`: its own row first when it is in the vocabulary, then its n-grams'.
    pub fn subword_rows(&self, word: &str) -> Vec<u32> {
        match self.index.get(word) {
            Some(&i) => self.rows[self.offsets[i as usize]..self.offsets[i as usize + 1]].to_vec(),
            None => ngram_rows(word, &self.config, self.words.len()).collect(),
        }
    }

    /// The vector of any word (see the module docs); zeros for an unknown word without n-grams.
    pub fn word_vector(&self, word: &str) -> Vec<f32> {
        let rows = self.subword_rows(word);
        let mut v = vec![0f32; self.dim()];
        for &r in &rows {
            axpy(1.0, self.input.row(r as usize), &mut v);
        }
        if !rows.is_empty() {
            let inv = 1.0 / rows.len() as f32;
            v.iter_mut().for_each(|x| *x *= inv);
        }
        v
    }

    /// The vectors of the vocabulary words ([`FastText::word_vector`]), with provenance metadata.
    pub fn to_vectors(&self) -> Result<WordVectors> {
        let mut data = Vec::with_capacity(self.words.len() * self.dim());
        for w in &self.words {
            data.extend(self.word_vector(w));
        }
        let mut v = WordVectors::new(self.words.clone(), self.dim(), data)?;
        v.metadata = self.metadata();
        Ok(v)
    }

    fn metadata(&self) -> std::collections::BTreeMap<String, String> {
        let mut m = std::collections::BTreeMap::new();
        m.insert("kind".into(), "fasttext".into());
        m.insert("config".into(), serde_json::to_string(&self.config).unwrap_or_default());
        m.insert("report".into(), serde_json::to_string(&self.report).unwrap_or_default());
        m
    }

    /// Saves the whole model (input and output rows, words, config, report) as `.safetensors`: tensors `input`
    /// `[vocab + buckets, dim]` and `output` `[vocab, dim]`, metadata `words` (joined by `\n`), `config`, `report`.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(".tmp");
        let tmp = path.with_file_name(name);
        let mut meta = self.metadata();
        meta.insert("words".into(), self.words.join("\n"));
        let spec = |name: &str, m: &Matrix| TensorSpec {
            name: name.into(),
            dtype: Dtype::F32,
            shape: vec![m.rows(), m.dim()],
        };
        let mut w = StreamWriter::create(&tmp, &[spec("input", &self.input), spec("output", &self.output)], &meta)?;
        for (name, m) in [("input", &self.input), ("output", &self.output)] {
            // Row blocks, so the whole matrix is never copied at once.
            let block = 4096;
            for start in (0..m.rows()).step_by(block) {
                let end = (start + block).min(m.rows());
                let mut values = Vec::with_capacity((end - start) * m.dim());
                for r in start..end {
                    values.extend_from_slice(m.row(r));
                }
                w.write_f32(name, (start * m.dim()) as u64, &values)?;
            }
        }
        w.finish()?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    }

    /// Loads a model written by [`FastText::save`].
    pub fn load(path: &Path) -> Result<FastText> {
        let meta = read_metadata(path)?;
        let get = |k: &str| {
            meta.get(k)
                .ok_or_else(|| Error::format_file(path, format!("no `{k}` in the metadata (not a fastText model)")))
        };
        let words: Vec<String> = get("words")?.split('\n').map(String::from).collect();
        let config: FastTextConfig = serde_json::from_str(get("config")?)
            .map_err(|e| Error::format_file(path, format!("metadata `config`: {e}")))?;
        let report: TrainReport = serde_json::from_str(get("report")?).unwrap_or_default();
        let matrix = |name: &str| -> Result<Matrix> {
            let t = crate::arrays::read_safetensors(path, Some(name))?;
            let size = t.size();
            if size.len() != 2 {
                return Err(Error::format_file(path, format!("tensor `{name}` has shape {size:?} (expected 2-D)")));
            }
            let data = Vec::<f32>::try_from(t.to_kind(tch::Kind::Float).contiguous().view([-1]))
                .map_err(|e| Error::format_file(path, e.to_string()))?;
            Matrix::from_dense(size[0] as usize, size[1] as usize, &data)
        };
        FastText::assemble(config, words, matrix("input")?, matrix("output")?, report)
            .map_err(|e| Error::format_file(path, e.to_string()))
    }
}

/// The bucket rows of `word`'s n-grams (`vocab + hash % bucket`).
fn ngram_rows<'a>(word: &str, cfg: &'a FastTextConfig, vocab: usize) -> impl Iterator<Item = u32> + 'a {
    let bucket = cfg.buckets().max(1) as u32;
    char_ngrams(word, cfg.min_n, cfg.max_n).into_iter().map(move |g| vocab as u32 + hash(&g) % bucket)
}

struct Kernel<'a> {
    input: Shared,
    output: Shared,
    offsets: &'a [usize],
    rows: &'a [u32],
    window: usize,
    ns: NegativeSampling<'a>,
    avx2: bool,
}

impl Kernel<'_> {
    fn sentence(&self, s: &[u32], w: &mut Worker, hidden: &mut [f32], grad: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is set only when the CPU has AVX2.
            return unsafe { self.sentence_avx2(s, w, hidden, grad) };
        }
        self.skip_gram::<false>(s, w, hidden, grad)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn sentence_avx2(&self, s: &[u32], w: &mut Worker, hidden: &mut [f32], grad: &mut [f32]) {
        self.skip_gram::<true>(s, w, hidden, grad)
    }

    #[inline(always)]
    fn skip_gram<const AVX2: bool>(&self, s: &[u32], w: &mut Worker, hidden: &mut [f32], grad: &mut [f32]) {
        let mut loss = 0f32;
        for (i, &centre) in s.iter().enumerate() {
            let rows = &self.rows[self.offsets[centre as usize]..self.offsets[centre as usize + 1]];
            let inv = 1.0 / rows.len() as f32;
            let b = 1 + w.rng.below(self.window); // in [1, window]
            let (lo, hi) = (i.saturating_sub(b), (i + b + 1).min(s.len()));
            for (j, &context) in s.iter().enumerate().take(hi).skip(lo) {
                if j == i {
                    continue;
                }
                hidden.fill(0.0);
                for &r in rows {
                    // SAFETY: every row index is < vocab + buckets (built by `assemble`).
                    axpy(1.0, unsafe { self.input.row(r as usize) }, hidden);
                }
                hidden.iter_mut().for_each(|v| *v *= inv);
                grad.fill(0.0);
                // SAFETY: hidden and grad are scratch rows of the output's stride; `context` is a vocabulary id.
                loss += unsafe { self.ns.step::<AVX2>(hidden, grad, self.output, context, w.alpha, &mut w.rng) };
                w.pairs += 1;
                for &r in rows {
                    // SAFETY: as above.
                    axpy(1.0, grad, unsafe { self.input.row(r as usize) });
                }
            }
        }
        w.loss += loss as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::codeswitch::SplitMix64;
    use crate::wordvec::word2vec::tests::neighbours_in_group;

    #[test]
    fn hash_matches_fasttext_golden_values() {
        // Generated by an independent re-implementation of fastText's Dictionary::hash:
        //   def h(s):
        //       x = 2166136261
        //       for b in s.encode():
        //           x ^= (b if b < 128 else b - 256) & 0xffffffff   # uint32_t(int8_t(byte))
        //           x = (x * 16777619) & 0xffffffff
        //       return x
        //   for w in ['<the>', '<th', 'the', 'he>', '<été>', 'été', '猫', '']: print(repr(w), h(w))
        let golden = [
            ("<the>", 4_243_648_960u32),
            ("<th", 1_619_151_151),
            ("the", 3_020_861_980),
            ("he>", 3_098_816_280),
            ("<été>", 2_778_999_949),
            ("été", 200_187_927),
            ("猫", 81_579_279),
            ("", 2_166_136_261),
        ];
        for (s, h) in golden {
            assert_eq!(hash(s), h, "{s:?}");
        }
        // The sign extension matters for non-ASCII bytes: plain FNV-1a differs there, not on ASCII.
        let plain = |s: &str| s.bytes().fold(2_166_136_261u32, |h, b| (h ^ b as u32).wrapping_mul(16_777_619));
        assert_eq!(plain("<the>"), hash("<the>"));
        assert_ne!(plain("été"), hash("été"));
    }

    #[test]
    fn ngrams_follow_fasttext() {
        assert_eq!(char_ngrams("été", 3, 6), ["<ét", "<été", "<été>", "été", "été>", "té>"]);
        assert_eq!(char_ngrams("the", 3, 4), ["<th", "<the", "the", "the>", "he>"]);
        assert_eq!(char_ngrams("a", 1, 2), ["<a", "a", "a>"], "no lone < or >");
        assert!(char_ngrams("the", 3, 0).is_empty());
        assert_eq!(char_ngrams("abcdefgh", 3, 6).len(), 8 + 7 + 6 + 5);
    }

    /// Sentences of `groups` disjoint topics whose words are random letter strings, so that n-grams carry no
    /// group information; `group_of` maps each word to its group.
    fn random_word_topics(seed: u64) -> (Corpus, HashMap<String, usize>) {
        let mut rng = SplitMix64::new(seed);
        let (groups, per_group) = (4, 12);
        let mut vocab: Vec<Vec<String>> = vec![Vec::new(); groups];
        let mut group_of = HashMap::new();
        for (g, words) in vocab.iter_mut().enumerate() {
            while words.len() < per_group {
                let w: String = (0..6).map(|_| (b'a' + rng.below(26) as u8) as char).collect();
                if group_of.insert(w.clone(), g).is_none() {
                    words.push(w);
                }
            }
        }
        let text: Vec<Vec<String>> = (0..1500)
            .map(|_| {
                let g = rng.below(groups as u64) as usize;
                (0..10).map(|_| vocab[g][rng.below(per_group as u64) as usize].clone()).collect()
            })
            .collect();
        (Corpus::from_sentences(text.iter().map(|s| s.iter()), 1).unwrap(), group_of)
    }

    fn small() -> FastTextConfig {
        FastTextConfig { dim: 16, window: 3, sample: 0.0, epochs: 3, bucket: 5000, ..Default::default() }
    }

    /// The same vectors with each word renamed `gG_word`, so the word2vec tests' neighbour check applies.
    fn by_group(v: &WordVectors, group_of: &HashMap<String, usize>) -> WordVectors {
        let words = v.words().iter().map(|w| format!("g{}_{w}", group_of[w])).collect();
        WordVectors::new(words, v.dim(), v.data().to_vec()).unwrap()
    }

    #[test]
    fn planted_neighbours_are_recovered_and_training_matters() {
        let (corpus, group_of) = random_word_topics(11);
        let model = FastText::train(&corpus, &small(), false).unwrap();
        let share = neighbours_in_group(&by_group(&model.to_vectors().unwrap(), &group_of), 5);
        assert!(share > 0.95, "{share}");
        let l = &model.report.epoch_losses;
        assert!(l[2] < l[0], "{l:?}");
        let frozen = FastText::train(&corpus, &FastTextConfig { alpha: 0.0, ..small() }, false).unwrap();
        let share = neighbours_in_group(&by_group(&frozen.to_vectors().unwrap(), &group_of), 5);
        assert!(share < 0.2, "alpha 0: {share}");
    }

    #[test]
    fn word_vectors_are_means_of_subword_rows_also_out_of_vocabulary() {
        let (corpus, _) = random_word_topics(12);
        let cfg = FastTextConfig { epochs: 1, ..small() };
        let model = FastText::train(&corpus, &cfg, false).unwrap();
        let n = model.words().len();
        let mean = |rows: &[usize]| -> Vec<f32> {
            let mut v = vec![0f64; cfg.dim];
            for &r in rows {
                for (a, b) in v.iter_mut().zip(model.input().row(r)) {
                    *a += *b as f64;
                }
            }
            v.iter().map(|x| (x / rows.len() as f64) as f32).collect()
        };
        let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
        // Unknown word: its n-gram rows only, computed here from the hash directly.
        let oov = "zqxjvk";
        assert!(!model.words().contains(&oov.to_string()));
        let rows: Vec<usize> =
            char_ngrams(oov, 3, 6).iter().map(|g| n + (hash(g) % cfg.bucket as u32) as usize).collect();
        assert_eq!(rows.len(), 6 + 5 + 4 + 3);
        assert!(close(&model.word_vector(oov), &mean(&rows)));
        // Vocabulary word: its own row first, then its n-grams.
        let word = model.words()[3].clone();
        let mut rows = vec![3usize];
        rows.extend(char_ngrams(&word, 3, 6).iter().map(|g| n + (hash(g) % cfg.bucket as u32) as usize));
        assert_eq!(model.subword_rows(&word), rows.iter().map(|&r| r as u32).collect::<Vec<_>>());
        assert!(close(&model.word_vector(&word), &mean(&rows)));
        assert_eq!(model.to_vectors().unwrap().get(&word).unwrap(), model.word_vector(&word).as_slice());
        // No n-grams at all: zeros.
        let plain = FastText::train(&corpus, &FastTextConfig { max_n: 0, ..cfg.clone() }, false).unwrap();
        assert_eq!(plain.input().rows(), n);
        assert_eq!(plain.word_vector("zqxjvk"), vec![0.0; cfg.dim]);
    }

    #[test]
    fn deterministic_with_one_thread_and_saves_round_trip() {
        let (corpus, _) = random_word_topics(13);
        let cfg = FastTextConfig { epochs: 1, sample: 1e-2, ..small() };
        let a = FastText::train(&corpus, &cfg, false).unwrap();
        let b = FastText::train_with(&corpus, &cfg, false, false).unwrap();
        assert_eq!(a.input(), b.input(), "same seed (and generic = AVX2 kernel)");
        let c = FastText::train(&corpus, &FastTextConfig { seed: 9, ..cfg.clone() }, false).unwrap();
        assert_ne!(a.input(), c.input());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ft.safetensors");
        a.save(&p).unwrap();
        let l = FastText::load(&p).unwrap();
        assert_eq!((l.input(), l.output(), l.words(), &l.config), (a.input(), a.output(), a.words(), &a.config));
        assert_eq!(l.word_vector("zqxjvk"), a.word_vector("zqxjvk"));
        assert!(FastText::train(&corpus, &FastTextConfig { min_n: 7, ..cfg }, false).is_err());
    }
}
