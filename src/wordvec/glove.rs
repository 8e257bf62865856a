//! GloVe: global vectors from weighted least squares on log co-occurrence counts (Pennington, Socher & Manning
//! 2014, "GloVe: Global Vectors for Word Representation", EMNLP, eq. 8), trained as the reference `glove.c`
//! (stanfordnlp/GloVe) trains it.
//!
//! # Objective
//! ```text
//! J = Σ_{X_ij > 0} f(X_ij) (w_iᵀ w̃_j + b_i + b̃_j − log X_ij)²,     f(x) = min(1, (x / x_max)^α)
//! ```
//! with `X` from [`cooccur`](super::cooccur) (window, `1/d` weighting, bounded-memory counting). The reported
//! `cost` of an epoch is `glove.c`'s: `(1/N) Σ ½ f(X_ij) diff²` over the `N` records, summed during the epoch's
//! pass (each record before its own update).
//!
//! # Training (as `glove.c`)
//! - Parameters `W`, `W̃` (`[V, D]`) and biases `b`, `b̃` start uniform in `[−0.5, 0.5) / D`; the AdaGrad
//!   accumulators start at 1 (so the first step size is `eta`).
//! - The records are shuffled once with a seeded Fisher–Yates shuffle (`shuffle.c` shuffles the file once, in
//!   chunks), then every epoch visits them in that order.
//! - Per record, with `diff = w_iᵀw̃_j + b_i + b̃_j − log X_ij` and `fdiff = f(X_ij)·diff` (records with a
//!   non-finite `diff` are skipped): for each component, `t = clip(fdiff · w̃_jb, ±grad_clip) · eta`,
//!   `w_ib −= t / √G_ib`, `G_ib += t²` (and symmetrically for `w̃_j`; the vector updates are dropped if any is
//!   non-finite); the biases take `b_i −= fdiff / √G_bi`, `G_bi += fdiff²` — without `eta`, as current `glove.c`.
//! - Output: `W + W̃` (`glove.c -model 2`), one row per vocabulary word, in vocabulary order.
//!
//! Parameters and arithmetic are `f32` (`glove.c` uses `double`); costs are summed in `f64`.
//!
//! # Threads
//! `threads = 1` is deterministic: the same corpus, settings and seed give bit-identical vectors. With more
//! threads each takes a contiguous chunk of the shuffled records and updates the shared parameters without locks
//! (Hogwild, as `glove.c`'s pthreads), through relaxed atomic loads and stores of whole rows; the result then
//! depends on the interleaving and is not reproducible.
//!
//! # Memory
//! Besides the counting tables of [`cooccur`](super::cooccur) (`memory_mb`, freed before training): the
//! co-occurrence records (12 bytes each) and their training copy with `log X` and `f(X)` precomputed (16 bytes
//! each, both alive while the copy is made, then only the copy), and `4 · V · (D + 1)` `f32` for the parameters
//! and accumulators.
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::cooccur::{self, CooccurConfig, CooccurStats, Cooccurrences};
use super::corpus::Corpus;
use super::vectors::WordVectors;
use crate::error::{Error, Result};
use crate::text::codeswitch::SplitMix64;

/// Settings of a GloVe run; defaults are `glove.c`'s and `cooccur.c`'s program defaults, except `threads`
/// (1, deterministic; `glove.c` uses 8) and `memory_mb`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GloveConfig {
    /// Vector size `D` (`-vector-size`, default 50).
    pub dim: usize,
    /// Passes over the co-occurrence records (`-iter`, default 25).
    pub epochs: usize,
    /// Cutoff of the weighting function (`-x-max`, default 100).
    pub x_max: f64,
    /// Exponent of the weighting function (`-alpha`, default 0.75).
    pub alpha: f64,
    /// Initial AdaGrad learning rate (`-eta`, default 0.05).
    pub eta: f64,
    /// Bound on each gradient component (`glove.c`'s `grad_clip_value`, default 100).
    pub grad_clip: f64,
    /// Context words on each side (`cooccur -window-size`, default 15).
    pub window: usize,
    /// Weight a pair at distance `d` by `1/d` (`cooccur -distance-weighting`, default on).
    pub distance_weighting: bool,
    /// Count right contexts too (`cooccur -symmetric`, default on).
    pub symmetric: bool,
    /// Soft cap in MiB on the co-occurrence counting tables (the counts do not depend on it).
    pub memory_mb: f64,
    /// Training threads: 1 is deterministic, more run Hogwild (see the module docs).
    pub threads: usize,
    /// Seed of the initialisation and of the shuffle.
    pub seed: u64,
}

