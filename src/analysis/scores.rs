//! Exact nearest-neighbour retrieval between two embedding spaces, computed in row blocks.
//!
//! Rows are vectors; both spaces are unit-normalised by row first, so `cos(x, y) = x·y`. For a source (query) `x`
//! and a target `y` the score is:
//! - **NN**: `cos(x, y)`;
//! - **CSLS** (Conneau, Lample, Ranzato, Denoyer & Jégou 2018, "Word Translation Without Parallel Data", ICLR,
//!   eq. 6): `2cos(x, y) − r_T(x) − r_S(y)`, with `r_T(x)` the mean cosine of `x`'s `k` nearest targets and
//!   `r_S(y)` the mean cosine of `y`'s `k` nearest sources (`k = 10` in the paper), over *all* rows of the
//!   other space;
//! - **inverted softmax** (Smith, Turban, Hamblin & Hammerla 2017, "Offline bilingual word vectors, orthogonal
//!   transformations and the inverted softmax", ICLR): `log P(x→y) = β·cos(x, y) − log Σ_{x'} exp(β·cos(x', y))`,
//!   normalised over all sources `x'` for each target (β the inverse temperature).
//!
//! **Blocks.** No `[n_src, n_tgt]` matrix is ever held: one pass over source blocks of `B` rows forms
//! `[B, n_tgt]` cosines, keeps each row's `k` best (for `r_T`) and merges each column's `k` best (for `r_S`) or
//! its log-sum-exp (inverted softmax) into running `[k, n_tgt]` / `[n_tgt]` tensors; a second pass over query
//! blocks scores and keeps the top k. `B` is chosen so one `[B, n_tgt]` f32 block fits [`Options::block_bytes`]
//! (256 MiB by default; a few blocks are alive at once). Products are in the inputs' precision (f32 unless an
//! input is f64); the `r` means and log-sum-exp merges are accumulated in f64.
//!
//! **Ties** are broken deterministically: among equal scores the lower target index ranks first, both inside the
//! top k and at its boundary (rows whose (k+1)-th best value equals their k-th are re-ranked with a stable sort).
use super::{matrix_float, to_vec_f64, to_vec_i64};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use tch::{Kind, Tensor};

/// How candidates are scored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum Method {
    /// Cosine similarity.
    Nn,
    /// Cross-domain similarity local scaling with `k` neighbours for the hubness terms.
    Csls { k: usize },
    /// Inverted softmax with inverse temperature `beta`.
    InvertedSoftmax { beta: f64 },
}

impl Method {
    /// `nn`, `csls` (k 10), `csls:K`, `isf` (β 30), `isf:BETA`.
    pub fn parse(s: &str, csls_k: usize, beta: f64) -> Result<Method> {
        match s.split_once(':') {
            None => match s {
                "nn" | "cos" => Ok(Method::Nn),
                "csls" => Ok(Method::Csls { k: csls_k }),
                "isf" | "inverted_softmax" => Ok(Method::InvertedSoftmax { beta }),
                _ => Err(Error::Invalid(format!("unknown retrieval method '{s}'; expected nn, csls or isf"))),
            },
            Some(("csls", k)) => k
                .parse()
                .ok()
                .filter(|k| *k > 0)
                .map(|k| Method::Csls { k })
                .ok_or_else(|| Error::Invalid(format!("csls:K needs a positive integer, got '{k}'"))),
            Some(("isf", b)) => b
                .parse()
                .ok()
                .filter(|b: &f64| b.is_finite() && *b > 0.0)
                .map(|beta| Method::InvertedSoftmax { beta })
                .ok_or_else(|| Error::Invalid(format!("isf:BETA needs a positive number, got '{b}'"))),
            _ => Err(Error::Invalid(format!("unknown retrieval method '{s}'; expected nn, csls or isf"))),
        }
    }
}

impl FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Method::parse(s, 10, 30.0)
    }
}

/// Block sizing.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Bytes of one `[B, n_tgt]` f32 score block.
    pub block_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options { block_bytes: 256 << 20 }
    }
}

impl Options {
    /// Rows per block for `n_tgt` targets.
    pub fn block_rows(&self, n_tgt: i64) -> i64 {
        ((self.block_bytes / (4 * n_tgt.max(1) as usize)) as i64).max(1)
    }
}

