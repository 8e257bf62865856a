//! Centred kernel alignment (Kornblith, Norouzi, Lee & Hinton 2019, "Similarity of Neural Network
//! Representations Revisited", ICML), as used for Figure 7 of Wu, Conneau et al. (2020).
//!
//! With `X` `[n, d1]` and `Y` `[n, d2]` column-centred (rows are the same `n` examples):
//! - **linear CKA** (feature-space form): `‖YᵀX‖²_F / (‖XᵀX‖_F · ‖YᵀY‖_F)`;
//! - **debiased linear CKA**: the same ratio with each `‖AᵀB‖²_F` replaced by the unbiased HSIC estimator of
//!   Song et al. (2012) written in feature space, exactly as `feature_space_linear_cka(x, y, debiased=True)` of
//!   Kornblith's notebook: `hsic(A,B) = ‖AᵀB‖²_F − n/(n−2)·⟨a, b⟩ + ‖A‖²_F‖B‖²_F / ((n−1)(n−2))`, with `a`, `b`
//!   the squared row norms;
//! - **RBF CKA** (Gram form): `K_ij = exp(−‖x_i − x_j‖² / (2 · threshold² · median_sq))`, `median_sq` the median
//!   of all `n²` squared distances (diagonal included, numpy's median: the mean of the two middle values for an
//!   even count), then `⟨HKH, HLH⟩ / (‖HKH‖_F ‖HLH‖_F)` — Kornblith's `cka(gram_rbf(x, t), gram_rbf(y, t))`.
//!
//! All reductions are in f64. For a layer × layer grid, each layer is centred once and its self-products
//! (`‖XᵀX‖_F`, row norms) are computed once; the cross products are formed one X layer at a time against all
//! Y layers side by side (`Xᵢᵀ [Y₁ … Y_L]`, one large product instead of L small ones). For f32
//! inputs the features are centred in f32 in two passes (subtract the column means, then the means of the remainder,
//! which removes the first means' rounding error; libtorch sums with cascade summation), the products (`XᵀX` and the
//! cross products) are formed in f32 over row chunks of at most [`CHUNK_ROWS`] rows from transposed views and
//! summed in f64; f64 inputs stay f64 throughout.
use super::{matrix_float, to_vec_f64};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor};

/// Most rows per chunk when cross products of f32 features are accumulated in f64 (the rows are split into
/// `ceil(n / CHUNK_ROWS)` equal chunks: long chunks keep the matrix products efficient; one chunk of 10,000 rows beat
/// two of 5,000 on a 9-layer 768-wide grid; measured: docs/performance.md, *Measurements behind design choices*).
pub const CHUNK_ROWS: i64 = 16384;

/// Which CKA.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CkaKind {
    Linear,
    Debiased,
    /// RBF kernel; bandwidth² = threshold² × median squared distance.
    Rbf {
        threshold: f64,
    },
}

/// One layer's features, centred, with the self-products every CKA cell needs.
struct Prepared {
    /// Column-centred features, in the compute kind (f32 or f64). [n, d]
    centred: Tensor,
    /// Squared row norms of the centred features, f64 (debiased CKA only; empty otherwise). [n]
    row_sq: Tensor,
    /// `‖XᵀX‖²_F` (f64).
    self_sq: f64,
    /// `‖X‖²_F` (f64; debiased CKA only, else 0).
    sq_norm: f64,
}

pub(crate) fn compute_kind(a: &Tensor, b: &Tensor) -> Kind {
    if a.kind() == Kind::Double || b.kind() == Kind::Double {
        Kind::Double
    } else {
        Kind::Float
    }
}

/// `AᵀB` with the sum over rows in f64: one product for f64, chunked f32 products summed in f64 otherwise.
/// # Shapes
/// `a` [n, d1], `b` [n, d2] → [d1, d2] f64.
fn cross(a: &Tensor, b: &Tensor) -> Tensor {
    cross_t(&a.tr(), b)
}

