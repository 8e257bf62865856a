//! What the word2vec and fastText trainers share: the noise distribution of negative sampling, frequent-word
//! sub-sampling, the linear learning-rate decay, the sigmoid table, a fast seeded generator, row-aligned
//! parameter matrices with lock-free (Hogwild) access, and the negative-sampling update itself.
//!
//! Formulas (Mikolov, Sutskever, Chen, Corrado & Dean 2013, "Distributed Representations of Words and Phrases
//! and their Compositionality", NeurIPS; as implemented in `word2vec.c` and gensim):
//! - **noise distribution**: `P_n(w) = c(w)^p / Σ_v c(v)^p` with `p = 0.75` for word2vec (fastText uses 0.5),
//!   sampled in O(1) with Walker's alias method (Vose 1991) instead of `word2vec.c`'s 10⁸-entry table;
//! - **sub-sampling**: with `t = sample · Σ_v c(v)`, a token of word `w` is kept with probability
//!   `min(1, (√(c(w)/t) + 1) · t / c(w))` (`word2vec.c`, gensim; fastText's `√(t'/f) + t'/f` with `f = c/Σc` is
//!   the same expression); `sample = 0` keeps every token;
//! - **learning rate**: `α(d) = α₀ − (α₀ − α_min) · d / D`, where `d` counts the raw tokens processed so far over
//!   all epochs and `D = epochs · tokens`;
//! - **negative-sampling step** for a hidden vector `h`, positive word `o` and noise words `n_k`: with
//!   `g = α · (label − σ(h·v'_w))`, every output row gets `v'_w += g · h` and the hidden vector's gradient
//!   accumulates `e += g · v'_w` (applied by the caller); `σ` comes from `word2vec.c`'s table (1,000 steps over
//!   `[−6, 6]`, saturated outside: `g = α · (label − 1)` above 6, `α · label` below −6). The loss estimate is
//!   `−log σ(h·v'_o) − Σ_k log σ(−h·v'_{n_k})` from a log-sigmoid table on the same grid.
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::text::codeswitch::SplitMix64;
use crate::wordvec::corpus::Corpus;

/// Sigmoid arguments beyond ±`MAX_EXP` saturate (`word2vec.c`'s `MAX_EXP`).
pub const MAX_EXP: f32 = 6.0;
/// Steps of the sigmoid table over `[−MAX_EXP, MAX_EXP]` (`word2vec.c`'s `EXP_TABLE_SIZE`).
pub const EXP_TABLE_SIZE: usize = 1000;

/// Matrix rows are padded to a multiple of this many floats (one 64-byte cache line) and start on a line.
pub const LANES: usize = 16;

/// `σ(x)` and `log σ(x)` tabulated as in `word2vec.c`: entry `i` is at `x = (2i / EXP_TABLE_SIZE − 1) · MAX_EXP`.
#[derive(Debug, Clone)]
pub struct SigmoidTable {
    /// `(σ(x), log σ(x))`, `EXP_TABLE_SIZE + 1` entries (the last one for `x = MAX_EXP` exactly).
    table: Vec<(f32, f32)>,
}

impl Default for SigmoidTable {
    fn default() -> Self {
        Self::new()
    }
}

impl SigmoidTable {
    pub fn new() -> SigmoidTable {
        let table = (0..=EXP_TABLE_SIZE)
            .map(|i| {
                let x = (i as f64 / EXP_TABLE_SIZE as f64 * 2.0 - 1.0) * MAX_EXP as f64;
                let e = x.exp();
                let s = e / (e + 1.0);
                (s as f32, s.ln() as f32)
            })
            .collect();
        SigmoidTable { table }
    }