/// The `k` best targets of each query.
#[derive(Debug)]
pub struct TopK {
    /// Target indices, best first. [q, k] i64
    pub indices: Tensor,
    /// Their scores. [q, k]
    pub scores: Tensor,
}

/// Row-normalised source and target, plus per-source row constants and per-target penalties:
/// `score(x, y) = scale·cos(x, y) − row[x] − col[y]`.
pub struct Scorer {
    src: Tensor,
    tgt: Tensor,
    scale: f64,
    row: Option<Tensor>,
    col: Option<Tensor>,
    opts: Options,
}

fn unit_rows(x: &Tensor) -> Tensor {
    // Norms in f64, the division in the input's kind (no f64 copy of a large matrix).
    let norm = x.square().sum_dim_intlist(1, true, Kind::Double).sqrt().clamp_min(f64::MIN_POSITIVE);
    x / norm.to_kind(x.kind())
}

impl Scorer {
    /// Prepare scoring of `src` rows against `tgt` rows: one pass over all source blocks for CSLS and the
    /// inverted softmax, none for NN.
    /// # Shapes
    /// `src` [n_src, d], `tgt` [n_tgt, d].
    pub fn new(src: &Tensor, tgt: &Tensor, method: Method, opts: Options) -> Result<Scorer> {
        let src = matrix_float(src, "retrieval source")?;
        let tgt = matrix_float(tgt, "retrieval target")?;
        if src.size()[1] != tgt.size()[1] {
            return Err(Error::Invalid(format!(
                "source and target dimensions differ: source {:?}, target {:?}",
                src.size(),
                tgt.size()
            )));
        }
        let kind = if src.kind() == Kind::Double || tgt.kind() == Kind::Double { Kind::Double } else { Kind::Float };
        let src = unit_rows(&src.to_kind(kind));
        let tgt = unit_rows(&tgt.to_kind(kind));
        let (n_src, n_tgt) = (src.size()[0], tgt.size()[0]);
        let rows = opts.block_rows(n_tgt);
        let mut s = Scorer { src, tgt, scale: 1.0, row: None, col: None, opts };
        match method {
            Method::Nn => {}
            Method::Csls { k } => {
                if k == 0 {
                    return Err(Error::Invalid("CSLS needs k ≥ 1 neighbours".into()));
                }
                let (kt, ks) = ((k as i64).min(n_tgt), (k as i64).min(n_src));
                let (r_t, r_s) = s.csls_terms_pass(kt, ks, rows)?;
                s.scale = 2.0;
                s.row = Some(r_t);
                s.col = Some(r_s);
            }
            Method::InvertedSoftmax { beta } => {
                if !(beta.is_finite() && beta > 0.0) {
                    return Err(Error::Invalid(format!("inverted softmax needs β > 0, got {beta}")));
                }
                let mut lse: Option<Tensor> = None;
                let mut start = 0;
                while start < n_src {
                    let len = rows.min(n_src - start);
                    let part =
                        (s.src.narrow(0, start, len).mm(&s.tgt.tr()).to_kind(Kind::Double) * beta).logsumexp(0, false);
                    lse = Some(match lse {
                        None => part,
                        Some(prev) => prev.logaddexp(&part),
                    });
                    start += len;
                }
                s.scale = beta;
                s.col = lse;
            }
        }
        Ok(s)
    }