/// [`cross`] with the left factor given transposed (a transposed view is read in place by BLAS, as fast as a
/// contiguous copy).
/// # Shapes
/// `at` [d1, n], `b` [n, d2] → [d1, d2] f64.
fn cross_t(at: &Tensor, b: &Tensor) -> Tensor {
    if at.kind() == Kind::Double && b.kind() == Kind::Double {
        return at.mm(b);
    }
    let n = b.size()[0];
    let chunks = (n + CHUNK_ROWS - 1) / CHUNK_ROWS;
    let rows = (n + chunks - 1) / chunks.max(1);
    let mut acc: Option<Tensor> = None;
    let mut start = 0;
    while start < n {
        let len = rows.min(n - start);
        let part = at.narrow(1, start, len).mm(&b.narrow(0, start, len)).to_kind(Kind::Double);
        acc = Some(match acc {
            None => part,
            Some(s) => s + part,
        });
        start += len;
    }
    acc.unwrap_or_else(|| Tensor::zeros([at.size()[0], b.size()[1]], (Kind::Double, at.device())))
}

fn scalar(t: &Tensor) -> Result<f64> {
    to_vec_f64(t)?.first().copied().ok_or_else(|| Error::Invalid("empty scalar tensor".into()))
}

fn prepare(x: &Tensor, kind: Kind, debiased: bool) -> Result<Prepared> {
    // Two-pass centring in the compute kind: subtract the column means, then the means of what is left (which
    // removes the rounding error of the first means), so f32 features are never copied to f64 whole.
    let x = x.to_kind(kind);
    let first = &x - x.mean_dim(0, true, kind);
    let centred = (&first - first.mean_dim(0, true, kind)).contiguous();
    let self_sq = self_product_sq(&centred)?;
    let (row_sq, sq_norm) = if debiased {
        let row_sq = centred.square().sum_dim_intlist(1, false, Kind::Double);
        let sq_norm = scalar(&row_sq.sum(Kind::Double))?;
        (row_sq, sq_norm)
    } else {
        (Tensor::zeros([0], (Kind::Double, x.device())), 0.0)
    };
    Ok(Prepared { centred, row_sq, self_sq, sq_norm })
}

/// `‖XᵀX‖²_F` from one product with the transposed view (BLAS reads the transpose in place: faster than a contiguous
/// transposed copy or the three distinct blocks of the symmetric product from column halves; measured:
/// docs/performance.md, *Measurements behind design choices*).
/// # Shapes
/// `x` [n, d] → scalar.
fn self_product_sq(x: &Tensor) -> Result<f64> {
    scalar(&cross(x, x).square().sum(Kind::Double))
}

/// Kornblith's `_debiased_dot_product_similarity_helper`.
fn debias(xty: f64, rows_dot: f64, sq_x: f64, sq_y: f64, n: f64) -> f64 {
    xty - n / (n - 2.0) * rows_dot + sq_x * sq_y / ((n - 1.0) * (n - 2.0))
}

fn linear_from(a: &Prepared, b: &Prepared, debiased: bool) -> Result<f64> {
    let xty = scalar(&cross(&a.centred, &b.centred).square().sum(Kind::Double))?;
    linear_from_xty(xty, a, b, debiased)
}

/// CKA from the cross term `‖AᵀB‖²_F` and the two layers' self-products.
fn linear_from_xty(xty: f64, a: &Prepared, b: &Prepared, debiased: bool) -> Result<f64> {
    if !debiased {
        return Ok(xty / (a.self_sq.sqrt() * b.self_sq.sqrt()));
    }
    let n = a.row_sq.size()[0] as f64;
    let rows_ab = scalar(&a.row_sq.dot(&b.row_sq))?;
    let rows_aa = scalar(&a.row_sq.dot(&a.row_sq))?;
    let rows_bb = scalar(&b.row_sq.dot(&b.row_sq))?;
    let num = debias(xty, rows_ab, a.sq_norm, b.sq_norm, n);
    let na = debias(a.self_sq, rows_aa, a.sq_norm, a.sq_norm, n).sqrt();
    let nb = debias(b.self_sq, rows_bb, b.sq_norm, b.sq_norm, n).sqrt();
    Ok(num / (na * nb))
}

fn check_pair(x: &Tensor, y: &Tensor, min_rows: i64) -> Result<(Tensor, Tensor)> {
    let x = matrix_float(x, "CKA X")?;
    let y = matrix_float(y, "CKA Y")?;
    let (nx, ny) = (x.size()[0], y.size()[0]);
    if nx != ny {
        return Err(Error::Invalid(format!(
            "CKA needs the same examples in both: X has {nx} rows ({:?}), Y has {ny} rows ({:?})",
            x.size(),
            y.size()
        )));
    }
    if nx < min_rows {
        return Err(Error::Invalid(format!("CKA needs at least {min_rows} rows, got {nx}")));
    }
    Ok((x, y))
}