impl Default for GloveConfig {
    fn default() -> Self {
        let c = CooccurConfig::default();
        GloveConfig {
            dim: 50,
            epochs: 25,
            x_max: 100.0,
            alpha: 0.75,
            eta: 0.05,
            grad_clip: 100.0,
            window: c.window,
            distance_weighting: c.distance_weighting,
            symmetric: c.symmetric,
            memory_mb: c.memory_mb,
            threads: 1,
            seed: 1,
        }
    }
}

impl GloveConfig {
    /// The co-occurrence settings.
    pub fn cooccur(&self) -> CooccurConfig {
        CooccurConfig {
            window: self.window,
            distance_weighting: self.distance_weighting,
            symmetric: self.symmetric,
            memory_mb: self.memory_mb,
        }
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Invalid(format!("GloVe setting {what}")));
        if self.dim == 0 {
            return bad("dim = 0 (expected at least 1)");
        }
        if self.threads == 0 {
            return bad("threads = 0 (expected at least 1)");
        }
        if !(self.x_max.is_finite() && self.x_max > 0.0) {
            return bad(&format!("x_max = {} (expected a positive number)", self.x_max));
        }
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return bad(&format!("alpha = {} (expected a number ≥ 0)", self.alpha));
        }
        if !(self.eta.is_finite() && self.eta >= 0.0) {
            return bad(&format!("eta = {} (expected a number ≥ 0)", self.eta));
        }
        if self.grad_clip.is_nan() || self.grad_clip <= 0.0 {
            return bad(&format!("grad_clip = {} (expected a positive number)", self.grad_clip));
        }
        self.cooccur().validate()
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GloveReport {
    /// `glove.c`'s `cost` of every epoch (see the module docs).
    pub cost: Vec<f64>,
    /// The same mean, `(1/N) Σ ½ f(X_ij) diff²`, on the final parameters (in `f64`).
    pub final_cost: f64,
    /// Co-occurrence records `N` (non-zero `X_ij`).
    pub records: u64,
    /// Record visits skipped because `diff` was not finite (over all epochs).
    pub skipped: u64,
    /// Vocabulary size `V`.
    pub vocab: usize,
    pub dim: usize,
    pub tokens: u64,
    pub threads: usize,
    /// True when `threads = 1` (bit-identical reruns).
    pub deterministic: bool,
    /// The counting pass.
    pub cooccur: CooccurStats,
    /// Bytes of the training records and of the parameters with their accumulators.
    pub train_bytes: u64,
    pub cooccur_seconds: f64,
    pub train_seconds: f64,
    pub seconds: f64,
}

/// Trained GloVe parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct GloveModel {
    pub dim: usize,
    /// Word vectors `W`, row-major `[V, D]`.
    pub w: Vec<f32>,
    /// Context vectors `W̃`, row-major `[V, D]`.
    pub w_ctx: Vec<f32>,
    /// Word biases `b`, `[V]`.
    pub b: Vec<f32>,
    /// Context biases `b̃`, `[V]`.
    pub b_ctx: Vec<f32>,
}

impl GloveModel {
    pub fn vocab_size(&self) -> usize {
        self.b.len()
    }

    /// `W + W̃` (`glove.c -model 2`) for `words` (the vocabulary, in id order).
    pub fn vectors(&self, words: Vec<String>) -> Result<WordVectors> {
        let data = self.w.iter().zip(&self.w_ctx).map(|(a, b)| a + b).collect();
        WordVectors::new(words, self.dim, data)
    }

