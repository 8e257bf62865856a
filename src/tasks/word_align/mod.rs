//! Word alignment with the fast_align model (Dyer, Chahuneau & Smith 2013): IBM Model 2 reparameterised with a
//! diagonal prior, trained by EM, aligned by Viterbi, run both ways and symmetrised.
//!
//! **Model.** Each *target* word `f_j` (`j = 1..m`) of a sentence pair chooses one *source* position `a_j` in
//! `0..=n`, position 0 being the null word:
//! ```text
//! p(a_j = 0) = p0
//! p(a_j = i) = (1 − p0) · exp(−λ |j/m − i/n|) / Σ_{i'=1..n} exp(−λ |j/m − i'/n|)      (i = 1..n)
//! p(f_j | a_j = i) = t(f_j | e_i),  e_0 = NULL
//! ```
//! **EM.** The E-step shares each target word among the positions in proportion to `p(a_j = i) · t(f_j | e_i)`; the
//! M-step sets `t(f | e) = c(e, f) / Σ_f' c(e, f')`. `t` starts uniform, so the first E-step follows the prior alone.
//! **Viterbi.** Model 2 factorises over target words, so each takes its most probable position (the lower position
//! on ties, null first); null leaves it unaligned. A (source, target) word pair never seen together in training —
//! an unknown word, say — has `t = 1e-9`, the floor of fast_align's table, so the prior decides.
//!
//! **Defaults** are those of `fast_align -d` (diagonal prior on, plain EM without `-v`): 5 iterations, tension
//! λ = 4, p0 = 0.08. The tension stays **fixed** (fast_align's `-o` re-estimates it; this implementation does not);
//! λ = 0 gives IBM Model 1 with a null probability p0. Viterbi uses `t` after all `iterations` EM rounds.
//!
//! **Determinism.** Vocabularies and translation pairs are numbered by first occurrence and counts are reduced in that
//! order; hash maps are used for look-ups only. Links are `(source index, target index)`, 0-based, sorted.
//!
//! [`align_both_ways`] trains one model per direction (target words choosing source words, and the reverse) and
//! symmetrises each sentence with grow-diag-final-and ([`crate::tasks::word_align::symmetrize`]), as Wu, Conneau et al. 2020 do to
//! get word pairs for their contextual word-level alignment.
pub mod aer;
pub mod link;
pub mod symmetrize;
use crate::error::{Error, Result};
use crate::tasks::word_align::symmetrize::grow_diag_final_and;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

pub use link::Link;

/// Translation probability of a pair never seen in training.
const FLOOR: f64 = 1e-9;

/// fast_align's settings; the default is `fast_align -d` with a fixed tension.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlignConfig {
    /// EM iterations (0 leaves `t` uniform: alignment by the prior alone).
    pub iterations: usize,
    /// Diagonal tension λ ≥ 0.
    pub tension: f64,
    /// Null-alignment probability p0 in `[0, 1)`.
    pub p_null: f64,
}

impl Default for AlignConfig {
    fn default() -> Self {
        AlignConfig { iterations: 5, tension: 4.0, p_null: 0.08 }
    }
}

/// The alignment prior over source positions `1..=n` of target position `j` (1-based) of `m`; it sums to 1.
fn diagonal_prior(j: usize, m: usize, n: usize, tension: f64) -> Vec<f64> {
    let un: Vec<f64> = (1..=n).map(|i| (-tension * (j as f64 / m as f64 - i as f64 / n as f64).abs()).exp()).collect();
    let z: f64 = un.iter().sum();
    un.into_iter().map(|u| u / z).collect()
}

/// A trained one-direction model: every target word chooses a source position.
#[derive(Debug, Clone)]
pub struct FastAlign {
    config: AlignConfig,
    /// Source word ids from 1 (0 is NULL), target word ids from 0; by first occurrence.
    src_ids: HashMap<String, u32>,
    tgt_ids: HashMap<String, u32>,
    /// (source id, target id) → row of `t`, by first co-occurrence.
    pairs: HashMap<(u32, u32), usize>,
    t: Vec<f64>,
}

/// The id of `w`, numbering new words from `first` in order of first occurrence.
fn intern<S: AsRef<str>>(ids: &mut HashMap<String, u32>, w: &S, first: u32) -> u32 {
    if let Some(&id) = ids.get(w.as_ref()) {
        return id;
    }
    let id = first + ids.len() as u32;
    ids.insert(w.as_ref().to_string(), id);
    id
}