    /// `(label − σ(f), loss)` with `word2vec.c`'s saturation beyond ±[`MAX_EXP`]; `loss` is `−log σ(f)` for
    /// `label = 1` and `−log σ(−f)` for `label = 0` (approximated by 0 and `|f|` beyond the table).
    #[inline(always)]
    pub fn gradient(&self, f: f32, label: f32) -> (f32, f32) {
        let (sig, log_sig) = if f > MAX_EXP {
            (1.0, 0.0)
        } else if f < -MAX_EXP {
            (0.0, f)
        } else {
            // f is in [-MAX_EXP, MAX_EXP] (NaN fails both tests above and saturates to index 0 here).
            let i = ((f + MAX_EXP) * (EXP_TABLE_SIZE as f32 / MAX_EXP / 2.0)) as usize;
            self.table[i.min(EXP_TABLE_SIZE)]
        };
        // log σ(−f) = log σ(f) − f
        let loss = if label > 0.0 { -log_sig } else { f - log_sig };
        (label - sig, loss)
    }
}

/// The learning rate decaying linearly from `start` to `end` over `total` raw tokens (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearDecay {
    pub start: f64,
    pub end: f64,
    pub total: u64,
}

impl LinearDecay {
    /// The rate after `done` tokens (clamped to `end` past `total`).
    pub fn at(&self, done: u64) -> f32 {
        let progress = if self.total == 0 { 1.0 } else { (done as f64 / self.total as f64).min(1.0) };
        (self.start - (self.start - self.end) * progress) as f32
    }
}

/// Probability that a token of each word survives sub-sampling (see the module docs); all 1 when `sample <= 0`.
pub fn keep_probabilities(counts: &[u64], sample: f64) -> Vec<f64> {
    let total: u64 = counts.iter().sum();
    if sample <= 0.0 || total == 0 {
        return vec![1.0; counts.len()];
    }
    let t = sample * total as f64;
    counts.iter().map(|&c| if c == 0 { 1.0 } else { ((c as f64 / t).sqrt() + 1.0) * t / c as f64 }.min(1.0)).collect()
}

/// Sub-sampling as integer thresholds: a token of word `w` is kept when a uniform `u32` is `<= threshold[w]`
/// (gensim's `sample_int`).
#[derive(Debug, Clone)]
pub struct Subsampler {
    thresholds: Vec<u32>,
}

impl Subsampler {
    pub fn new(counts: &[u64], sample: f64) -> Subsampler {
        let thresholds = keep_probabilities(counts, sample)
            .into_iter()
            .map(|p| if p >= 1.0 { u32::MAX } else { (p * u32::MAX as f64) as u32 })
            .collect();
        Subsampler { thresholds }
    }

    /// Whether a token of `word` is kept, given a uniform random `u32`.
    #[inline(always)]
    pub fn keep(&self, word: u32, random: u32) -> bool {
        random <= self.thresholds[word as usize]
    }
}

/// The noise distribution `∝ count^power` as a Walker/Vose alias table: one uniform 64-bit draw gives one
/// word in O(1) (the low 32 bits pick a column, the high 32 bits the coin).
#[derive(Debug, Clone)]
pub struct NoiseSampler {
    /// `(threshold, alias)` per column: the column's own word when the coin is below `threshold` (out of 2³²),
    /// else `alias`. Columns that are their own word entirely have `alias` = themselves.
    table: Vec<(u32, u32)>,
}

