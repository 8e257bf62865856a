//! Linear maps between embedding spaces, fitted on paired rows.
//!
//! **Convention.** Rows are vectors. `X` `[n, d]` (source) and `Y` `[n, d]` (target) are paired row by row;
//! a map is a matrix `W` `[d, d]` that sends a source row `x` to `W x`, i.e. the mapped source matrix is
//! `X Wᵀ` ([`apply_map`]). This is MUSE's convention (`nn.Linear` without bias; Conneau et al. 2018).
//!
//! - **Orthogonal Procrustes** (Schönemann 1966; used by Conneau et al. 2018 and Wu, Conneau et al. 2020):
//!   `W* = argmin_{WᵀW = I} ‖X Wᵀ − Y‖_F = U Vᵀ` with `U Σ Vᵀ = SVD(Yᵀ X)`, computed in f64.
//! - **Least squares** (unconstrained, for comparison; Mikolov, Le & Sutskever 2013):
//!   `W* = argmin_W ‖X Wᵀ − Y‖_F`, i.e. `Wᵀ = lstsq(X, Y)`; allows `d_src ≠ d_tgt` (`W` is `[d_tgt, d_src]`).
//! - **Refinement** (MUSE's Procrustes refinement): repeat `iterations` times — map the `top_n` most frequent
//!   source rows (the first rows), take mutual CSLS nearest neighbours (k = 10) between them and the `top_n` most
//!   frequent target rows (MUSE's `S2T&T2S` dictionary), and re-fit Procrustes on those pairs.
use super::matrix_float;
use super::scores::{Method, Options, Scorer};
use super::to_vec_i64;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor};

fn check_paired(x: &Tensor, y: &Tensor, same_dim: bool) -> Result<(Tensor, Tensor)> {
    let x = matrix_float(x, "map source X")?.to_kind(Kind::Double);
    let y = matrix_float(y, "map target Y")?.to_kind(Kind::Double);
    let (sx, sy) = (x.size(), y.size());
    if sx[0] != sy[0] {
        return Err(Error::Invalid(format!("paired rows differ: X {sx:?}, Y {sy:?}")));
    }
    if same_dim && sx[1] != sy[1] {
        return Err(Error::Invalid(format!("an orthogonal map needs equal dimensions: X {sx:?}, Y {sy:?}")));
    }
    Ok((x, y))
}

/// Orthogonal Procrustes on paired rows: `W = U Vᵀ`, `U Σ Vᵀ = SVD(Yᵀ X)`.
/// # Shapes
/// `x` [n, d], `y` [n, d] → `W` [d, d] f64.
pub fn procrustes(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let (x, y) = check_paired(x, y, true)?;
    procrustes_from_cross(&y.tr().mm(&x))
}

/// Orthogonal Procrustes from the cross-product `M = Yᵀ X = Σ_k y_k x_kᵀ` alone (accumulated over batches when the
/// pairs do not fit in memory at once): `W = U Vᵀ`, `U Σ Vᵀ = SVD(M)`.
/// # Shapes
/// `m` [d, d] → `W` [d, d] f64.
pub fn procrustes_from_cross(m: &Tensor) -> Result<Tensor> {
    let m = matrix_float(m, "Procrustes cross-product")?.to_kind(Kind::Double);
    let size = m.size();
    if size[0] != size[1] {
        return Err(Error::Invalid(format!("an orthogonal map needs a square cross-product, got {size:?}")));
    }
    // torch.svd returns V (not Vᵀ): M = U diag(S) Vᵀ.
    let (u, _s, v) = m.svd(true, true);
    Ok(u.mm(&v.tr()))
}

/// Unconstrained least-squares map on paired rows.
/// # Shapes
/// `x` [n, d_src], `y` [n, d_tgt] → `W` [d_tgt, d_src] f64.
pub fn least_squares(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let (x, y) = check_paired(x, y, false)?;
    let driver = if x.device() == tch::Device::Cpu { "gelsd" } else { "gels" };
    let (sol, _, _, _) = x.linalg_lstsq(&y, None, driver);
    Ok(sol.tr().contiguous())
}

/// The mapped source `X Wᵀ`, in `x`'s float kind.
/// # Shapes
/// `x` [n, d_src], `w` [d_tgt, d_src] → [n, d_tgt].
pub fn apply_map(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    let x = matrix_float(x, "map input")?;
    let w = matrix_float(w, "map W")?;
    if w.size()[1] != x.size()[1] {
        return Err(Error::Invalid(format!("map W {:?} cannot apply to rows of {:?}", w.size(), x.size())));
    }
    Ok(x.mm(&w.to_kind(x.kind()).tr()))
}