impl FastAlign {
    /// Train on sentence pairs (`src[k]` ↔ `tgt[k]`, tokenized).
    pub fn train<S: AsRef<str>, T: AsRef<str>>(src: &[Vec<S>], tgt: &[Vec<T>], config: &AlignConfig) -> Result<Self> {
        if src.len() != tgt.len() {
            return Err(Error::Invalid(format!(
                "word alignment: {} source sentences but {} target sentences",
                src.len(),
                tgt.len()
            )));
        }
        if !((0.0..1.0).contains(&config.p_null) && config.tension.is_finite() && config.tension >= 0.0) {
            return Err(Error::Invalid(format!(
                "word alignment: need 0 ≤ p_null < 1 and a finite tension ≥ 0, got p_null = {}, tension = {}",
                config.p_null, config.tension
            )));
        }
        let (mut src_ids, mut tgt_ids) = (HashMap::new(), HashMap::new());
        let es: Vec<Vec<u32>> = src.iter().map(|s| s.iter().map(|w| intern(&mut src_ids, w, 1)).collect()).collect();
        let fs: Vec<Vec<u32>> = tgt.iter().map(|s| s.iter().map(|w| intern(&mut tgt_ids, w, 0)).collect()).collect();
        let mut pairs = HashMap::new();
        let mut pair_src: Vec<u32> = Vec::new();
        for (e, f) in es.iter().zip(&fs) {
            for &fw in f {
                for &ew in std::iter::once(&0).chain(e) {
                    pairs.entry((ew, fw)).or_insert_with(|| {
                        pair_src.push(ew);
                        pair_src.len() - 1
                    });
                }
            }
        }
        let uniform = 1.0 / tgt_ids.len().max(1) as f64;
        let mut model = FastAlign { config: *config, src_ids, tgt_ids, pairs, t: vec![uniform; pair_src.len()] };
        let mut posterior = Vec::new();
        for _ in 0..config.iterations {
            let mut counts = vec![0.0; model.t.len()];
            for (e, f) in es.iter().zip(&fs) {
                for (j, &fw) in f.iter().enumerate() {
                    model.position_scores(e, j, f.len(), |ew| model.pairs.get(&(ew, fw)).copied(), &mut posterior);
                    let z: f64 = posterior.iter().map(|(_, p)| p).sum();
                    if z > 0.0 {
                        for &(row, p) in &posterior {
                            if let Some(row) = row {
                                counts[row] += p / z;
                            }
                        }
                    }
                }
            }
            let mut totals = vec![0.0; model.src_ids.len() + 1];
            for (row, &c) in counts.iter().enumerate() {
                totals[pair_src[row] as usize] += c;
            }
            for (row, &c) in counts.iter().enumerate() {
                let total = totals[pair_src[row] as usize];
                if total > 0.0 {
                    model.t[row] = c / total;
                }
            }
        }
        Ok(model)
    }

    /// `(row of t, unnormalised posterior)` of each position `0..=n` of target word `j` (0-based) of `m`.
    fn position_scores(
        &self,
        e: &[u32],
        j: usize,
        m: usize,
        row: impl Fn(u32) -> Option<usize>,
        out: &mut Vec<(Option<usize>, f64)>,
    ) {
        let t = |r: Option<usize>| r.map_or(FLOOR, |r| self.t[r]);
        out.clear();
        let null = row(0);
        out.push((null, self.config.p_null * t(null)));
        let prior = diagonal_prior(j + 1, m, e.len(), self.config.tension);
        for (&ew, pr) in e.iter().zip(prior) {
            let r = row(ew);
            out.push((r, (1.0 - self.config.p_null) * pr * t(r)));
        }
    }

    /// `t(target | source)`, `None` for the null word; the floor for pairs unseen in training.
    pub fn translation(&self, source: Option<&str>, target: &str) -> f64 {
        let e = match source {
            None => Some(0),
            Some(w) => self.src_ids.get(w).copied(),
        };
        let row = e.zip(self.tgt_ids.get(target)).and_then(|(e, &f)| self.pairs.get(&(e, f)));
        row.map_or(FLOOR, |&r| self.t[r])
    }

