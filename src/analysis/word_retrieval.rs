//! Word retrieval by mean reciprocal rank (Liu et al. 2020, §3.1.1): representations of several languages that
//! share one space (jointly trained, no mapping) are probed with a bilingual dictionary. For each pair `(s, t)`,
//! every candidate target word `c` is ranked by `cos(v_s, v_c)`; the pair's reciprocal rank is `1 / rank(t)`, with
//! `rank(t) = 1 + |{c : cos(v_s, v_c) > cos(v_s, v_t)}|` (ties count in the pair's favour), and
//! `MRR = mean over pairs of 1 / rank(t)`. Each pair is scored on its own target, so a source word with two
//! translations contributes two pairs. P@1 (`rank = 1`) is reported beside it, and every pair's rank, so that
//! the MRR's uncertainty can be bootstrapped over the pairs (`crate::claims`).
//!
//! Chance level: a random ranking puts the gold at each rank `1..=n` of `n` candidates with probability `1/n`, so
//! its expected MRR is `H_n / n = (1/n) Σ_{k=1..n} 1/k` ([`random_mrr`]).
use serde::Serialize;
use tch::{Kind, Tensor};

use crate::error::{Error, Result};

/// Rows of source vectors scored at a time.
const BLOCK: i64 = 1024;

/// MRR and P@1 of one representation over a dictionary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retrieval {
    pub mrr: f64,
    pub p_at_1: f64,
    pub pairs: usize,
    pub candidates: usize,
    /// The gold's rank (1 = retrieved first) of every pair, in the order of the `pairs` given.
    pub ranks: Vec<u64>,
}

impl Retrieval {
    /// `1 / rank` of every pair, in the order of the pairs given: the per-item values whose mean is the MRR.
    pub fn reciprocal_ranks(&self) -> Vec<f64> {
        self.ranks.iter().map(|&r| 1.0 / r as f64).collect()
    }
}

/// The expected MRR of a random ranking of `n` candidates, `H_n / n` (the gold is equally likely at every rank);
/// 0 for no candidates.
pub fn random_mrr(n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    (1..=n).map(|k| 1.0 / k as f64).sum::<f64>() / n as f64
}