/// The rows named by `pairs` as two paired matrices.
/// # Shapes
/// `src` [n_s, d], `tgt` [n_t, d] → ([p, d], [p, d]).
pub fn paired_rows(src: &Tensor, tgt: &Tensor, pairs: &[(i64, i64)]) -> Result<(Tensor, Tensor)> {
    let (ns, nt) = (src.size()[0], tgt.size()[0]);
    if pairs.is_empty() {
        return Err(Error::Invalid("no pairs to fit a map on".into()));
    }
    if let Some(p) = pairs.iter().find(|(s, t)| *s < 0 || *s >= ns || *t < 0 || *t >= nt) {
        return Err(Error::Invalid(format!("pair {p:?} outside the matrices ({ns} source rows, {nt} target rows)")));
    }
    let s: Vec<i64> = pairs.iter().map(|p| p.0).collect();
    let t: Vec<i64> = pairs.iter().map(|p| p.1).collect();
    let dev = src.device();
    Ok((
        src.index_select(0, &Tensor::from_slice(&s).to_device(dev)),
        tgt.index_select(0, &Tensor::from_slice(&t).to_device(dev)),
    ))
}

/// MUSE-style refinement settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefineOptions {
    /// Refinement rounds.
    pub iterations: usize,
    /// Most frequent rows of each space among which the dictionary is induced (MUSE: 15000).
    pub top_n: usize,
    /// CSLS neighbourhood.
    pub csls_k: usize,
}

impl Default for RefineOptions {
    fn default() -> Self {
        RefineOptions { iterations: 5, top_n: 15_000, csls_k: 10 }
    }
}

/// Mutual CSLS nearest neighbours between the first `top_n` rows of the mapped source and of the target.
pub fn mutual_csls_pairs(mapped: &Tensor, tgt: &Tensor, top_n: usize, csls_k: usize) -> Result<Vec<(i64, i64)>> {
    let ns = (top_n as i64).min(mapped.size()[0]);
    let nt = (top_n as i64).min(tgt.size()[0]);
    let (s, t) = (mapped.narrow(0, 0, ns), tgt.narrow(0, 0, nt));
    let method = Method::Csls { k: csls_k };
    let fwd = to_vec_i64(&Scorer::new(&s, &t, method, Options::default())?.top_k(None, 1)?.indices)?;
    let back = to_vec_i64(&Scorer::new(&t, &s, method, Options::default())?.top_k(None, 1)?.indices)?;
    Ok(fwd.iter().enumerate().filter(|&(i, &j)| back[j as usize] == i as i64).map(|(i, &j)| (i as i64, j)).collect())
}

/// A refined map and the size of the dictionary induced at each round.
#[derive(Debug)]
pub struct Refined {
    /// [d, d] f64
    pub w: Tensor,
    pub dictionary_sizes: Vec<usize>,
}

/// Refine a map by re-inducing a dictionary from mutual CSLS neighbours and re-fitting Procrustes.
/// # Shapes
/// `src` [n_s, d], `tgt` [n_t, d], `w` [d, d] → `W` [d, d] f64.
pub fn refine(src: &Tensor, tgt: &Tensor, w: &Tensor, opts: RefineOptions) -> Result<Refined> {
    let mut w = w.to_kind(Kind::Double);
    let mut sizes = Vec::with_capacity(opts.iterations);
    for _ in 0..opts.iterations {
        let pairs = mutual_csls_pairs(&apply_map(src, &w)?, tgt, opts.top_n, opts.csls_k)?;
        sizes.push(pairs.len());
        if pairs.len() < 2 {
            return Err(Error::Invalid(format!("refinement induced only {} mutual pairs", pairs.len())));
        }
        let (x, y) = paired_rows(src, tgt, &pairs)?;
        w = procrustes(&x, &y)?;
    }
    Ok(Refined { w, dictionary_sizes: sizes })
}

