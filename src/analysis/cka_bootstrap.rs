//! Bootstrap replicates of layer-wise linear CKA over the examples, so that CKA (Kornblith et al. 2019), which has
//! no per-item form, gets a confidence interval over its test items at a single seed.
//!
//! A replicate resamples the `n` rows (sentences) with replacement, the same rows on both sides, and recomputes
//! linear CKA on them: with `X*`, `Y*` the resampled rows, column-centred, `‖Y*ᵀX*‖²_F / (‖X*ᵀX*‖_F · ‖Y*ᵀY*‖_F)`
//! (the feature-space form of [`super::cka`]). The resamples come from [`super::bootstrap::resample_indices`] with
//! the caller's seed, so every CKA of one run on the same `n` sentences (bilingual, monolingual and random
//! encoders, every pair of a multi-way parallel set) is resampled identically: their differences — Bilingual −
//! Monolingual, a gap of one pair minus another's, bottom layers minus top layers — are bootstrapped per resample
//! (a paired bootstrap, Efron & Tibshirani 1993 ch. 13), not by comparing two separate intervals.
//!
//! **What the interval covers.** The choice of test sentences only: the model (its training seed) is fixed, as for
//! every one-seed interval of this project; `--seeds N` adds training variance.
//!
//! **Bias.** Biased-HSIC linear CKA of `n` rows sits above its large-`n` value by a term that shrinks with `n`, and a
//! resample, whose duplicated rows leave about `0.632·n` distinct ones, sits further above (at 24 sentences of width
//! 32 every replicate lay above the estimate). [`super::bootstrap::replicate_interval`] therefore shifts the
//! replicates' percentiles by their mean minus the estimate; in a paired difference of two CKAs the shift largely
//! cancels anyway.
//!
//! Computation, exact and cheaper than gathering `n` rows per resample: a resample is its distinct rows `u` with the
//! counts `c` of how often it drew them (about `0.632·n` rows), so with the weighted mean `μ = Σ cᵢxᵢ / n` the centred
//! products are `X*ᵀX* = Σ cᵢ(xᵢ − μ)(xᵢ − μ)ᵀ = AᵀA` with `A = diag(√c)(X_u − μ)`, and `Y*ᵀX* = BᵀA` likewise — about
//! 63 % of the gathered form's arithmetic. Resamples are batched [`RESAMPLES_PER_BATCH`] at a time, padded to the
//! batch's most distinct rows with rows of weight 0; f32 features stay f32 (two-pass weighted centring, batched
//! products, squared norms summed in f64); f64 stays f64.
//!
//! **Sample-space form**, used when it is cheaper (see [`Form::choose`]): with the Gram matrices `K = XXᵀ`,
//! `L = YYᵀ` of all `n` rows computed once per layer, a resample with counts `c` (zero for rows it did not draw) has
//!
//! ```text
//! ‖Y*ᵀX*‖²_F = Σᵢⱼ cᵢcⱼ K̃ᵢⱼ L̃ᵢⱼ = cᵀ(K∘L)c − (2/n) Σᵢ cᵢ(Kc)ᵢ(Lc)ᵢ + (cᵀKc)(cᵀLc)/n²
//! ```
//!
//! (`K̃`, `L̃`: the Gram matrices of the rows centred on the resample's weighted mean; Gretton et al. 2005's biased
//! HSIC with weights), and `‖X*ᵀX*‖²_F`, `‖Y*ᵀY*‖²_F` likewise with `K∘K`, `L∘L`. Each resample then costs one
//! product of its counts with `[K, L, K∘L, K∘K, L∘L]` (`5n²` multiply-adds) where the feature-space form costs about
//! `0.632·n·(d₁² + d₁d₂ + d₂²)`: at 1,000 sentences of width 384, about 56 times less. It runs in f64 on features
//! centred by their column means first (CKA does not change; the cancellation between the three terms shrinks), and
//! holds `5n²` f64 values, so it is used up to [`SAMPLE_SPACE_MAX_ROWS`] rows.
use super::bootstrap::resample_indices;
use super::cka::{check_stacks, compute_kind};
use super::{matrix_float, to_vec_f64};
use crate::error::{Error, Result};
use tch::{Device, Kind, Tensor};

/// Resamples gathered and multiplied together (bounds memory at `RESAMPLES_PER_BATCH · n · (d1 + d2)` values).
pub const RESAMPLES_PER_BATCH: usize = 32;