    /// The CSLS hubness terms in one pass over source blocks: `r_T` [n_src] and `r_S` [n_tgt], f64.
    ///
    /// Every large intermediate lives in a buffer allocated once: with fresh tensors per block, glibc's dynamic
    /// mmap threshold put the [n_tgt, k] column top-k results on the heap, whose fragmentation grew the resident set
    /// with every block (peak RSS before and with these buffers: docs/performance.md, *The latest measurements*, the
    /// `bench csls --n 200000` row, and *Accuracy of the analysis benchmarks*).
    fn csls_terms_pass(&self, kt: i64, ks: i64, rows: i64) -> Result<(Tensor, Tensor)> {
        let (n_src, n_tgt) = self.shape();
        let opts = (self.src.kind(), self.src.device());
        let tgt_t = self.tgt.tr();
        let block = Tensor::empty([rows.min(n_src), n_tgt], opts);
        // Column top-k on a transposed contiguous copy: top-k along a row is several times faster than along a
        // column of the row-major block.
        let block_t = Tensor::empty([n_tgt, rows.min(n_src)], opts);
        // Running best `ks` cosines of each target in the first half, the current block's in the second.
        let merge = Tensor::full([n_tgt, 2 * ks], f64::NEG_INFINITY, opts);
        let (best, best_at) = (Tensor::empty([n_tgt, ks], opts), Tensor::empty([n_tgt, ks], (Kind::Int64, opts.1)));
        let mut r_t = Vec::with_capacity((n_src / rows.max(1) + 1) as usize);
        let mut start = 0;
        while start < n_src {
            let len = rows.min(n_src - start);
            let cos = block.narrow(0, 0, len);
            let _ = self.src.narrow(0, start, len).mm_out(&cos, &tgt_t);
            let (row_top, _) = cos.topk(kt, 1, true, false);
            r_t.push(row_top.to_kind(Kind::Double).mean_dim(1, false, Kind::Double));
            let mut cos_t = block_t.narrow(1, 0, len);
            cos_t.copy_(&cos.tr());
            let m = ks.min(len);
            let _ = cos_t.topk_values(&best.narrow(1, 0, m), &best_at.narrow(1, 0, m), m, 1, true, false);
            merge.narrow(1, ks, m).copy_(&best.narrow(1, 0, m));
            if m < ks {
                let _ = merge.narrow(1, ks + m, ks - m).fill_(f64::NEG_INFINITY);
            }
            let _ = merge.topk_values(&best, &best_at, ks, 1, true, false);
            merge.narrow(1, 0, ks).copy_(&best);
            start += len;
        }
        if r_t.is_empty() {
            return Err(Error::Invalid("CSLS on an empty source".into()));
        }
        let r_s = merge.narrow(1, 0, ks).to_kind(Kind::Double).mean_dim(1, false, Kind::Double);
        Ok((Tensor::cat(&r_t, 0), r_s))
    }

    /// Number of source and target rows.
    pub fn shape(&self) -> (i64, i64) {
        (self.src.size()[0], self.tgt.size()[0])
    }

    /// Rows per query block.
    pub fn block_rows(&self) -> i64 {
        self.opts.block_rows(self.tgt.size()[0])
    }

    /// Scores of the given source rows against every target.
    /// # Shapes
    /// `queries` [b] i64 → [b, n_tgt], in the compute kind.
    pub fn block(&self, queries: &Tensor) -> Tensor {
        let q = self.src.index_select(0, queries);
        let kind = q.kind();
        // One fused product, scaling the small query block: (scale·q) tgtᵀ − col.
        let q = if self.scale != 1.0 { q * self.scale } else { q };
        let mut sc = match &self.col {
            Some(col) => col.to_kind(kind).neg().unsqueeze(0).addmm(&q, &self.tgt.tr()),
            None => q.mm(&self.tgt.tr()),
        };
        if let Some(row) = &self.row {
            sc -= row.index_select(0, queries).to_kind(kind).unsqueeze(1);
        }
        sc
    }

    /// Top `k` targets of each query (all sources when `queries` is `None`), best first, ties to the lower index.
    /// # Shapes
    /// `queries` [q] i64 → [q, k].
    pub fn top_k(&self, queries: Option<&Tensor>, k: usize) -> Result<TopK> {
        let (n_src, n_tgt) = self.shape();
        let all;
        let queries = match queries {
            Some(q) => q,
            None => {
                all = Tensor::arange(n_src, (Kind::Int64, self.src.device()));
                &all
            }
        };
        let k = (k as i64).min(n_tgt);
        if k == 0 {
            return Err(Error::Invalid("top-k needs k ≥ 1".into()));
        }
        let nq = queries.size()[0];
        let rows = self.block_rows();
        let (mut idx, mut val) = (Vec::new(), Vec::new());
        let mut start = 0;
        while start < nq {
            let len = rows.min(nq - start);
            let sc = self.block(&queries.narrow(0, start, len).to_device(self.src.device()));
            let (v, i) = deterministic_topk(&sc, k)?;
            idx.push(i);
            val.push(v);
            start += len;
        }
        if idx.is_empty() {
            return Ok(TopK {
                indices: Tensor::zeros([0, k], (Kind::Int64, self.src.device())),
                scores: Tensor::zeros([0, k], (self.src.kind(), self.src.device())),
            });
        }
        Ok(TopK { indices: Tensor::cat(&idx, 0), scores: Tensor::cat(&val, 0) })
    }