/// Linear CKA in feature-space form.
/// # Shapes
/// `x` [n, d1], `y` [n, d2].
pub fn linear_cka(x: &Tensor, y: &Tensor) -> Result<f64> {
    let (x, y) = check_pair(x, y, 2)?;
    let kind = compute_kind(&x, &y);
    linear_from(&prepare(&x, kind, false)?, &prepare(&y, kind, false)?, false)
}

/// Debiased linear CKA (unbiased HSIC estimator); needs n ≥ 4.
/// # Shapes
/// `x` [n, d1], `y` [n, d2].
pub fn debiased_linear_cka(x: &Tensor, y: &Tensor) -> Result<f64> {
    let (x, y) = check_pair(x, y, 4)?;
    let kind = compute_kind(&x, &y);
    linear_from(&prepare(&x, kind, true)?, &prepare(&y, kind, true)?, true)
}

/// The median of a list (numpy's: mean of the two middle values for an even count).
fn median(mut v: Vec<f64>) -> Result<f64> {
    let n = v.len();
    if n == 0 {
        return Err(Error::Invalid("median of an empty list".into()));
    }
    let hi = *v.select_nth_unstable_by(n / 2, |a, b| a.total_cmp(b)).1;
    if n % 2 == 1 {
        return Ok(hi);
    }
    let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Ok(0.5 * (lo + hi))
}

/// Kornblith's `gram_rbf` followed by `center_gram` (biased), in f64.
/// # Shapes
/// `x` [n, d] → [n, n].
fn centred_rbf_gram(x: &Tensor, threshold: f64) -> Result<Tensor> {
    let x = x.to_kind(Kind::Double);
    let dots = x.mm(&x.tr());
    let sq = dots.diagonal(0, 0, 1);
    let dist = dots * -2.0 + sq.unsqueeze(1) + sq.unsqueeze(0);
    let med = median(to_vec_f64(&dist)?)?;
    if med <= 0.0 {
        return Err(Error::Invalid("RBF CKA: the median squared distance is 0 (too many identical rows)".into()));
    }
    let gram = (dist / (-2.0 * threshold * threshold * med)).exp();
    let means = gram.mean_dim(0, false, Kind::Double);
    let means = &means - means.mean(Kind::Double) / 2.0;
    Ok(gram - means.unsqueeze(1) - means.unsqueeze(0))
}

fn rbf_from(kx: &Tensor, ky: &Tensor) -> Result<f64> {
    let hsic = scalar(&(kx * ky).sum(Kind::Double))?;
    Ok(hsic / (scalar(&kx.square().sum(Kind::Double))?.sqrt() * scalar(&ky.square().sum(Kind::Double))?.sqrt()))
}

/// RBF CKA (Gram form, n × n memory).
/// # Shapes
/// `x` [n, d1], `y` [n, d2].
pub fn rbf_cka(x: &Tensor, y: &Tensor, threshold: f64) -> Result<f64> {
    if !(threshold.is_finite() && threshold > 0.0) {
        return Err(Error::Invalid(format!("RBF CKA threshold must be > 0, got {threshold}")));
    }
    let (x, y) = check_pair(x, y, 2)?;
    rbf_from(&centred_rbf_gram(&x, threshold)?, &centred_rbf_gram(&y, threshold)?)
}

/// CKA of one kind.
/// # Shapes
/// `x` [n, d1], `y` [n, d2].
pub fn cka(x: &Tensor, y: &Tensor, kind: CkaKind) -> Result<f64> {
    match kind {
        CkaKind::Linear => linear_cka(x, y),
        CkaKind::Debiased => debiased_linear_cka(x, y),
        CkaKind::Rbf { threshold } => rbf_cka(x, y, threshold),
    }
}

pub(crate) fn check_stacks(xs: &Tensor, ys: &Tensor) -> Result<(i64, i64)> {
    let (sx, sy) = (xs.size(), ys.size());
    if sx.len() != 3 || sy.len() != 3 {
        return Err(Error::Invalid(format!("a layer stack is [layers, rows, dim]; got X {sx:?} and Y {sy:?}")));
    }
    if sx[1] != sy[1] {
        return Err(Error::Invalid(format!(
            "layer stacks need the same rows: X {sx:?} has {} rows, Y {sy:?} has {}",
            sx[1], sy[1]
        )));
    }
    if sx[0] == 0 || sy[0] == 0 {
        return Err(Error::Invalid(format!("empty layer stack: X {sx:?}, Y {sy:?}")));
    }
    Ok((sx[0], sy[0]))
}