impl NoiseSampler {
    /// The alias table of `count^power`. Fails when no word has a positive count.
    pub fn new(counts: &[u64], power: f64) -> Result<NoiseSampler> {
        let weights: Vec<f64> = counts.iter().map(|&c| if c == 0 { 0.0 } else { (c as f64).powf(power) }).collect();
        let total: f64 = weights.iter().sum();
        if counts.is_empty() || total.is_nan() || total <= 0.0 || counts.len() > u32::MAX as usize {
            return Err(Error::Invalid(format!(
                "negative sampling needs 1 to 2^32 - 1 words with positive counts (got {} words)",
                counts.len()
            )));
        }
        let n = counts.len();
        // Vose's alias method on the scaled probabilities n·p_i.
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut table: Vec<(u32, u32)> = (0..n as u32).map(|i| (u32::MAX, i)).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            table[s] = (to_threshold(scaled[s]), l as u32);
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Whatever is left is 1 up to rounding: the column keeps its own word.
        Ok(NoiseSampler { table })
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// One word drawn from the noise distribution, given a uniform random `u64`.
    #[inline(always)]
    pub fn sample(&self, random: u64) -> u32 {
        let column = ((random & 0xFFFF_FFFF) * self.table.len() as u64) >> 32;
        let (threshold, alias) = self.table[column as usize];
        if ((random >> 32) as u32) < threshold {
            column as u32
        } else {
            alias
        }
    }

    /// The exact distribution the table draws from (for tests and reports).
    pub fn probabilities(&self) -> Vec<f64> {
        let n = self.table.len();
        let mut p = vec![0.0; n];
        let two32 = 4_294_967_296.0;
        for (i, &(threshold, alias)) in self.table.iter().enumerate() {
            // Columns are chosen by ⌊r·n / 2³²⌋ for a uniform 32-bit r: column i gets ⌈(i+1)·2³²/n⌉ − ⌈i·2³²/n⌉ values.
            let lo = ((i as u128) << 32).div_ceil(n as u128);
            let hi = (((i + 1) as u128) << 32).div_ceil(n as u128);
            let column = (hi - lo) as f64 / two32;
            let own = threshold as f64 / two32;
            p[i] += column * own;
            p[alias as usize] += column * (1.0 - own);
        }
        p
    }
}

fn to_threshold(p: f64) -> u32 {
    (p.clamp(0.0, 1.0) * 4_294_967_296.0).min(u32::MAX as f64) as u32
}

/// The crate's SplitMix64 (Steele, Lea & Flood 2014), seeded per stream and inlined into the hot loops; one
/// generator per training thread.
#[derive(Debug, Clone)]
pub struct Rng {
    inner: SplitMix64,
}

impl Rng {
    /// A generator for stream `stream` of `seed` (e.g. one per epoch and thread), decorrelated by mixing.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut mix = SplitMix64::new(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
        mix.next_u64();
        Rng { inner: SplitMix64::new(mix.next_u64()) }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// Uniform in `0..n` by multiply-shift of 32 random bits (bias below `n / 2³²`).
    #[inline(always)]
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform_f32(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32);
        lo + (hi - lo) * u
    }
}

/// One 64-byte line of floats; matrices are made of these so that rows start on cache lines.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, align(64))]
struct Line([f32; LANES]);

/// A `rows × dim` f32 matrix whose rows are padded with zeros to `stride` (a multiple of [`LANES`]) and start
/// on a cache line. The padding stays zero under the training updates (they only add multiples of other rows).
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    rows: usize,
    dim: usize,
    stride: usize,
    lines: Vec<Line>,
}

impl Matrix {
    pub fn zeros(rows: usize, dim: usize) -> Matrix {
        let stride = dim.div_ceil(LANES).max(1) * LANES;
        Matrix { rows, dim, stride, lines: vec![Line([0.0; LANES]); rows * stride / LANES] }
    }

    /// Entries uniform in `[−scale, scale)`, drawn row after row from `Rng::new(seed, stream)`.
    pub fn uniform(rows: usize, dim: usize, scale: f32, seed: u64, stream: u64) -> Matrix {
        let mut m = Matrix::zeros(rows, dim);
        let mut rng = Rng::new(seed, stream);
        for r in 0..rows {
            for v in m.row_mut(r) {
                *v = rng.uniform_f32(-scale, scale);
            }
        }
        m
    }