    /// `(1/N) Σ ½ f(X_ij) (w_iᵀw̃_j + b_i + b̃_j − log X_ij)²` over `records`, in `f64`.
    pub fn cost(&self, records: &[cooccur::Cooc], x_max: f64, alpha: f64) -> f64 {
        let d = self.dim;
        let total: f64 = records
            .iter()
            .map(|r| {
                let (i, j) = (r.i as usize, r.j as usize);
                let (wi, cj) = (&self.w[i * d..(i + 1) * d], &self.w_ctx[j * d..(j + 1) * d]);
                let dot: f64 = wi.iter().zip(cj).map(|(a, b)| *a as f64 * *b as f64).sum();
                let x = r.x as f64;
                let diff = dot + self.b[i] as f64 + self.b_ctx[j] as f64 - x.ln();
                0.5 * weight(x, x_max, alpha) * diff * diff
            })
            .sum();
        total / records.len().max(1) as f64
    }
}

/// `f(x) = min(1, (x / x_max)^α)`.
fn weight(x: f64, x_max: f64, alpha: f64) -> f64 {
    if x > x_max {
        1.0
    } else {
        (x / x_max).powf(alpha)
    }
}

/// Counts the co-occurrences of `corpus` (temporary files in a fresh folder inside `scratch`) and trains GloVe on
/// them; returns `W + W̃` for the vocabulary and the report. `progress` draws bars.
pub fn train(corpus: &Corpus, cfg: &GloveConfig, scratch: &Path, progress: bool) -> Result<(WordVectors, GloveReport)> {
    cfg.validate()?;
    let start = Instant::now();
    let counts = cooccur::count(corpus, &cfg.cooccur(), scratch, progress)?;
    let cooccur_seconds = start.elapsed().as_secs_f64();
    let (model, mut report) = fit(counts, cfg, progress)?;
    report.cooccur_seconds = cooccur_seconds;
    report.seconds = start.elapsed().as_secs_f64();
    let mut vectors = model.vectors(corpus.vocab.words().to_vec())?;
    vectors.metadata.insert("model".into(), "glove".into());
    vectors.metadata.insert("config".into(), serde_json::to_string(cfg).unwrap_or_default());
    Ok((vectors, report))
}

/// A training record: the pair, `log X_ij` and `f(X_ij)`.
#[derive(Debug, Clone, Copy)]
struct Rec {
    i: u32,
    j: u32,
    log_x: f32,
    f_x: f32,
}