/// The most rows for the sample-space form (`5n²` f64 values: about 1.6 GiB at this `n`).
pub const SAMPLE_SPACE_MAX_ROWS: i64 = 6500;

/// Resamples per product in the sample-space form.
const SAMPLE_SPACE_BATCH: usize = 128;

/// How replicates are computed; both give the same values (to rounding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Cross products of the resampled features (`d × d` per resample).
    FeatureSpace,
    /// Weighted sums over the Gram matrices of all rows (`n × n`, once per layer).
    SampleSpace,
}

impl Form {
    /// The cheaper form for `n` rows of widths `d1`, `d2` (see the module docs), within the memory bound.
    pub fn choose(n: i64, d1: i64, d2: i64) -> Form {
        let feature = 0.632 * n as f64 * (d1 * d1 + d1 * d2 + d2 * d2) as f64;
        let sample = 5.0 * (n * n) as f64;
        if n <= SAMPLE_SPACE_MAX_ROWS && sample < feature {
            Form::SampleSpace
        } else {
            Form::FeatureSpace
        }
    }
}

/// The resamples as count matrices, [`SAMPLE_SPACE_BATCH`] at a time: row `r` holds how often resample `r` drew each
/// of the `n` rows (f64, on `device`).
/// # Shapes
/// → each `[resamples in the batch, n]`.
fn count_batches(draws: &[usize], n: usize, resamples: usize, device: Device) -> Vec<Tensor> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < resamples {
        let b = SAMPLE_SPACE_BATCH.min(resamples - start);
        let mut counts = vec![0f64; b * n];
        for r in 0..b {
            for &i in &draws[(start + r) * n..(start + r + 1) * n] {
                counts[r * n + i] += 1.0;
            }
        }
        out.push(Tensor::from_slice(&counts).view([b as i64, n as i64]).to_device(device));
        start += b;
    }
    out
}

/// One layer's replicates in sample space (see the module docs), one value per row of each count batch.
/// # Shapes
/// `x` [n, d1], `y` [n, d2], each of `counts` [b, n] → Σ b values.
fn sample_space_layer(x: &Tensor, y: &Tensor, counts: &[Tensor]) -> Result<Vec<f64>> {
    let centre = |t: &Tensor| {
        let t = t.to_kind(Kind::Double);
        &t - t.mean_dim([0i64].as_slice(), true, Kind::Double)
    };
    let (x, y) = (centre(x), centre(y));
    let n = x.size()[0];
    let k = x.matmul(&x.tr());
    let l = y.matmul(&y.tr());
    let kernels = Tensor::cat(&[&k, &l, &(&k * &l), &(&k * &k), &(&l * &l)], 1); // [n, 5n]
    let nf = n as f64;
    let mut out = Vec::new();
    for c in counts {
        let prod = c.matmul(&kernels); // [b, 5n]
        let part = |j: i64| prod.narrow(1, j * n, n);
        let (kc, lc) = (part(0), part(1));
        let dot = |t: &Tensor| (c * t).sum_dim_intlist([1i64].as_slice(), false, Kind::Double);
        let (s_k, s_l) = (dot(&kc), dot(&lc));
        let hsic = |quad: Tensor, a: &Tensor, b2: &Tensor, sa: &Tensor, sb: &Tensor| {
            quad - dot(&(a * b2)) * (2.0 / nf) + sa * sb / (nf * nf)
        };
        let xy = hsic(dot(&part(2)), &kc, &lc, &s_k, &s_l);
        let xx = hsic(dot(&part(3)), &kc, &kc, &s_k, &s_k);
        let yy = hsic(dot(&part(4)), &lc, &lc, &s_l, &s_l);
        out.extend(to_vec_f64(&(xy / (xx.sqrt() * yy.sqrt())))?);
    }
    Ok(out)
}

/// One layer's replicates in feature space, one value per resample of each weighted batch.
/// # Shapes
/// `x` [n, d1], `y` [n, d2] (one kind) → Σ resamples values.
fn feature_space_layer(x: &Tensor, y: &Tensor, batches: &[Batch], n: i64, kind: Kind) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for batch in batches {
        let xb = weighted_centred(x, batch, n, kind);
        let yb = weighted_centred(y, batch, n, kind);
        let xy = batched_cross_sq(&xb, &yb);
        let xx = batched_cross_sq(&xb, &xb);
        let yy = batched_cross_sq(&yb, &yb);
        out.extend(to_vec_f64(&(xy / (xx.sqrt() * yy.sqrt())))?);
    }
    Ok(out)
}