    /// A matrix from row-major `[rows, dim]` values.
    pub fn from_dense(rows: usize, dim: usize, data: &[f32]) -> Result<Matrix> {
        if data.len() != rows * dim {
            return Err(Error::Invalid(format!("{} values for a {rows} × {dim} matrix", data.len())));
        }
        let mut m = Matrix::zeros(rows, dim);
        for r in 0..rows {
            m.row_mut(r).copy_from_slice(&data[r * dim..(r + 1) * dim]);
        }
        Ok(m)
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Floats from one row's start to the next (`dim` rounded up to [`LANES`]).
    pub fn stride(&self) -> usize {
        self.stride
    }

    fn flat(&self) -> &[f32] {
        // SAFETY: `Line` is `repr(C)` over `[f32; LANES]` with no padding (64 bytes), so the lines are a
        // contiguous run of `lines.len() * LANES` initialised f32.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const f32, self.lines.len() * LANES) }
    }

    fn flat_mut(&mut self) -> &mut [f32] {
        // SAFETY: as in `flat`.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr() as *mut f32, self.lines.len() * LANES) }
    }

    /// Row `r` without its padding.
    pub fn row(&self, r: usize) -> &[f32] {
        &self.flat()[r * self.stride..r * self.stride + self.dim]
    }

    pub fn row_mut(&mut self, r: usize) -> &mut [f32] {
        let (s, d) = (self.stride, self.dim);
        &mut self.flat_mut()[r * s..r * s + d]
    }

    /// Row-major `[rows, dim]` values without padding.
    pub fn to_dense(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.rows * self.dim);
        for r in 0..self.rows {
            out.extend_from_slice(self.row(r));
        }
        out
    }

    /// A raw handle for lock-free updates from several threads (see [`Shared`]).
    pub fn shared(&mut self) -> Shared {
        Shared { ptr: self.lines.as_mut_ptr() as *mut f32, rows: self.rows, stride: self.stride }
    }
}

/// A raw pointer to a [`Matrix`]'s rows that training threads update without locks — Hogwild (Recht, Ré, Wright
/// & Niu 2011), as `word2vec.c`, fastText and gensim do. Two threads may read and write the same row at once;
/// the race only loses or mixes some float updates (it is the algorithm), it never touches memory outside the
/// matrix, and it does not occur with one thread.
#[derive(Debug, Clone, Copy)]
pub struct Shared {
    ptr: *mut f32,
    rows: usize,
    stride: usize,
}

// SAFETY: see the type docs; the matrix outlives the scoped threads that hold a `Shared` (the trainers create
// it from a `&mut Matrix` borrowed for the whole `std::thread::scope`).
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Row `r`, padding included (`stride` floats).
    ///
    /// # Safety
    /// `r < rows`, the matrix is alive, and the caller holds no other reference to the same row in this thread
    /// while using the slice (other threads may race on it: see the type docs).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn row<'a>(&self, r: usize) -> &'a mut [f32] {
        debug_assert!(r < self.rows);
        std::slice::from_raw_parts_mut(self.ptr.add(r * self.stride), self.stride)
    }
}

/// `a · b` over equal-length slices whose length is a multiple of [`LANES`] (padded rows), summed in a fixed
/// order (two 8-lane accumulators, then a fixed tree), so the result does not depend on the vector width.
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (mut lo, mut hi) = ([0f32; 8], [0f32; 8]);
    for (x, y) in a.chunks_exact(LANES).zip(b.chunks_exact(LANES)) {
        let (x, y) = (&x[..LANES], &y[..LANES]);
        for k in 0..8 {
            lo[k] += x[k] * y[k];
            hi[k] += x[k + 8] * y[k + 8];
        }
    }
    let mut h = [0f32; 8];
    for k in 0..8 {
        h[k] = lo[k] + hi[k];
    }
    let q = [h[0] + h[4], h[1] + h[5], h[2] + h[6], h[3] + h[7]];
    (q[0] + q[2]) + (q[1] + q[3])
}

/// [`dot`] with AVX2 intrinsics: the same lanes, products and sums in the same order, so the same result.
///
/// # Safety
/// The CPU has AVX2; `a` and `b` have equal lengths, multiples of [`LANES`].
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
pub unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len()) / LANES * LANES;
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let (mut lo, mut hi) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let mut i = 0;
    while i < n {
        lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i))));
        hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_loadu_ps(pa.add(i + 8)), _mm256_loadu_ps(pb.add(i + 8))));
        i += LANES;
    }
    let h = _mm256_add_ps(lo, hi);
    let q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps::<1>(h)); // [h0+h4, h1+h5, h2+h6, h3+h7]
    let s = _mm_add_ps(q, _mm_movehl_ps(q, q)); // [q0+q2, q1+q3, …]
    _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s)))
}