/// Trains GloVe on the co-occurrence counts `counts` (consumed: the records are turned into the training
/// records). The report's `cooccur_seconds` is 0 and `seconds` the training time; [`train`] fills them.
pub fn fit(counts: Cooccurrences, cfg: &GloveConfig, progress: bool) -> Result<(GloveModel, GloveReport)> {
    cfg.validate()?;
    let start = Instant::now();
    let (v, d) = (counts.vocab_size, cfg.dim);
    if counts.is_empty() {
        return Err(Error::Invalid("GloVe: no co-occurrences to train on (every sentence has a single token)".into()));
    }
    if let Some(r) =
        counts.records.iter().find(|r| r.i as usize >= v || r.j as usize >= v || r.x.is_nan() || r.x <= 0.0)
    {
        return Err(Error::Invalid(format!("GloVe: bad co-occurrence record {r:?} for a vocabulary of {v}")));
    }
    let mut records: Vec<Rec> = counts
        .records
        .iter()
        .map(|r| Rec {
            i: r.i,
            j: r.j,
            log_x: (r.x as f64).ln() as f32,
            f_x: weight(r.x as f64, cfg.x_max, cfg.alpha) as f32,
        })
        .collect();
    let stats = counts.stats.clone();
    drop(counts);
    let n = records.len();

    // Initialisation: word rows, then context rows, each [w_0 … w_{D−1}, b] (glove.c's W), then the shuffle.
    let mut rng = SplitMix64::new(cfg.seed);
    let stride = 2 * (d + 1); // [w (D), b, G_w (D), G_b]
    let table = |rng: &mut SplitMix64| -> Vec<f32> {
        let mut t = vec![1.0f32; v * stride];
        for row in t.chunks_exact_mut(stride) {
            for x in &mut row[..d + 1] {
                *x = ((rng.next_f64() - 0.5) / d as f64) as f32;
            }
        }
        t
    };
    let mut words = table(&mut rng);
    let mut contexts = table(&mut rng);
    for k in (1..n).rev() {
        records.swap(k, rng.below(k as u64 + 1) as usize);
    }

    let hyper = Hyper { d, eta: cfg.eta as f32, clip: cfg.grad_clip as f32 };
    let bar =
        progress.then(|| crate::progress::bar((cfg.epochs * n) as u64, "GloVe {msg} [{bar:30}] {percent}% eta {eta}"));
    let mut cost = Vec::with_capacity(cfg.epochs);
    let mut skipped = 0u64;
    for epoch in 0..cfg.epochs {
        let (sum, skip) = if cfg.threads == 1 {
            run_plain(&records, &mut words, &mut contexts, &hyper, bar.as_ref())
        } else {
            run_hogwild(&records, &mut words, &mut contexts, &hyper, cfg.threads, bar.as_ref())
        };
        skipped += skip;
        cost.push(sum / n as f64);
        if let Some(b) = &bar {
            b.set_message(format!("epoch {}/{} cost {:.5}", epoch + 1, cfg.epochs, sum / n as f64));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }

    let split = |t: &[f32]| -> (Vec<f32>, Vec<f32>) {
        let vecs = t.chunks_exact(stride).flat_map(|r| r[..d].iter().copied()).collect();
        let bias = t.chunks_exact(stride).map(|r| r[d]).collect();
        (vecs, bias)
    };
    let ((w, b), (w_ctx, b_ctx)) = (split(&words), split(&contexts));
    let model = GloveModel { dim: d, w, w_ctx, b, b_ctx };
    let final_cost = {
        let total: f64 = records
            .iter()
            .map(|r| {
                let (i, j) = (r.i as usize, r.j as usize);
                let dot: f64 = model.w[i * d..(i + 1) * d]
                    .iter()
                    .zip(&model.w_ctx[j * d..(j + 1) * d])
                    .map(|(a, b)| *a as f64 * *b as f64)
                    .sum();
                let diff = dot + model.b[i] as f64 + model.b_ctx[j] as f64 - r.log_x as f64;
                0.5 * r.f_x as f64 * diff * diff
            })
            .sum();
        total / n as f64
    };
    let train_bytes = (n * std::mem::size_of::<Rec>() + 2 * v * stride * 4) as u64;
    let seconds = start.elapsed().as_secs_f64();
    let report = GloveReport {
        cost,
        final_cost,
        records: n as u64,
        skipped,
        vocab: v,
        dim: d,
        tokens: stats.tokens,
        threads: cfg.threads,
        deterministic: cfg.threads == 1,
        cooccur: stats,
        train_bytes,
        cooccur_seconds: 0.0,
        train_seconds: seconds,
        seconds,
    };
    Ok((model, report))
}

struct Hyper {
    d: usize,
    eta: f32,
    clip: f32,
}

/// Records between progress-bar updates.
const TICK: usize = 1 << 16;

/// One epoch on one thread, updating the tables in place. Returns (Σ ½ f diff², skipped).
fn run_plain(
    records: &[Rec],
    words: &mut [f32],
    contexts: &mut [f32],
    h: &Hyper,
    bar: Option<&indicatif::ProgressBar>,
) -> (f64, u64) {
    let stride = 2 * (h.d + 1);
    let mut u = vec![0f32; 2 * h.d];
    let (mut total, mut skipped) = (0f64, 0u64);
    for chunk in records.chunks(TICK) {
        for r in chunk {
            let (i, j) = (r.i as usize * stride, r.j as usize * stride);
            match step(&mut words[i..i + stride], &mut contexts[j..j + stride], r, h, &mut u) {
                Some(c) => total += c,
                None => skipped += 1,
            }
        }
        if let Some(b) = bar {
            b.inc(chunk.len() as u64);
        }
    }
    (total, skipped)
}

/// One epoch on `threads` threads, each over a contiguous chunk of the records, updating the shared tables without
/// locks (Hogwild). Returns (Σ ½ f diff², skipped).
fn run_hogwild(
    records: &[Rec],
    words: &mut [f32],
    contexts: &mut [f32],
    h: &Hyper,
    threads: usize,
    bar: Option<&indicatif::ProgressBar>,
) -> (f64, u64) {
    let words = as_atomic(words);
    let contexts = as_atomic(contexts);
    let stride = 2 * (h.d + 1);
    // glove.c: n / threads records each, the last thread also takes the remainder.
    let per = records.len() / threads;
    let results: Vec<(f64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let end = if t + 1 == threads { records.len() } else { (t + 1) * per };
                let chunk = &records[t * per..end];
                s.spawn(move || {
                    let (mut wl, mut cl) = (vec![0f32; stride], vec![0f32; stride]);
                    let mut u = vec![0f32; 2 * h.d];
                    let (mut total, mut skipped) = (0f64, 0u64);
                    for part in chunk.chunks(TICK) {
                        for r in part {
                            let (i, j) = (r.i as usize * stride, r.j as usize * stride);
                            let (wa, ca) = (&words[i..i + stride], &contexts[j..j + stride]);
                            load(wa, &mut wl);
                            load(ca, &mut cl);
                            match step(&mut wl, &mut cl, r, h, &mut u) {
                                Some(c) => total += c,
                                None => skipped += 1,
                            }
                            store(&wl, wa);
                            store(&cl, ca);
                        }
                        if let Some(b) = bar {
                            b.inc(part.len() as u64);
                        }
                    }
                    (total, skipped)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or((f64::NAN, 0))).collect()
    });
    results.iter().fold((0.0, 0), |(c, s), r| (c + r.0, s + r.1))
}

/// Views an exclusively borrowed `f32` slice as atomics, for lock-free sharing between threads.
fn as_atomic(x: &mut [f32]) -> &[AtomicU32] {
    // SAFETY: `AtomicU32` has the size and bit validity of `u32` and an alignment of 4, which `f32` shares; any
    // bit pattern is a valid `f32`. The exclusive borrow is held for the lifetime of the returned view, so the
    // memory is only accessed through the atomics meanwhile.
    unsafe { std::slice::from_raw_parts(x.as_mut_ptr() as *const AtomicU32, x.len()) }
}

fn load(src: &[AtomicU32], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = f32::from_bits(s.load(Ordering::Relaxed));
    }
}