/// The resamples of a run, laid out once for the form that computes every layer's replicates.
enum Prepared {
    FeatureSpace(Vec<Batch>),
    SampleSpace(Vec<Tensor>),
}

/// A batch of resamples in weighted form: each resample's distinct rows, padded to `rows` with row 0 at count 0.
struct Batch {
    resamples: i64,
    rows: i64,
    /// Row indices, resample by resample. [resamples · rows]
    index: Tensor,
    /// How often the resample drew each row (0 for padding), f64. [resamples, rows, 1]
    count: Tensor,
}

/// The batches of `draws` (`resamples · n` indices, resample by resample).
fn batches(draws: &[usize], n: usize, resamples: usize, device: Device) -> Vec<Batch> {
    let mut counts = vec![0u32; n];
    let mut out = Vec::new();
    let mut start = 0;
    while start < resamples {
        let b = RESAMPLES_PER_BATCH.min(resamples - start);
        let mut per_resample: Vec<(Vec<i64>, Vec<f64>)> = Vec::with_capacity(b);
        for r in start..start + b {
            for &i in &draws[r * n..(r + 1) * n] {
                counts[i] += 1;
            }
            let mut rows = Vec::new();
            let mut weights = Vec::new();
            for (i, c) in counts.iter_mut().enumerate() {
                if *c > 0 {
                    rows.push(i as i64);
                    weights.push(f64::from(*c));
                    *c = 0;
                }
            }
            per_resample.push((rows, weights));
        }
        let m = per_resample.iter().map(|(r, _)| r.len()).max().unwrap_or(1);
        let mut index = Vec::with_capacity(b * m);
        let mut count = Vec::with_capacity(b * m);
        for (rows, weights) in &per_resample {
            index.extend(rows.iter().copied().chain(std::iter::repeat_n(0, m - rows.len())));
            count.extend(weights.iter().copied().chain(std::iter::repeat_n(0.0, m - weights.len())));
        }
        out.push(Batch {
            resamples: b as i64,
            rows: m as i64,
            index: Tensor::from_slice(&index).to_device(device),
            count: Tensor::from_slice(&count).view([b as i64, m as i64, 1]).to_device(device),
        });
        start += b;
    }
    out
}

/// The resamples of a batch, weighted-centred and scaled by `√count` (see the module docs), so that `AᵀB` is the
/// centred cross product of the resampled rows.
/// # Shapes
/// `x` [n, d] → [resamples, rows, d].
fn weighted_centred(x: &Tensor, batch: &Batch, n: i64, kind: Kind) -> Tensor {
    let count = batch.count.to_kind(kind);
    let gathered = x.index_select(0, &batch.index).view([batch.resamples, batch.rows, -1]);
    let mean = |t: &Tensor| (t * &count).sum_dim_intlist([1].as_slice(), true, kind) / n as f64;
    let first = &gathered - mean(&gathered);
    let centred = &first - mean(&first);
    centred * count.sqrt()
}

/// `‖AᵀB‖²_F` per resample, in f64.
/// # Shapes
/// `a` [b, m, d1], `b` [b, m, d2] → [b] f64.
fn batched_cross_sq(a: &Tensor, b: &Tensor) -> Tensor {
    a.transpose(1, 2).bmm(b).to_kind(Kind::Double).square().sum_dim_intlist([1, 2].as_slice(), false, Kind::Double)
}

/// Linear CKA of matching layers on `resamples` bootstrap resamples of the rows, drawn with `seed`
/// ([`resample_indices`]; the same draws for every call with the same `n`, `resamples` and `seed`).
/// `replicates[l][r]` is layer `l`'s CKA on resample `r`.
/// # Shapes
/// `xs` [L, n, d1], `ys` [L, n, d2] → L rows of `resamples` values.
pub fn linear_cka_replicates(xs: &Tensor, ys: &Tensor, resamples: usize, seed: u64) -> Result<Vec<Vec<f64>>> {
    linear_cka_replicates_with(xs, ys, resamples, seed, |_| {})
}