/// Layer × layer CKA between two stacks: `grid[i][j] = CKA(xs[i], ys[j])`. Each layer is prepared once (centred,
/// self-products, or its centred RBF Gram matrix for [`CkaKind::Rbf`], which holds `L·n²` f64 values).
/// # Shapes
/// `xs` [L1, n, d1], `ys` [L2, n, d2] → L1 rows of L2 values.
pub fn cka_grid(xs: &Tensor, ys: &Tensor, kind: CkaKind) -> Result<Vec<Vec<f64>>> {
    let (l1, l2) = check_stacks(xs, ys)?;
    match kind {
        CkaKind::Linear | CkaKind::Debiased => {
            let debiased = kind == CkaKind::Debiased;
            let n = xs.size()[1];
            if n < if debiased { 4 } else { 2 } {
                return Err(Error::Invalid(format!("CKA needs more rows, got {n}")));
            }
            let k = compute_kind(&matrix_float(&xs.get(0), "X layer 0")?, &matrix_float(&ys.get(0), "Y layer 0")?);
            let px = (0..l1).map(|i| prepare(&xs.get(i), k, debiased)).collect::<Result<Vec<_>>>()?;
            let py = (0..l2).map(|j| prepare(&ys.get(j), k, debiased)).collect::<Result<Vec<_>>>()?;
            // One product per X layer against all Y layers side by side: [d1, Σ d2], then one block per cell.
            let ycat = Tensor::cat(&py.iter().map(|p| &p.centred).collect::<Vec<_>>(), 1);
            let widths: Vec<i64> = py.iter().map(|p| p.centred.size()[1]).collect();
            let mut grid = Vec::with_capacity(l1 as usize);
            for a in &px {
                let c = cross_t(&a.centred.tr(), &ycat);
                let mut start = 0;
                let mut row = Vec::with_capacity(l2 as usize);
                for (b, w) in py.iter().zip(&widths) {
                    let xty = scalar(&c.narrow(1, start, *w).square().sum(Kind::Double))?;
                    row.push(linear_from_xty(xty, a, b, debiased)?);
                    start += w;
                }
                grid.push(row);
            }
            Ok(grid)
        }
        CkaKind::Rbf { threshold } => {
            if !(threshold.is_finite() && threshold > 0.0) {
                return Err(Error::Invalid(format!("RBF CKA threshold must be > 0, got {threshold}")));
            }
            let gx = (0..l1).map(|i| centred_rbf_gram(&xs.get(i), threshold)).collect::<Result<Vec<_>>>()?;
            let gy = (0..l2).map(|j| centred_rbf_gram(&ys.get(j), threshold)).collect::<Result<Vec<_>>>()?;
            gx.iter().map(|a| gy.iter().map(|b| rbf_from(a, b)).collect()).collect()
        }
    }
}