fn store(src: &[f32], dst: &[AtomicU32]) {
    for (s, d) in src.iter().zip(dst) {
        d.store(s.to_bits(), Ordering::Relaxed);
    }
}

/// The dot product of two equally long slices, in eight fixed lanes (vectorisable, deterministic order).
#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    (acc[0] + acc[4]) + (acc[1] + acc[5]) + (acc[2] + acc[6]) + (acc[3] + acc[7]) + tail
}

/// `glove.c`'s update for one record on the rows `[w (D), b, G_w (D), G_b]` of word `i` and context `j`; `u` is
/// scratch of `2D`. Returns ½ f diff², or `None` when `diff` is not finite (the record is skipped).
#[inline]
fn step(wrow: &mut [f32], crow: &mut [f32], r: &Rec, h: &Hyper, u: &mut [f32]) -> Option<f64> {
    let d = h.d;
    let (w, gw) = wrow.split_at_mut(d + 1);
    let (c, gc) = crow.split_at_mut(d + 1);
    let diff = dot(&w[..d], &c[..d]) + w[d] + c[d] - r.log_x;
    let fdiff = r.f_x * diff;
    if !diff.is_finite() || !fdiff.is_finite() {
        return None;
    }
    let cost = 0.5 * fdiff as f64 * diff as f64;
    let (u1, u2) = u.split_at_mut(d);
    let mut finite = true;
    for b in 0..d {
        // max/min ignore a NaN operand, as C's fmax/fmin.
        let t1 = (fdiff * c[b]).max(-h.clip).min(h.clip) * h.eta;
        let t2 = (fdiff * w[b]).max(-h.clip).min(h.clip) * h.eta;
        u1[b] = t1 / gw[b].sqrt();
        u2[b] = t2 / gc[b].sqrt();
        finite &= u1[b].is_finite() & u2[b].is_finite();
        gw[b] += t1 * t1;
        gc[b] += t2 * t2;
    }
    if finite {
        for b in 0..d {
            w[b] -= u1[b];
            c[b] -= u2[b];
        }
    }
    let nan0 = |x: f32| if x.is_finite() { x } else { 0.0 };
    w[d] -= nan0(fdiff / gw[d].sqrt());
    c[d] -= nan0(fdiff / gc[d].sqrt());
    gw[d] += fdiff * fdiff;
    gc[d] += fdiff * fdiff;
    Some(cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `groups` topics of `size` words each. A sentence of 6–12 words has a topic; each word is drawn from it,
    /// except with probability `mix` from the whole vocabulary: words of one topic co-occur often, words of two
    /// topics rarely. (Without any mixing, X_ij = 0 across topics and GloVe, which only fits observed pairs, can
    /// fit the within-topic counts with the biases alone: then the vectors need not separate the topics.)
    fn topic_corpus(groups: usize, size: usize, sentences: usize, mix: f64, seed: u64) -> Corpus {
        let mut rng = SplitMix64::new(seed);
        let words: Vec<Vec<String>> = (0..groups).map(|g| (0..size).map(|k| format!("t{g}w{k}")).collect()).collect();
        let text: Vec<Vec<&str>> = (0..sentences)
            .map(|s| {
                let topic = s % groups;
                let len = 6 + rng.below(7) as usize;
                (0..len)
                    .map(|_| {
                        let g = if rng.next_f64() < mix { rng.below(groups as u64) as usize } else { topic };
                        &words[g][rng.below(size as u64) as usize][..]
                    })
                    .collect()
            })
            .collect();
        Corpus::from_sentences(text, 1).unwrap()
    }

    fn small(epochs: usize) -> GloveConfig {
        GloveConfig { dim: 16, epochs, window: 5, ..Default::default() }
    }

    fn cosine(a: &[f32], b: &[f32]) -> f64 {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
        let n = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
        dot / (n(a) * n(b))
    }

    /// Fraction of words whose nearest neighbour by cosine (other than itself) is in its own topic.
    fn topic_accuracy(v: &WordVectors) -> f64 {
        let topic = |w: &str| w.split('w').next().unwrap_or_default().to_string();
        let mut hits = 0;
        for i in 0..v.len() {
            let best = (0..v.len())
                .filter(|&j| j != i)
                .max_by(|&a, &b| cosine(v.row(i), v.row(a)).total_cmp(&cosine(v.row(i), v.row(b))))
                .unwrap();
            hits += (topic(&v.words()[i]) == topic(&v.words()[best])) as usize;
        }
        hits as f64 / v.len() as f64
    }

    #[test]
    fn planted_topics_are_nearest_neighbours() {
        let c = topic_corpus(3, 8, 600, 0.3, 11);
        let dir = tempfile::tempdir().unwrap();
        let (v, report) = train(&c, &small(25), dir.path(), false).unwrap();
        assert_eq!(v.len(), 24);
        assert_eq!(v.dim(), 16);
        let acc = topic_accuracy(&v);
        assert_eq!(acc, 1.0, "every word's nearest neighbour shares its topic (cost {:?})", report.cost);
        // The test can fail: without learning (eta = 0, the vectors stay at their random start), it does.
        let (v0, _) = train(&c, &GloveConfig { eta: 0.0, ..small(25) }, dir.path(), false).unwrap();
        let acc0 = topic_accuracy(&v0);
        assert!(acc0 < 0.7, "untrained vectors should not find the topics (accuracy {acc0})");
    }

    #[test]
    fn cost_falls_and_matches_an_independent_computation() {
        let c = topic_corpus(3, 20, 1500, 0.3, 5);
        let dir = tempfile::tempdir().unwrap();
        let cfg = small(25);
        let counts = cooccur::count(&c, &cfg.cooccur(), dir.path(), false).unwrap();
        let records = counts.records.clone();
        let (model, report) = fit(counts, &cfg, false).unwrap();
        let cost = &report.cost;
        assert_eq!(cost.len(), 25);
        assert!(cost.windows(2).all(|w| w[1] < w[0]), "cost falls every epoch: {cost:?}");
        assert!(cost[24] < 0.2 * cost[0], "{cost:?}");
        assert_eq!(report.skipped, 0);
        assert_eq!(report.records as usize, records.len());
        // J on the final parameters, recomputed here from W, W̃ and the biases.
        let d = model.dim;
        let mut j = 0f64;
        for r in &records {
            let (i, k) = (r.i as usize, r.j as usize);
            let mut diff = model.b[i] as f64 + model.b_ctx[k] as f64 - (r.x as f64).ln();
            for b in 0..d {
                diff += model.w[i * d + b] as f64 * model.w_ctx[k * d + b] as f64;
            }
            let f = if r.x as f64 >= 100.0 { 1.0 } else { (r.x as f64 / 100.0).powf(0.75) };
            j += f * diff * diff;
        }
        let mean_half_j = 0.5 * j / records.len() as f64;
        assert!((mean_half_j - report.final_cost).abs() < 1e-5 * mean_half_j, "{mean_half_j} vs {}", report.final_cost);
        assert!((model.cost(&records, 100.0, 0.75) - mean_half_j).abs() < 1e-9 * mean_half_j);
        // The last epoch's running cost (summed while the epoch updates) is a little above the cost at its end.
        assert!(
            report.final_cost < cost[24] && report.final_cost > 0.9 * cost[24],
            "{} vs {cost:?}",
            report.final_cost
        );
    }

    #[test]
    fn one_thread_is_bit_identical_and_threads_still_learn() {
        let c = topic_corpus(3, 20, 1500, 0.3, 9);
        let dir = tempfile::tempdir().unwrap();
        let (a, ra) = train(&c, &small(25), dir.path(), false).unwrap();
        let (b, rb) = train(&c, &small(25), dir.path(), false).unwrap();
        assert_eq!(a.data(), b.data());
        assert_eq!(ra.cost, rb.cost);
        assert!(ra.deterministic);
        let (other, _) = train(&c, &GloveConfig { seed: 2, ..small(25) }, dir.path(), false).unwrap();
        assert_ne!(a.data(), other.data());
        // Hogwild on two threads: not reproducible, but it learns as well.
        let (h, rh) = train(&c, &GloveConfig { threads: 2, ..small(25) }, dir.path(), false).unwrap();
        assert!(!rh.deterministic && h.data().iter().all(|x| x.is_finite()));
        let (first, last) = (rh.cost[0], rh.cost[24]);
        assert!(last < 0.2 * first && (last - ra.cost[24]).abs() < 0.2 * ra.cost[24], "{:?} vs {:?}", rh.cost, ra.cost);
        assert_eq!(a.words(), c.vocab.words());
        assert_eq!(a.metadata.get("model").map(String::as_str), Some("glove"));
    }

    #[test]
    fn settings_are_checked() {
        let e = serde_json::from_str::<GloveConfig>(r#"{"dims": 10}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field"), "{e}");
        let cfg: GloveConfig = serde_json::from_str(r#"{"dim": 10, "window": 4}"#).unwrap();
        assert_eq!((cfg.dim, cfg.window, cfg.epochs, cfg.x_max), (10, 4, 25, 100.0));
        let c = topic_corpus(1, 3, 4, 0.0, 1);
        let dir = tempfile::tempdir().unwrap();
        for bad in [
            GloveConfig { dim: 0, ..small(1) },
            GloveConfig { threads: 0, ..small(1) },
            GloveConfig { x_max: 0.0, ..small(1) },
        ] {
            assert!(train(&c, &bad, dir.path(), false).is_err());
        }
        let lonely = Corpus::from_sentences([["a"], ["b"]], 1).unwrap();
        let e = train(&lonely, &small(1), dir.path(), false).unwrap_err().to_string();
        assert!(e.contains("no co-occurrences"), "{e}");
    }
}