/// [`dot`], through [`dot_avx2`] when `AVX2` (the caller guarantees the CPU has it).
#[inline(always)]
pub fn dot_with<const AVX2: bool>(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        debug_assert!(a.len() == b.len() && a.len().is_multiple_of(LANES));
        // SAFETY: AVX2 is only set by kernels that checked the CPU; rows are padded to LANES.
        return unsafe { dot_avx2(a, b) };
    }
    dot(a, b)
}

/// Asks the CPU to start loading the cache lines of row `r` of `m` (a hint: no effect on results).
#[inline(always)]
pub fn prefetch_row(m: Shared, r: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = m.ptr.wrapping_add(r * m.stride) as *const i8;
        for line in 0..m.stride / LANES {
            // SAFETY: prefetching is a hint and never faults, even on an invalid address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(line * 64)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (m, r);
}

/// `y += a · x`.
#[inline(always)]
pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// What one negative-sampling step needs besides its vectors.
pub struct NegativeSampling<'a> {
    pub negative: usize,
    pub noise: &'a NoiseSampler,
    pub sigmoid: &'a SigmoidTable,
}

impl NegativeSampling<'_> {
    /// One step (see the module docs) of `hidden` against the positive word `target` and `negative` noise words
    /// (a noise word equal to `target` is skipped, as in `word2vec.c`): updates the rows of `output` in place and
    /// adds the hidden vector's gradient to `grad`. Returns the loss of the step.
    ///
    /// # Safety
    /// `hidden` and `grad` are padded rows (`output.stride()` floats) that are not rows of `output`; `target`
    /// and every noise word are rows of `output`.
    #[inline(always)]
    pub unsafe fn step<const AVX2: bool>(
        &self,
        hidden: &[f32],
        grad: &mut [f32],
        output: Shared,
        target: u32,
        alpha: f32,
        rng: &mut Rng,
    ) -> f32 {
        // Noise words are drawn in batches whose rows are prefetched before any is used (random rows of a large
        // output matrix are cache misses; issued together they overlap). Same draws, same order as one by one.
        const BATCH: usize = 16;
        let (mut loss, mut left, mut first) = (0.0, self.negative, true);
        let mut batch = [0u32; BATCH];
        loop {
            let n = left.min(BATCH);
            for b in batch.iter_mut().take(n) {
                *b = self.noise.sample(rng.next_u64());
                prefetch_row(output, *b as usize);
            }
            if first {
                // The positive word, while the noise rows load.
                loss += self.update::<AVX2>(hidden, grad, output, target, 1.0, alpha);
                first = false;
            }
            for &word in batch.iter().take(n) {
                if word != target {
                    loss += self.update::<AVX2>(hidden, grad, output, word, 0.0, alpha);
                }
            }
            left -= n;
            if left == 0 {
                return loss;
            }
        }
    }

    /// One output row: `g = α · (label − σ(h·v'))`, `grad += g · v'`, `v' += g · h`; returns the loss.
    #[inline(always)]
    unsafe fn update<const AVX2: bool>(
        &self,
        hidden: &[f32],
        grad: &mut [f32],
        output: Shared,
        word: u32,
        label: f32,
        alpha: f32,
    ) -> f32 {
        let out = output.row(word as usize);
        let f = dot_with::<AVX2>(hidden, out);
        let (err, loss) = self.sigmoid.gradient(f, label);
        let g = err * alpha;
        for ((e, o), h) in grad.iter_mut().zip(out.iter_mut()).zip(hidden) {
            *e += g * *o;
            *o += g * h;
        }
        loss
    }
}