    /// The Viterbi alignment of one sentence pair: links `(source index, target index)`, sorted.
    pub fn viterbi<S: AsRef<str>, T: AsRef<str>>(&self, src: &[S], tgt: &[T]) -> Vec<Link> {
        // Unknown source words get an id no pair uses.
        let e: Vec<u32> = src.iter().map(|w| self.src_ids.get(w.as_ref()).copied().unwrap_or(u32::MAX)).collect();
        let mut scores = Vec::new();
        let mut links = Vec::new();
        for (j, w) in tgt.iter().enumerate() {
            let f = self.tgt_ids.get(w.as_ref()).copied();
            self.position_scores(&e, j, tgt.len(), |ew| f.and_then(|f| self.pairs.get(&(ew, f)).copied()), &mut scores);
            let best = (1..scores.len()).fold(0, |b, a| if scores[a].1 > scores[b].1 { a } else { b });
            if best > 0 {
                links.push((best - 1, j));
            }
        }
        links.sort_unstable();
        links
    }

    /// The Viterbi alignment of every sentence pair.
    pub fn align_corpus<S: AsRef<str>, T: AsRef<str>>(&self, src: &[Vec<S>], tgt: &[Vec<T>]) -> Result<Vec<Vec<Link>>> {
        if src.len() != tgt.len() {
            return Err(Error::Invalid(format!(
                "word alignment: {} source sentences but {} target sentences",
                src.len(),
                tgt.len()
            )));
        }
        Ok(src.iter().zip(tgt).map(|(s, t)| self.viterbi(s, t)).collect())
    }
}

/// The alignments of a corpus in both directions and symmetrised, all as `(source index, target index)` links.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Alignments {
    /// Target words choosing source words.
    pub forward: Vec<Vec<Link>>,
    /// Source words choosing target words.
    pub reverse: Vec<Vec<Link>>,
    /// grow-diag-final-and of the two.
    pub symmetric: Vec<Vec<Link>>,
}