/// CKA of matching layers: `CKA(xs[i], ys[i])`.
/// # Shapes
/// `xs` [L, n, d1], `ys` [L, n, d2] → L values.
pub fn cka_diagonal(xs: &Tensor, ys: &Tensor, kind: CkaKind) -> Result<Vec<f64>> {
    let (l1, l2) = check_stacks(xs, ys)?;
    if l1 != l2 {
        return Err(Error::Invalid(format!("the diagonal needs as many layers in X ({l1}) as in Y ({l2})")));
    }
    (0..l1).map(|i| cka(&xs.get(i), &ys.get(i), kind)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Device;

    fn randn(r: i64, c: i64, seed: i64) -> Tensor {
        let _g = crate::device::torch_rng_lock();
        tch::manual_seed(seed);
        Tensor::randn([r, c], (Kind::Double, Device::Cpu))
    }

    /// A random orthogonal matrix from the QR of a Gaussian one.
    fn orthogonal(d: i64, seed: i64) -> Tensor {
        let (q, _) = Tensor::linalg_qr(&randn(d, d, seed), "reduced");
        q
    }

    /// Linear CKA through n × n Gram matrices with nalgebra: ⟨HKH, HLH⟩ / (‖HKH‖ ‖HLH‖), K = XXᵀ.
    fn gram_reference(x: &Tensor, y: &Tensor) -> f64 {
        let to_na = |t: &Tensor| {
            let s = t.size();
            let v = to_vec_f64(t).unwrap();
            nalgebra::DMatrix::from_row_slice(s[0] as usize, s[1] as usize, &v)
        };
        let (x, y) = (to_na(x), to_na(y));
        let n = x.nrows();
        let h = nalgebra::DMatrix::<f64>::identity(n, n) - nalgebra::DMatrix::<f64>::from_element(n, n, 1.0 / n as f64);
        let k = &h * (&x * x.transpose()) * &h;
        let l = &h * (&y * y.transpose()) * &h;
        k.dot(&l) / (k.norm() * l.norm())
    }

    #[test]
    fn linear_matches_gram_form_and_self_is_one() {
        let x = randn(50, 7, 1);
        let y = randn(50, 4, 2) + x.narrow(1, 0, 4);
        let c = linear_cka(&x, &y).unwrap();
        assert!((c - gram_reference(&x, &y)).abs() < 1e-12, "{c}");
        assert!((linear_cka(&x, &x).unwrap() - 1.0).abs() < 1e-12);
        assert!((debiased_linear_cka(&x, &x).unwrap() - 1.0).abs() < 1e-12);
        assert!((rbf_cka(&x, &x, 1.0).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn invariant_to_orthogonal_maps_isotropic_scaling_and_translation() {
        let x = randn(60, 6, 3);
        let y = randn(60, 6, 4) * 0.5 + &x;
        let q = orthogonal(6, 5);
        let moved = x.mm(&q) * 3.7 + 2.0;
        for kind in [CkaKind::Linear, CkaKind::Debiased, CkaKind::Rbf { threshold: 0.8 }] {
            let a = cka(&x, &y, kind).unwrap();
            let b = cka(&moved, &y, kind).unwrap();
            assert!((a - b).abs() < 1e-10, "{kind:?}: {a} vs {b}");
            assert!(a > 0.0 && a < 1.0, "{kind:?}: {a}");
        }
    }

    #[test]
    fn f32_chunked_products_agree_with_f64() {
        let x = randn(CHUNK_ROWS + 300, 5, 6);
        let y = randn(CHUNK_ROWS + 300, 3, 7) + x.narrow(1, 1, 3);
        let a = linear_cka(&x, &y).unwrap();
        let b = linear_cka(&x.to_kind(Kind::Float), &y.to_kind(Kind::Float)).unwrap();
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }

    #[test]
    fn grid_and_diagonal_match_pairwise_values() {
        let xs = Tensor::stack(&[randn(40, 5, 8), randn(40, 5, 9)], 0);
        let ys = Tensor::stack(&[randn(40, 3, 10), xs.get(0).narrow(1, 0, 3), randn(40, 3, 11)], 0);
        for kind in [CkaKind::Linear, CkaKind::Debiased, CkaKind::Rbf { threshold: 1.0 }] {
            let g = cka_grid(&xs, &ys, kind).unwrap();
            assert_eq!((g.len(), g[0].len()), (2, 3));
            for (i, row) in g.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    let p = cka(&xs.get(i as i64), &ys.get(j as i64), kind).unwrap();
                    assert!((v - p).abs() < 1e-12, "{kind:?} ({i},{j}) {v} vs {p}");
                }
            }
        }
        let d = cka_diagonal(&xs, &ys.narrow(0, 0, 2), CkaKind::Linear).unwrap();
        assert_eq!(d.len(), 2);
        assert!(cka_diagonal(&xs, &ys, CkaKind::Linear).is_err());
    }

    #[test]
    fn shape_errors_name_the_shapes() {
        let e = linear_cka(&randn(10, 3, 1), &randn(11, 3, 2)).unwrap_err().to_string();
        assert!(e.contains("10 rows") && e.contains("11 rows"), "{e}");
        let e = cka_grid(&randn(10, 3, 1), &randn(10, 3, 2), CkaKind::Linear).unwrap_err().to_string();
        assert!(e.contains("[10, 3]"), "{e}");
    }

    #[test]
    fn numpy_median_convention() {
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]).unwrap(), 2.5);
        assert_eq!(median(vec![3.0, 1.0, 2.0]).unwrap(), 2.0);
    }
}