/// Whether the CPU runs AVX2; the trainers then call their sentence kernels compiled for it (256-bit lanes).
/// Both builds compute the same lanes in the same order, so the results are bit-identical either way.
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The epoch loop of both trainers: what it needs from their configs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub epochs: usize,
    pub threads: usize,
    pub seed: u64,
    pub sample: f64,
    pub alpha: f64,
    pub min_alpha: f64,
}

/// What a training run did. Timed: the epochs only (parameter initialisation and the noise table excluded, as
/// gensim's `train()` excludes `build_vocab`).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct TrainReport {
    /// Wall seconds of the epochs.
    pub seconds: f64,
    /// Corpus tokens processed over all epochs, before sub-sampling (`epochs · tokens`; gensim's raw words).
    pub raw_words: u64,
    /// Tokens kept by sub-sampling and trained on (gensim's effective words).
    pub effective_words: u64,
    /// `raw_words / seconds`.
    pub words_per_s: f64,
    /// `effective_words / seconds`.
    pub effective_words_per_s: f64,
    /// Positive (input, output) training pairs.
    pub pairs: u64,
    /// Mean negative-sampling loss per positive pair (its negatives included), epoch by epoch.
    pub epoch_losses: Vec<f64>,
    pub threads: usize,
}

/// The state of one training thread that a sentence kernel sees.
#[derive(Debug, Clone)]
pub struct Worker {
    pub rng: Rng,
    /// Learning rate for the current sentence.
    pub alpha: f32,
    /// Loss summed over this thread's pairs (see [`TrainReport::epoch_losses`]).
    pub loss: f64,
    pub pairs: u64,
}