/// Train both directions on the corpus, align it, and symmetrise with grow-diag-final-and.
pub fn align_both_ways<S: AsRef<str>, T: AsRef<str>>(
    src: &[Vec<S>],
    tgt: &[Vec<T>],
    config: &AlignConfig,
) -> Result<Alignments> {
    let forward = FastAlign::train(src, tgt, config)?.align_corpus(src, tgt)?;
    let reverse: Vec<Vec<Link>> = FastAlign::train(tgt, src, config)?
        .align_corpus(tgt, src)?
        .into_iter()
        .map(|links| {
            let mut flipped: Vec<Link> = links.into_iter().map(|(t, s)| (s, t)).collect();
            flipped.sort_unstable();
            flipped
        })
        .collect();
    let symmetric = forward.iter().zip(&reverse).map(|(f, r)| grow_diag_final_and(f, r)).collect();
    Ok(Alignments { forward, reverse, symmetric })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::word_align::aer::alignment_error_rate;
    use crate::text::codeswitch::SplitMix64;

    type Planted = (Vec<Vec<String>>, Vec<Vec<String>>, Vec<Vec<Link>>);

    /// Sentences of 3–7 distinct words out of 12; target word `tK` translates source word `sK`. Even sentences keep
    /// the source order, odd ones reverse it. Returns source, target and the planted links.
    fn planted_corpus(n_sentences: usize, seed: u64) -> Planted {
        let mut rng = SplitMix64::new(seed);
        let (mut src, mut tgt, mut gold) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..n_sentences {
            let len = 3 + rng.below(5) as usize;
            let mut words: Vec<u64> = (0..12).collect();
            for i in 0..len {
                words.swap(i, i + rng.below((12 - i) as u64) as usize);
            }
            words.truncate(len);
            let reversed = k % 2 == 1;
            let order: Vec<usize> = if reversed { (0..len).rev().collect() } else { (0..len).collect() };
            src.push(words.iter().map(|w| format!("s{w}")).collect());
            tgt.push(order.iter().map(|&i| format!("t{}", words[i])).collect());
            gold.push(if reversed {
                (0..len).map(|i| (i, len - 1 - i)).collect()
            } else {
                (0..len).map(|i| (i, i)).collect()
            });
        }
        (src, tgt, gold)
    }

    fn aer(links: &[Vec<Link>], gold: &[Vec<Link>]) -> f64 {
        alignment_error_rate(links, gold, &vec![Vec::new(); gold.len()]).unwrap().aer
    }

    #[test]
    fn diagonal_prior_is_normalised_and_peaks_on_the_diagonal() {
        for (j, m, n) in [(1, 4, 8), (3, 5, 5), (5, 5, 2), (2, 7, 1)] {
            let p = diagonal_prior(j, m, n, 4.0);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            let peak = (0..n).fold(0, |b, i| if p[i] > p[b] { i } else { b }) + 1;
            let target = (j as f64 * n as f64 / m as f64).clamp(1.0, n as f64);
            assert!((peak as f64 - target).abs() <= 0.5 + 1e-9, "j={j} m={m} n={n}: peak {peak} vs {target}");
        }
        assert!(diagonal_prior(2, 4, 5, 0.0).iter().all(|&x| (x - 0.2).abs() < 1e-12));
    }

    #[test]
    fn em_recovers_planted_alignment_in_both_orders() {
        let (src, tgt, gold) = planted_corpus(300, 7);
        // Before EM, alignment follows the diagonal: right on kept order, mostly wrong on reversed sentences.
        let prior_only = AlignConfig { iterations: 0, ..AlignConfig::default() };
        let before = FastAlign::train(&src, &tgt, &prior_only).unwrap().align_corpus(&src, &tgt).unwrap();
        assert!(aer(&before, &gold) > 0.3, "{}", aer(&before, &gold));
        let both = align_both_ways(&src, &tgt, &AlignConfig::default()).unwrap();
        for (name, links) in [("forward", &both.forward), ("reverse", &both.reverse), ("symmetric", &both.symmetric)] {
            let e = aer(links, &gold);
            // The few errors left sit in the corners of long reversed sentences, where the prior favours the wrong
            // word by up to exp(−4 · 6/7) ≈ 1/31 against a learnt t ratio of about 30.
            assert!(e < 0.05, "{name}: AER {e}");
        }
        let model = FastAlign::train(&src, &tgt, &AlignConfig::default()).unwrap();
        for k in 0..12 {
            let t = |j: usize| model.translation(Some(&format!("s{k}")), &format!("t{j}"));
            assert!(
                t(k) > 0.7 && (0..12).all(|j| j == k || t(j) < 0.1),
                "s{k}: {:?}",
                (0..12).map(t).collect::<Vec<_>>()
            );
        }
        assert_eq!(model.translation(Some("unknown"), "t3"), FLOOR);
    }

    #[test]
    fn viterbi_falls_back_to_the_prior_for_unknown_words() {
        let (src, tgt, _) = planted_corpus(50, 3);
        let model = FastAlign::train(&src, &tgt, &AlignConfig::default()).unwrap();
        // Unknown target words follow the diagonal (xx → source 0, ww → source 1); t5 finds s5 far off it.
        let links = model.viterbi(&["s5", "zz", "yy"], &["xx", "ww", "t5"]);
        assert_eq!(links, [(0, 0), (0, 2), (1, 1)]);
        assert!(model.viterbi(&["a"], &[] as &[&str]).is_empty());
        assert_eq!(model.viterbi(&[] as &[&str], &["t1"]), []);
    }

    #[test]
    fn bad_input_is_an_error() {
        let src = vec![vec!["a"]];
        let e = FastAlign::train(&src, &[] as &[Vec<&str>], &AlignConfig::default()).unwrap_err().to_string();
        assert!(e.contains("1 source sentences but 0 target"), "{e}");
        for cfg in [
            AlignConfig { p_null: 1.0, ..AlignConfig::default() },
            AlignConfig { tension: -1.0, ..AlignConfig::default() },
        ] {
            let e = FastAlign::train(&src, &src, &cfg).unwrap_err().to_string();
            assert!(e.contains("p_null"), "{e}");
        }
        let cfg: AlignConfig = serde_json::from_str(r#"{"tension": 2.0}"#).unwrap();
        assert_eq!(cfg, AlignConfig { tension: 2.0, ..AlignConfig::default() });
        assert!(serde_json::from_str::<AlignConfig>(r#"{"tenson": 2.0}"#).is_err());
    }
}