/// Mean cosine between mapped source rows and their paired target rows (f64), a fit diagnostic.
pub fn mean_pair_cosine(mapped: &Tensor, tgt: &Tensor, pairs: &[(i64, i64)]) -> Result<f64> {
    let (a, b) = paired_rows(mapped, tgt, pairs)?;
    let (a, b) = (a.to_kind(Kind::Double), b.to_kind(Kind::Double));
    let cos = (&a * &b).sum_dim_intlist(1, false, Kind::Double)
        / (a.square().sum_dim_intlist(1, false, Kind::Double).sqrt()
            * b.square().sum_dim_intlist(1, false, Kind::Double).sqrt())
        .clamp_min(f64::MIN_POSITIVE);
    Ok(super::to_vec_f64(&cos.mean(Kind::Double))?[0])
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

    fn orthogonal(d: i64, seed: i64) -> Tensor {
        Tensor::linalg_qr(&randn(d, d, seed), "reduced").0
    }

    fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
        (a - b).abs().max().double_value(&[])
    }

    fn to_na(t: &Tensor) -> nalgebra::DMatrix<f64> {
        let s = t.size();
        nalgebra::DMatrix::from_row_slice(s[0] as usize, s[1] as usize, &super::super::to_vec_f64(t).unwrap())
    }

    #[test]
    fn procrustes_recovers_a_rotation_and_matches_nalgebra() {
        let q = orthogonal(8, 1);
        let x = randn(200, 8, 2);
        let y = x.mm(&q.tr()) + randn(200, 8, 3) * 0.01;
        let w = procrustes(&x, &y).unwrap();
        assert!(max_abs_diff(&w, &q) < 5e-3, "{}", max_abs_diff(&w, &q));
        assert!(max_abs_diff(&w.mm(&w.tr()), &Tensor::eye(8, (Kind::Double, Device::Cpu))) < 1e-12);
        // Independent route: nalgebra's SVD of YᵀX.
        let svd = (to_na(&y).transpose() * to_na(&x)).svd(true, true);
        let w_na = svd.u.unwrap() * svd.v_t.unwrap();
        assert!((to_na(&w) - w_na).abs().max() < 1e-10);
        // Mapped rows line up with their pairs.
        let pairs: Vec<(i64, i64)> = (0..200).map(|i| (i, i)).collect();
        assert!(mean_pair_cosine(&apply_map(&x, &w).unwrap(), &y, &pairs).unwrap() > 0.999);
        // The cross-product summed over two halves gives the same map.
        let (x1, x2) = (x.narrow(0, 0, 120).to_kind(Kind::Double), x.narrow(0, 120, 80).to_kind(Kind::Double));
        let (y1, y2) = (y.narrow(0, 0, 120).to_kind(Kind::Double), y.narrow(0, 120, 80).to_kind(Kind::Double));
        let m = y1.tr().mm(&x1) + y2.tr().mm(&x2);
        assert!(max_abs_diff(&procrustes_from_cross(&m).unwrap(), &w) < 1e-10);
        assert!(procrustes_from_cross(&randn(3, 4, 1)).unwrap_err().to_string().contains("square"));
    }

    #[test]
    fn least_squares_recovers_a_general_map() {
        let a = randn(5, 7, 4); // 7-d source to 5-d target
        let x = randn(100, 7, 5);
        let y = x.mm(&a.tr());
        let w = least_squares(&x, &y).unwrap();
        assert_eq!(w.size(), [5, 7]);
        assert!(max_abs_diff(&w, &a) < 1e-10);
        assert!(procrustes(&x, &y).unwrap_err().to_string().contains("[100, 7]"));
    }

    #[test]
    fn refinement_grows_the_dictionary_and_improves_the_map() {
        let q = orthogonal(40, 6);
        let src = randn(500, 40, 7);
        let tgt = src.mm(&q.tr()) + randn(500, 40, 8) * 0.05;
        // A poor seed map: Procrustes on 50 pairs with heavy noise on the target side.
        let seed_pairs: Vec<(i64, i64)> = (0..50).map(|i| (i, i)).collect();
        let (x, y) = paired_rows(&src, &tgt, &seed_pairs).unwrap();
        let w0 = procrustes(&x, &(y + randn(50, 40, 9) * 0.8)).unwrap();
        let before = mutual_csls_pairs(&apply_map(&src, &w0).unwrap(), &tgt, 500, 10).unwrap();
        let r = refine(&src, &tgt, &w0, RefineOptions { iterations: 3, top_n: 500, csls_k: 10 }).unwrap();
        assert_eq!(r.dictionary_sizes.len(), 3);
        let after = mutual_csls_pairs(&apply_map(&src, &r.w).unwrap(), &tgt, 500, 10).unwrap();
        let correct = |p: &[(i64, i64)]| p.iter().filter(|(s, t)| s == t).count();
        let (e0, e1) = (max_abs_diff(&w0, &q), max_abs_diff(&r.w, &q));
        assert!(
            correct(&after) > correct(&before) && correct(&after) >= 490,
            "{} → {}",
            correct(&before),
            correct(&after)
        );
        assert!(e1 < e0 / 3.0 && e1 < 0.05, "seed {e0}, refined {e1}, {:?}", r.dictionary_sizes);
    }
}