/// Runs `schedule.epochs` epochs over `corpus`: each thread takes a contiguous chunk of sentences (about equal
/// tokens) with its own generator (`Rng::new(seed, epoch · 2³² + thread)`), sub-samples each sentence and hands
/// the kept ids to `kernel` together with the learning rate of the tokens processed so far by all threads (a
/// shared counter, as `word2vec.c`'s `word_count_actual`). `init` makes each thread's scratch space. With one
/// thread everything runs on the calling thread, in corpus order, and is deterministic.
pub fn train_epochs<S, I, F>(
    corpus: &Corpus,
    schedule: &Schedule,
    name: &str,
    progress: bool,
    init: I,
    kernel: F,
) -> TrainReport
where
    I: Fn() -> S + Sync,
    F: Fn(&[u32], &mut Worker, &mut S) + Sync,
{
    let threads = schedule.threads.max(1);
    let n_tokens = corpus.n_tokens() as u64;
    let raw_words = n_tokens * schedule.epochs as u64;
    let decay = LinearDecay { start: schedule.alpha, end: schedule.min_alpha, total: raw_words };
    let subsampler = Subsampler::new(corpus.vocab.counts(), schedule.sample);
    let offsets = corpus.offsets();
    // Contiguous chunks of sentences with about n_tokens / threads tokens each.
    let n_sent = corpus.n_sentences();
    let mut bounds = vec![0usize];
    for k in 1..threads {
        let target = (n_tokens as u128 * k as u128 / threads as u128) as usize;
        let s = offsets.partition_point(|&o| o < target).min(n_sent);
        bounds.push(s.max(*bounds.last().unwrap_or(&0)));
    }
    bounds.push(n_sent);
    let bar = progress.then(|| {
        let b = crate::progress::bar(
            raw_words,
            &format!("{name} [{{bar:30}}] {{human_pos}}/{{human_len}} words {{per_sec}} eta {{eta}} {{msg}}"),
        );
        b.set_message(format!("{threads} thread(s)"));
        b
    });
    let done = AtomicU64::new(0);
    let start = Instant::now();
    let (mut effective, mut pairs, mut epoch_losses) = (0u64, 0u64, Vec::with_capacity(schedule.epochs));
    for epoch in 0..schedule.epochs {
        let work = |t: usize| -> (u64, f64, u64) {
            let mut w = Worker {
                rng: Rng::new(schedule.seed, ((epoch as u64) << 32) | t as u64),
                alpha: schedule.alpha as f32,
                loss: 0.0,
                pairs: 0,
            };
            let mut scratch = init();
            let (mut kept, mut kept_total, mut unreported) = (Vec::new(), 0u64, 0u64);
            for s in bounds[t]..bounds[t + 1] {
                let sentence = corpus.sentence(s);
                kept.clear();
                for &id in sentence {
                    if subsampler.keep(id, w.rng.next_u64() as u32) {
                        kept.push(id);
                    }
                }
                let before = done.fetch_add(sentence.len() as u64, Ordering::Relaxed);
                w.alpha = decay.at(before);
                kept_total += kept.len() as u64;
                kernel(&kept, &mut w, &mut scratch);
                unreported += sentence.len() as u64;
                if unreported >= 10_000 {
                    if let Some(b) = &bar {
                        b.inc(unreported);
                    }
                    unreported = 0;
                }
            }
            if let Some(b) = &bar {
                b.inc(unreported);
            }
            (kept_total, w.loss, w.pairs)
        };
        let results: Vec<(u64, f64, u64)> = if threads == 1 {
            vec![work(0)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads).map(|t| scope.spawn(move || work(t))).collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
            })
        };
        let (e, loss, p) = results.iter().fold((0, 0.0, 0), |a, r| (a.0 + r.0, a.1 + r.1, a.2 + r.2));
        effective += e;
        pairs += p;
        epoch_losses.push(if p == 0 { f64::NAN } else { loss / p as f64 });
    }
    if let Some(b) = &bar {
        b.finish();
    }
    let seconds = start.elapsed().as_secs_f64();
    TrainReport {
        seconds,
        raw_words,
        effective_words: effective,
        words_per_s: raw_words as f64 / seconds,
        effective_words_per_s: effective as f64 / seconds,
        pairs,
        epoch_losses,
        threads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learning_rate_decays_linearly_between_its_endpoints() {
        let s = LinearDecay { start: 0.025, end: 0.0001, total: 1000 };
        assert_eq!(s.at(0), 0.025f32);
        assert_eq!(s.at(1000), 0.0001f32);
        assert_eq!(s.at(5000), 0.0001f32, "clamped past the end");
        assert!((s.at(500) as f64 - (0.025 + 0.0001) / 2.0).abs() < 1e-7);
        assert!(s.at(250) > s.at(251));
    }

    #[test]
    fn subsampling_follows_the_word2vec_formula() {
        let counts = [1_000_000u64, 10_000, 100, 1];
        let total = counts.iter().sum::<u64>() as f64;
        let sample = 1e-3;
        let p = keep_probabilities(&counts, sample);
        for (c, p) in counts.iter().zip(&p) {
            let (c, t) = (*c as f64, sample * total);
            let expected = ((c / t).sqrt() + 1.0) * t / c;
            assert!((p - expected.min(1.0)).abs() < 1e-12, "{c}: {p} vs {expected}");
        }
        assert!(p[0] < 0.05 && p[1] < 1.0 && p[2] == 1.0 && p[3] == 1.0, "{p:?}");
        assert_eq!(keep_probabilities(&counts, 0.0), vec![1.0; 4]);
        // Thresholds: the rare words always kept, the frequent one about p[0] of the time.
        let s = Subsampler::new(&counts, sample);
        assert!(s.keep(3, u32::MAX) && s.keep(2, u32::MAX) && !s.keep(0, u32::MAX));
        let mut rng = Rng::new(1, 0);
        let kept = (0..100_000).filter(|_| s.keep(0, rng.next_u64() as u32)).count() as f64 / 100_000.0;
        assert!((kept - p[0]).abs() < 0.005, "{kept} vs {}", p[0]);
    }

    #[test]
    fn noise_follows_count_to_the_three_quarters() {
        let counts = [500u64, 120, 33, 7, 1, 0, 64];
        let z: f64 = counts.iter().map(|&c| (c as f64).powf(0.75)).sum();
        let noise = NoiseSampler::new(&counts, 0.75).unwrap();
        let exact = noise.probabilities();
        for (c, p) in counts.iter().zip(&exact) {
            assert!((p - (*c as f64).powf(0.75) / z).abs() < 1e-8, "count {c}: {p}");
        }
        assert_eq!(exact[5], 0.0, "a zero count is never drawn");
        // Empirical frequencies agree within 5 standard errors.
        let mut rng = Rng::new(7, 0);
        let n = 400_000;
        let mut hits = [0usize; 7];
        for _ in 0..n {
            hits[noise.sample(rng.next_u64()) as usize] += 1;
        }
        for (h, p) in hits.iter().zip(&exact) {
            let f = *h as f64 / n as f64;
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!((f - p).abs() <= 5.0 * se + 1e-9, "{f} vs {p}");
        }
        // fastText's power 0.5 and the uniform power 0 work too.
        let p0 = NoiseSampler::new(&[3, 9], 0.0).unwrap().probabilities();
        assert!((p0[0] - 0.5).abs() < 1e-9 && (p0[1] - 0.5).abs() < 1e-9);
        assert!(NoiseSampler::new(&[0, 0], 0.75).is_err());
        assert!(NoiseSampler::new(&[], 0.75).is_err());
    }

    #[test]
    fn sigmoid_table_matches_the_function_and_saturates() {
        let t = SigmoidTable::new();
        for &x in &[-5.9f32, -1.0, 0.0, 0.5, 3.0, 5.99] {
            let s = 1.0 / (1.0 + (-x).exp());
            let (g, loss) = t.gradient(x, 1.0);
            assert!((1.0 - g - s).abs() < 0.01, "σ({x})");
            assert!((loss + s.ln()).abs() < 0.02, "−log σ({x})");
            let (g0, loss0) = t.gradient(x, 0.0);
            assert!((g0 + s).abs() < 0.01);
            assert!((loss0 + (1.0 - s).ln()).abs() < 0.02 * (1.0 + x.abs()), "−log σ(−{x}): {loss0}");
        }
        assert_eq!(t.gradient(6.0, 1.0).0, 1.0 - t.table[EXP_TABLE_SIZE].0);
        assert_eq!(t.gradient(7.0, 1.0), (0.0, 0.0));
        assert_eq!(t.gradient(-7.0, 0.0), (0.0, 0.0));
        assert_eq!(t.gradient(-7.0, 1.0), (1.0, 7.0));
        assert_eq!(t.gradient(f32::NAN, 1.0).0, 1.0 - t.table[0].0);
    }

    #[test]
    fn matrices_are_padded_aligned_and_round_trip() {
        let data: Vec<f32> = (0..3 * 20).map(|i| i as f32).collect();
        let mut m = Matrix::from_dense(3, 20, &data).unwrap();
        assert_eq!(m.stride(), 32);
        assert_eq!(m.to_dense(), data);
        let s = m.shared();
        let row = unsafe { s.row(1) };
        assert_eq!(row.as_ptr() as usize % 64, 0);
        assert_eq!(&row[..20], &data[20..40]);
        assert!(row[20..].iter().all(|&v| v == 0.0));
        let u = Matrix::uniform(4, 5, 0.1, 3, 0);
        assert!(u.to_dense().iter().all(|v| (-0.1..0.1).contains(v)));
        assert_eq!(u, Matrix::uniform(4, 5, 0.1, 3, 0));
        assert_ne!(u, Matrix::uniform(4, 5, 0.1, 4, 0));
        let a: Vec<f32> = (0..32).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..32).map(|i| (i as f32 * 0.11).cos()).collect();
        let naive: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
        assert!((dot(&a, &b) as f64 - naive).abs() < 1e-5);
        if has_avx2() {
            assert_eq!(unsafe { dot_avx2(&a, &b) }.to_bits(), dot(&a, &b).to_bits());
        }
    }
}