    /// The 1-based rank of the best-ranked gold target of each query: `1 + #{y: s_y > s_g} + #{y < g: s_y = s_g}`,
    /// minimised over the query's golds `g` (ties go to the lower index, as in [`Scorer::top_k`]).
    pub fn gold_ranks(&self, queries: &[i64], golds: &[Vec<i64>]) -> Result<Vec<usize>> {
        if queries.len() != golds.len() {
            return Err(Error::Invalid(format!("{} queries but {} gold lists", queries.len(), golds.len())));
        }
        let (_, n_tgt) = self.shape();
        let dev = self.src.device();
        let rows = self.block_rows() as usize;
        let positions = Tensor::arange(n_tgt, (Kind::Int64, dev)).unsqueeze(0);
        let mut out = Vec::with_capacity(queries.len());
        for (qs, gs) in queries.chunks(rows).zip(golds.chunks(rows)) {
            let g_max = gs.iter().map(Vec::len).max().unwrap_or(0);
            if gs.iter().any(|g| g.is_empty() || g.iter().any(|&i| i < 0 || i >= n_tgt)) {
                return Err(Error::Invalid(format!("every query needs gold targets in [0, {n_tgt})")));
            }
            let padded: Vec<i64> = gs.iter().flat_map(|g| (0..g_max).map(move |j| g[j.min(g.len() - 1)])).collect();
            let gold = Tensor::from_slice(&padded).reshape([gs.len() as i64, g_max as i64]).to_device(dev);
            let sc = self.block(&Tensor::from_slice(qs).to_device(dev));
            let gold_sc = sc.gather(1, &gold, false);
            let mut best: Option<Tensor> = None;
            for j in 0..g_max as i64 {
                let s = gold_sc.narrow(1, j, 1);
                let g = gold.narrow(1, j, 1);
                let ahead = sc.gt_tensor(&s).sum_dim_intlist(1, false, Kind::Int64)
                    + sc.eq_tensor(&s).logical_and(&positions.lt_tensor(&g)).sum_dim_intlist(1, false, Kind::Int64);
                best = Some(match best {
                    None => ahead,
                    Some(b) => b.minimum(&ahead),
                });
            }
            if let Some(b) = best {
                out.extend(to_vec_i64(&b)?.into_iter().map(|a| a as usize + 1));
            }
        }
        Ok(out)
    }

    /// The hubness terms `r_T` over sources and `r_S` / log-sum-exp over targets, as f64 (empty for NN).
    pub fn terms(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let f = |t: &Option<Tensor>| t.as_ref().map(to_vec_f64).transpose().map(Option::unwrap_or_default);
        Ok((f(&self.row)?, f(&self.col)?))
    }
}

/// Rows re-ranked by one full sort in [`deterministic_topk`] (bounds its memory).
const CROWDED_ROWS_PER_SORT: usize = 8;

