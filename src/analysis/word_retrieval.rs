//! Word retrieval by mean reciprocal rank (Liu et al. 2020, §3.1.1): representations of several languages that
//! share one space (jointly trained, no mapping) are probed with a bilingual dictionary. For each pair `(s, t)`,
//! every candidate target word `c` is ranked by `cos(v_s, v_c)`; the pair's reciprocal rank is `1 / rank(t)`, with
//! `rank(t) = 1 + |{c : cos(v_s, v_c) > cos(v_s, v_t)}|` (ties count in the pair's favour), and
//! `MRR = mean over pairs of 1 / rank(t)`. Each pair is scored on its own target, so a source word with two
//! translations contributes two pairs. P@1 (`rank = 1`) is reported beside it.
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
    let (mut rr, mut top1) = (0f64, 0usize);
    for block in pairs.chunks(BLOCK as usize) {
        let s_idx = Tensor::from_slice(&block.iter().map(|p| p.0).collect::<Vec<_>>());
        let g_idx = Tensor::from_slice(&block.iter().map(|p| p.1).collect::<Vec<_>>());
        let sims = src.index_select(0, &s_idx).mm(&cand.tr()); // [b, n_cand]
        let gold = sims.gather(1, &g_idx.unsqueeze(1), false); // [b, 1]
        let ranks =
            Vec::<i64>::try_from(sims.gt_tensor(&gold).sum_dim_intlist([1i64].as_slice(), false, Kind::Int64) + 1)
                .map_err(|e| Error::Invalid(format!("word retrieval ranks: {e}")))?;
        rr += ranks.iter().map(|&r| 1.0 / r as f64).sum::<f64>();
        top1 += ranks.iter().filter(|&&r| r == 1).count();
    }
    let n = pairs.len() as f64;
    Ok(Retrieval { mrr: rr / n, p_at_1: top1 as f64 / n, pairs: pairs.len(), candidates: cs[0] as usize })
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
        for &(i, g) in &pairs {
            let gold = cos(&s[i as usize], &c[g as usize]);
            let rank = 1 + c.iter().filter(|v| cos(&s[i as usize], v) > gold + 1e-6).count();
            want += 1.0 / rank as f64;
        }
        assert!((r.mrr - want / pairs.len() as f64).abs() < 1e-9, "{} vs {}", r.mrr, want / pairs.len() as f64);
        assert_eq!((r.pairs, r.candidates), (8, 11));
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