/// Scores `pairs[i] = (source row, gold candidate row)`.
/// # Shapes
/// `src`: `[n_src, d]`, `cand`: `[n_cand, d]` (any float kind; zero rows have cosine 0 with everything)
pub fn mrr(src: &Tensor, cand: &Tensor, pairs: &[(i64, i64)]) -> Result<Retrieval> {
    let (ss, cs) = (src.size(), cand.size());
    if ss.len() != 2 || cs.len() != 2 || ss[1] != cs[1] {
        return Err(Error::Invalid(format!("word retrieval needs [n, d] and [m, d] matrices, got {ss:?} and {cs:?}")));
    }
    if pairs.is_empty() {
        return Err(Error::Invalid("word retrieval: no dictionary pair has vectors on both sides".into()));
    }
    if let Some(p) = pairs.iter().find(|(s, c)| *s < 0 || *s >= ss[0] || *c < 0 || *c >= cs[0]) {
        return Err(Error::Invalid(format!("pair {p:?} is outside the {} source and {} candidate rows", ss[0], cs[0])));
    }
    let unit = |t: &Tensor| {
        let t = t.to_kind(Kind::Float);
        let norm = t.norm_scalaropt_dim(2, [1], true).clamp_min(1e-12);
        t / norm
    };
    let (src, cand) = (unit(src), unit(cand));
    let mut all: Vec<u64> = Vec::with_capacity(pairs.len());
    for block in pairs.chunks(BLOCK as usize) {
        let s_idx = Tensor::from_slice(&block.iter().map(|p| p.0).collect::<Vec<_>>());
        let g_idx = Tensor::from_slice(&block.iter().map(|p| p.1).collect::<Vec<_>>());
        let sims = src.index_select(0, &s_idx).mm(&cand.tr()); // [b, n_cand]
        let gold = sims.gather(1, &g_idx.unsqueeze(1), false); // [b, 1]
        let ranks =
            Vec::<i64>::try_from(sims.gt_tensor(&gold).sum_dim_intlist([1i64].as_slice(), false, Kind::Int64) + 1)
                .map_err(|e| Error::Invalid(format!("word retrieval ranks: {e}")))?;
        all.extend(ranks.iter().map(|&r| r as u64));
    }
    let n = pairs.len() as f64;
    let rr = all.iter().map(|&r| 1.0 / r as f64).sum::<f64>();
    let top1 = all.iter().filter(|&&r| r == 1).count();
    Ok(Retrieval { mrr: rr / n, p_at_1: top1 as f64 / n, pairs: pairs.len(), candidates: cs[0] as usize, ranks: all })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_cosine_against_a_brute_force_count() {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(3);
        let src = Tensor::randn([7, 5], (Kind::Float, tch::Device::Cpu));
        let cand = Tensor::randn([11, 5], (Kind::Float, tch::Device::Cpu)) * 3.0;
        let pairs: Vec<(i64, i64)> = (0..7).map(|i| (i, (i * 3) % 11)).chain([(0, 4)]).collect();
        let r = mrr(&src, &cand, &pairs).unwrap();
        let s = Vec::<Vec<f64>>::try_from(src.to_kind(Kind::Double)).unwrap();
        let c = Vec::<Vec<f64>>::try_from(cand.to_kind(Kind::Double)).unwrap();
        let cos = |a: &[f64], b: &[f64]| {
            let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            dot / (a.iter().map(|x| x * x).sum::<f64>().sqrt() * b.iter().map(|x| x * x).sum::<f64>().sqrt())
        };
        let mut want = 0.0;
        let mut want_ranks = Vec::new();
        for &(i, g) in &pairs {
            let gold = cos(&s[i as usize], &c[g as usize]);
            let rank = 1 + c.iter().filter(|v| cos(&s[i as usize], v) > gold + 1e-6).count();
            want += 1.0 / rank as f64;
            want_ranks.push(rank as u64);
        }
        assert!((r.mrr - want / pairs.len() as f64).abs() < 1e-9, "{} vs {}", r.mrr, want / pairs.len() as f64);
        assert_eq!((r.pairs, r.candidates), (8, 11));
        assert_eq!(r.ranks, want_ranks, "per-pair ranks in the order of the pairs");
        let rr = r.reciprocal_ranks();
        assert!((rr.iter().sum::<f64>() / rr.len() as f64 - r.mrr).abs() < 1e-12, "the items' mean is the MRR");
        let top1 = r.ranks.iter().filter(|&&k| k == 1).count() as f64 / r.ranks.len() as f64;
        assert_eq!(r.p_at_1, top1);
    }

    #[test]
    fn a_gold_at_every_rank_once_scores_the_random_ranking_mrr() {
        // Candidate k at angle k·10° from the single source vector: pair (0, k) ranks its gold k + 1th, so n pairs
        // with golds 0..n take every rank once, which is what a random ranking averages to: H_n / n.
        let n = 7;
        let angles: Vec<f64> = (0..n).map(|k| (k as f64 * 10.0).to_radians()).collect();
        let cand: Vec<f32> = angles.iter().flat_map(|a| [a.cos() as f32, a.sin() as f32]).collect();
        let cand = Tensor::from_slice(&cand).view([n, 2]);
        let src = Tensor::from_slice(&[1.0f32, 0.0]).view([1, 2]);
        let pairs: Vec<(i64, i64)> = (0..n).map(|k| (0, k)).collect();
        let r = mrr(&src, &cand, &pairs).unwrap();
        assert_eq!(r.ranks, (1..=n as u64).collect::<Vec<_>>());
        assert!((r.mrr - random_mrr(n as usize)).abs() < 1e-12, "{} vs {}", r.mrr, random_mrr(n as usize));
        assert_eq!(random_mrr(1), 1.0);
        assert_eq!(random_mrr(2), 0.75);
        assert!((random_mrr(3) - (1.0 + 0.5 + 1.0 / 3.0) / 3.0).abs() < 1e-15);
        assert_eq!(random_mrr(0), 0.0);
    }

    #[test]
    fn identical_spaces_retrieve_perfectly_and_bad_input_is_refused() {
        let x = Tensor::eye(4, (Kind::Float, tch::Device::Cpu));
        let r = mrr(&x, &x, &[(0, 0), (1, 1), (2, 2), (3, 3)]).unwrap();
        assert_eq!((r.mrr, r.p_at_1), (1.0, 1.0));
        let r = mrr(&x, &x, &[(0, 1)]).unwrap();
        assert!(r.mrr < 1.0, "an orthogonal gold ties with the others but loses to the source word itself");
        assert!(mrr(&x, &x, &[]).is_err());
        assert!(mrr(&x, &x, &[(0, 9)]).unwrap_err().to_string().contains("outside"));
        assert!(mrr(&x, &Tensor::eye(3, (Kind::Float, tch::Device::Cpu)), &[(0, 0)]).is_err());
    }
}