/// [`linear_cka_replicates`], calling `on_layer(l)` after each layer (a progress bar).
/// # Shapes
/// `xs` [L, n, d1], `ys` [L, n, d2] → L rows of `resamples` values.
pub fn linear_cka_replicates_with(
    xs: &Tensor,
    ys: &Tensor,
    resamples: usize,
    seed: u64,
    on_layer: impl FnMut(usize),
) -> Result<Vec<Vec<f64>>> {
    let (n, d1, d2) = (xs.size()[1], xs.size()[2], ys.size().get(2).copied().unwrap_or(0));
    replicates_in(Form::choose(n, d1, d2), xs, ys, resamples, seed, on_layer)
}

/// [`linear_cka_replicates_with`] in a given form (`crossling bench cka-bootstrap` times one against the other).
/// # Shapes
/// `xs` [L, n, d1], `ys` [L, n, d2] → L rows of `resamples` values.
pub fn replicates_in(
    form: Form,
    xs: &Tensor,
    ys: &Tensor,
    resamples: usize,
    seed: u64,
    mut on_layer: impl FnMut(usize),
) -> Result<Vec<Vec<f64>>> {
    let (l1, l2) = check_stacks(xs, ys)?;
    if l1 != l2 {
        return Err(Error::Invalid(format!("CKA replicates need as many layers in X ({l1}) as in Y ({l2})")));
    }
    let n = xs.size()[1];
    if n < 2 {
        return Err(Error::Invalid(format!("CKA needs at least 2 rows, got {n}")));
    }
    let draws = resample_indices(n as usize, resamples, seed)?;
    let prepared = match form {
        Form::FeatureSpace => Prepared::FeatureSpace(batches(&draws, n as usize, resamples, xs.device())),
        Form::SampleSpace => Prepared::SampleSpace(count_batches(&draws, n as usize, resamples, xs.device())),
    };
    let mut out = Vec::with_capacity(l1 as usize);
    for l in 0..l1 {
        let x = matrix_float(&xs.get(l), "CKA X layer")?;
        let y = matrix_float(&ys.get(l), "CKA Y layer")?;
        let kind = compute_kind(&x, &y);
        let (x, y) = (x.to_kind(kind), y.to_kind(kind));
        let layer = match &prepared {
            Prepared::FeatureSpace(batches) => feature_space_layer(&x, &y, batches, n, kind)?,
            Prepared::SampleSpace(counts) => sample_space_layer(&x, &y, counts)?,
        };
        if let Some(v) = layer.iter().find(|v| !v.is_finite()) {
            return Err(Error::Invalid(format!(
                "CKA replicate of layer {l} is {v}: a resample has a constant side (too few distinct rows)"
            )));
        }
        out.push(layer);
        on_layer(l as usize);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cka::linear_cka;

    fn randn(shape: &[i64], seed: i64, kind: Kind) -> Tensor {
        let _g = crate::device::torch_rng_lock();
        tch::manual_seed(seed);
        Tensor::randn(shape, (kind, Device::Cpu))
    }

    #[test]
    fn each_replicate_is_linear_cka_of_the_resampled_rows() {
        let xs = randn(&[2, 30, 5], 1, Kind::Double);
        let ys = randn(&[2, 30, 4], 2, Kind::Double) + xs.narrow(2, 0, 4);
        let reps = linear_cka_replicates(&xs, &ys, 40, 9).unwrap();
        assert_eq!((reps.len(), reps[0].len()), (2, 40));
        let draws = resample_indices(30, 40, 9).unwrap();
        for l in 0..2 {
            for r in [0usize, 17, 39] {
                let idx: Vec<i64> = draws[r * 30..(r + 1) * 30].iter().map(|&i| i as i64).collect();
                let idx = Tensor::from_slice(&idx);
                let want = linear_cka(&xs.get(l).index_select(0, &idx), &ys.get(l).index_select(0, &idx)).unwrap();
                assert!((reps[l as usize][r] - want).abs() < 1e-12, "layer {l} resample {r}");
            }
        }
    }

    #[test]
    fn both_forms_give_the_same_replicates_and_the_cheaper_one_is_chosen() {
        let xs = randn(&[2, 60, 7], 21, Kind::Double) + 3.0;
        let ys = randn(&[2, 60, 5], 22, Kind::Double) + xs.narrow(2, 0, 5) * 0.5;
        let feature = replicates_in(Form::FeatureSpace, &xs, &ys, 70, 4, |_| {}).unwrap();
        let sample = replicates_in(Form::SampleSpace, &xs, &ys, 70, 4, |_| {}).unwrap();
        let draws = resample_indices(60, 70, 4).unwrap();
        for l in 0..2 {
            for r in 0..70 {
                assert!((feature[l][r] - sample[l][r]).abs() < 1e-12, "layer {l} resample {r}");
            }
            // And each is CKA of the resampled rows (sample space checked directly as well).
            let idx: Vec<i64> = draws[5 * 60..6 * 60].iter().map(|&i| i as i64).collect();
            let idx = Tensor::from_slice(&idx);
            let want =
                linear_cka(&xs.get(l as i64).index_select(0, &idx), &ys.get(l as i64).index_select(0, &idx)).unwrap();
            assert!((sample[l][5] - want).abs() < 1e-12);
        }
        // f32 features: the sample-space form computes in f64, the feature-space one in f32.
        let f = replicates_in(Form::SampleSpace, &xs.to_kind(Kind::Float), &ys.to_kind(Kind::Float), 70, 4, |_| {});
        assert!(f.unwrap()[0].iter().zip(&feature[0]).all(|(p, q)| (p - q).abs() < 1e-5));
        // 1,000 sentences of width 384 (the real-model figure): sample space; few rows of small width or too
        // many rows: feature space.
        assert_eq!(Form::choose(1000, 384, 384), Form::SampleSpace);
        assert_eq!(Form::choose(30, 5, 4), Form::FeatureSpace);
        assert_eq!(Form::choose(SAMPLE_SPACE_MAX_ROWS + 1, 768, 768), Form::FeatureSpace);
    }

    #[test]
    fn calls_with_one_seed_share_their_resamples_and_f32_agrees_with_f64() {
        let xs = randn(&[1, 50, 6], 3, Kind::Double);
        let ys = randn(&[1, 50, 6], 4, Kind::Double) * 0.7 + &xs;
        let zs = randn(&[1, 50, 3], 5, Kind::Double);
        // X against itself is 1 on every resample; the same seed draws the same rows for another pair.
        let own = linear_cka_replicates(&xs, &xs, 25, 7).unwrap();
        assert!(own[0].iter().all(|v| (v - 1.0).abs() < 1e-12));
        let a = linear_cka_replicates(&xs, &ys, 25, 7).unwrap();
        assert_eq!(a, linear_cka_replicates(&xs, &ys, 25, 7).unwrap());
        assert_ne!(a, linear_cka_replicates(&xs, &ys, 25, 8).unwrap());
        let b = linear_cka_replicates(&xs, &zs, 25, 7).unwrap();
        // Related features score above unrelated ones on every shared resample.
        assert!(a[0].iter().zip(&b[0]).all(|(p, q)| p > q));
        let f = linear_cka_replicates(&xs.to_kind(Kind::Float), &ys.to_kind(Kind::Float), 25, 7).unwrap();
        assert!(a[0].iter().zip(&f[0]).all(|(p, q)| (p - q).abs() < 1e-5));
    }

    #[test]
    fn replicates_spread_around_the_estimate_and_narrow_with_more_rows() {
        let spread = |n: i64| {
            let xs = randn(&[1, n, 4], 11, Kind::Double);
            let ys = randn(&[1, n, 4], 12, Kind::Double) + &xs;
            let est = linear_cka(&xs.get(0), &ys.get(0)).unwrap();
            let reps = linear_cka_replicates(&xs, &ys, 300, 1).unwrap().remove(0);
            let i = crate::analysis::bootstrap::replicate_interval(est, &reps, 0.95).unwrap();
            assert!(i.low < est && est < i.high, "n {n}: {i:?}");
            i.high - i.low
        };
        let (small, large) = (spread(40), spread(640));
        assert!(large < small / 2.0, "{small} vs {large}");
    }

    #[test]
    fn mismatched_stacks_are_refused() {
        let e = linear_cka_replicates(&randn(&[2, 10, 3], 1, Kind::Float), &randn(&[3, 10, 3], 2, Kind::Float), 5, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("as many layers"), "{e}");
        assert!(linear_cka_replicates(&randn(&[1, 10, 3], 1, Kind::Float), &randn(&[1, 9, 3], 2, Kind::Float), 5, 0)
            .is_err());
    }
}