/// Row-wise top k, best first; among equal scores the lower column index first, at the k-th boundary too.
/// # Shapes
/// `scores` [b, n] → ([b, k], [b, k] i64).
pub fn deterministic_topk(scores: &Tensor, k: i64) -> Result<(Tensor, Tensor)> {
    let n = scores.size()[1];
    // Take k + 1: a row has a tie at the boundary exactly when its (k+1)-th value equals its k-th (every other
    // value is ≤ the (k+1)-th). Those rows are re-ranked with a stable sort.
    let (v, i) = scores.topk((k + 1).min(n), 1, true, true);
    let crowded = if k < n {
        v.narrow(1, k, 1).eq_tensor(&v.narrow(1, k - 1, 1)).reshape([-1])
    } else {
        Tensor::zeros([scores.size()[0]], (Kind::Bool, scores.device()))
    };
    let (v, i) = (v.narrow(1, 0, k), i.narrow(1, 0, k));
    let crowded_rows = to_vec_i64(&crowded.nonzero().reshape([-1]))?;
    let (v, i) = if crowded_rows.is_empty() {
        (v, i)
    } else {
        // A full stable sort of a row holds about 16 bytes per column (values, indices, sort buffers): a few rows
        // at a time keeps a 200k-column block of many tied rows within a few tens of MiB.
        let (mut v, mut i) = (v.copy(), i.copy());
        for chunk in crowded_rows.chunks(CROWDED_ROWS_PER_SORT) {
            let rows = Tensor::from_slice(chunk).to_device(scores.device());
            let (sv, si) = scores.index_select(0, &rows).sort_stable(true, 1, true);
            let _ = v.index_copy_(0, &rows, &sv.narrow(1, 0, k));
            let _ = i.index_copy_(0, &rows, &si.narrow(1, 0, k));
        }
        (v, i)
    };
    // Inside the top k: order by index, then stable-sort by score.
    let by_index = i.argsort(1, false);
    let (v, i) = (v.gather(1, &by_index, false), i.gather(1, &by_index, false));
    let (v, order) = v.sort_stable(true, 1, true);
    Ok((v, i.gather(1, &order, false)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Device;

    fn randn(r: i64, c: i64, seed: i64) -> Tensor {
        let _g = crate::device::torch_rng_lock();
        tch::manual_seed(seed);
        Tensor::randn([r, c], (Kind::Float, Device::Cpu))
    }

    /// Brute force in f64: the full score matrix from the definitions, ranked by a stable sort per row.
    fn brute(src: &Tensor, tgt: &Tensor, method: Method, k: usize) -> (Vec<Vec<i64>>, Vec<Vec<f64>>) {
        let norm = |x: &Tensor| {
            let v: Vec<Vec<f64>> = Vec::<Vec<f64>>::try_from(x.to_kind(Kind::Double)).unwrap();
            v.into_iter()
                .map(|r| {
                    let n = r.iter().map(|a| a * a).sum::<f64>().sqrt();
                    r.into_iter().map(|a| a / n).collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        let (s, t) = (norm(src), norm(tgt));
        let cos: Vec<Vec<f64>> =
            s.iter().map(|a| t.iter().map(|b| a.iter().zip(b).map(|(x, y)| x * y).sum()).collect()).collect();
        let mean_top = |v: &mut Vec<f64>, k: usize| {
            v.sort_by(|a, b| b.total_cmp(a));
            v[..k.min(v.len())].iter().sum::<f64>() / k.min(v.len()) as f64
        };
        let score: Vec<Vec<f64>> = match method {
            Method::Nn => cos.clone(),
            Method::Csls { k: kk } => {
                let r_t: Vec<f64> = cos.iter().map(|r| mean_top(&mut r.clone(), kk)).collect();
                let r_s: Vec<f64> =
                    (0..t.len()).map(|j| mean_top(&mut cos.iter().map(|r| r[j]).collect(), kk)).collect();
                cos.iter()
                    .enumerate()
                    .map(|(i, r)| r.iter().enumerate().map(|(j, c)| 2.0 * c - r_t[i] - r_s[j]).collect())
                    .collect()
            }
            Method::InvertedSoftmax { beta } => {
                let lse: Vec<f64> = (0..t.len())
                    .map(|j| {
                        let m = cos.iter().map(|r| beta * r[j]).fold(f64::NEG_INFINITY, f64::max);
                        m + cos.iter().map(|r| (beta * r[j] - m).exp()).sum::<f64>().ln()
                    })
                    .collect();
                cos.iter().map(|r| r.iter().enumerate().map(|(j, c)| beta * c - lse[j]).collect()).collect()
            }
        };
        let mut idx = Vec::new();
        let mut val = Vec::new();
        for r in &score {
            let mut order: Vec<usize> = (0..r.len()).collect();
            order.sort_by(|&a, &b| r[b].total_cmp(&r[a])); // stable: equal scores keep index order
            idx.push(order[..k].iter().map(|&j| j as i64).collect());
            val.push(order[..k].iter().map(|&j| r[j]).collect());
        }
        (idx, val)
    }

    #[test]
    fn blocked_top_k_equals_brute_force_for_every_method() {
        let src = randn(70, 8, 1);
        let tgt = randn(53, 8, 2);
        for method in [Method::Nn, Method::Csls { k: 10 }, Method::InvertedSoftmax { beta: 10.0 }] {
            // 4 * 53 * 3 bytes: blocks of 3 rows, so every pass crosses many block boundaries.
            let opts = Options { block_bytes: 4 * 53 * 3 };
            let s = Scorer::new(&src, &tgt, method, opts).unwrap();
            let got = s.top_k(None, 5).unwrap();
            let (want_idx, want_val) = brute(&src, &tgt, method, 5);
            assert_eq!(Vec::<Vec<i64>>::try_from(&got.indices).unwrap(), want_idx, "{method:?}");
            let vals = Vec::<Vec<f64>>::try_from(got.scores.to_kind(Kind::Double)).unwrap();
            for (a, b) in vals.iter().flatten().zip(want_val.iter().flatten()) {
                assert!((a - b).abs() < 1e-4, "{method:?}: {a} vs {b}");
            }
            // A subset of queries gives the same rows as the full run.
            let q = Tensor::from_slice(&[69i64, 0, 33]);
            let sub = s.top_k(Some(&q), 5).unwrap();
            assert!(sub.indices.equal(&got.indices.index_select(0, &q)));
            // One big block gives the same answer as many small ones.
            let one = Scorer::new(&src, &tgt, method, Options::default()).unwrap().top_k(None, 5).unwrap();
            assert!(one.indices.equal(&got.indices), "{method:?}");
        }
    }

    #[test]
    fn ties_go_to_the_lower_index() {
        // Targets 1, 2 and 4 are identical: every query scores them equally.
        let tgt = Tensor::from_slice(&[0.0f32, 1.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 1.0, 0.0]).reshape([5, 2]);
        let src = Tensor::from_slice(&[1.0f32, 0.0, 2.0, 0.1]).reshape([2, 2]);
        let s = Scorer::new(&src, &tgt, Method::Nn, Options::default()).unwrap();
        for k in 1..=3 {
            let top = s.top_k(None, k).unwrap();
            let want: Vec<i64> = [1, 2, 4][..k].to_vec();
            assert_eq!(Vec::<Vec<i64>>::try_from(&top.indices).unwrap(), vec![want.clone(), want]);
        }
        // The gold rank counts equal-scoring lower indices as ahead.
        assert_eq!(s.gold_ranks(&[0, 0, 0, 0], &[vec![1], vec![2], vec![4], vec![0, 4]]).unwrap(), [1, 2, 3, 3]);
    }

    #[test]
    fn gold_ranks_match_sorted_positions() {
        let src = randn(30, 6, 3);
        let tgt = randn(40, 6, 4);
        for method in [Method::Nn, Method::Csls { k: 3 }] {
            let s = Scorer::new(&src, &tgt, method, Options { block_bytes: 4 * 40 * 4 }).unwrap();
            let (order, _) = brute(&src, &tgt, method, 40);
            let queries: Vec<i64> = (0..30).collect();
            let golds: Vec<Vec<i64>> = (0..30).map(|i| vec![(i * 7) % 40, (i * 3 + 1) % 40]).collect();
            let ranks = s.gold_ranks(&queries, &golds).unwrap();
            for (q, r) in ranks.iter().enumerate() {
                let pos = |g: i64| order[q].iter().position(|&j| j == g).unwrap() + 1;
                assert_eq!(*r, pos(golds[q][0]).min(pos(golds[q][1])), "{method:?} query {q}");
            }
        }
    }

    #[test]
    fn errors_and_parsing() {
        let e = Scorer::new(&randn(3, 4, 1), &randn(3, 5, 2), Method::Nn, Options::default()).err().unwrap();
        assert!(e.to_string().contains("[3, 4]") && e.to_string().contains("[3, 5]"));
        assert_eq!("csls".parse::<Method>().unwrap(), Method::Csls { k: 10 });
        assert_eq!("csls:5".parse::<Method>().unwrap(), Method::Csls { k: 5 });
        assert_eq!("isf:12.5".parse::<Method>().unwrap(), Method::InvertedSoftmax { beta: 12.5 });
        assert!("knn".parse::<Method>().is_err() && "csls:0".parse::<Method>().is_err());
    }
}
