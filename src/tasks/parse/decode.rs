//! Dependency trees from arc scores: greedy heads, and the maximum spanning arborescence with one root child.
//!
//! **Scores.** For a sentence of n tokens, `scores[dep][head]` scores the arc `head → dep` in an `(n+1) × (n+1)`
//! matrix whose index 0 is the artificial root. Row 0 (the root has no head) and the diagonal (no self-loops) are
//! ignored; every other entry must be finite — forbid an arc with a large negative score. A tree's score is the sum
//! of its arcs' scores (arc-factored, as the biaffine parser of Dozat & Manning 2017 that Wu, Conneau et al. 2020
//! fine-tune). **Heads** come back as `heads[i]` = head of token `i + 1`, `0` for the root.
//!
//! - [`greedy_heads`]: each token's best head on its own; the result may have cycles or several root children.
//! - [`mst_heads`]: the highest-scoring tree in which the root has **exactly one child**, the Universal
//!   Dependencies constraint (Zmigrod, Vieira & Cotterell 2020, *Please Mind the Root*). Chu-Liu/Edmonds (Chu & Liu
//!   1965; Edmonds 1967) by recursive cycle contraction, O(n³). The constraint is the root-penalty reweighting:
//!   every root arc pays a penalty larger than any difference of tree scores, so the best tree has the fewest root
//!   children — one, since a chain from the root always exists — and, among those, the highest score. The penalty
//!   is carried *exactly*, as an integer component compared before the score (lexicographic weights form an ordered
//!   group, which is all Chu-Liu/Edmonds needs), so no constant has to be chosen and no precision is lost.
//!
//! Ties are broken by index order (the first best head wins), so results are deterministic.
use crate::error::{Error, Result};

/// Check the score matrix and return n, the number of tokens.
///
/// # Shapes
/// `scores`: `[n + 1][n + 1]`, `scores[dep][head]`.
fn tokens(scores: &[Vec<f64>]) -> Result<usize> {
    if scores.is_empty() {
        return Err(Error::Invalid("arc scores: empty matrix; expected (n+1) × (n+1) with row 0 = root".into()));
    }
    let m = scores.len();
    for (d, row) in scores.iter().enumerate() {
        if row.len() != m {
            return Err(Error::Invalid(format!("arc scores: row {d} has {} columns, expected {m}", row.len())));
        }
        if let Some(h) = (0..m).find(|&h| d > 0 && h != d && !row[h].is_finite()) {
            return Err(Error::Invalid(format!("arc scores: score of head {h} → dependent {d} is {}", row[h])));
        }
    }
    Ok(m - 1)
}

/// The best head of each token on its own (no tree guarantee).
///
/// # Shapes
/// `scores`: `[n + 1][n + 1]`, `scores[dep][head]`; returns `[n]`.
pub fn greedy_heads(scores: &[Vec<f64>]) -> Result<Vec<usize>> {
    let n = tokens(scores)?;
    Ok((1..=n)
        .map(|d| (0..=n).filter(|&h| h != d).fold(0, |best, h| if scores[d][h] > scores[d][best] { h } else { best }))
        .collect())
}

/// Whether `heads` (`heads[i]` = head of token `i + 1`) is a tree — every token reaches the root without a cycle —
/// whose root has exactly one child.
pub fn is_single_root_tree(heads: &[usize]) -> bool {
    let n = heads.len();
    if heads.iter().any(|&h| h > n) || heads.iter().filter(|&&h| h == 0).count() != 1 {
        return false;
    }
    (1..=n).all(|start| {
        let (mut v, mut steps) = (start, 0);
        while v != 0 && steps <= n {
            v = heads[v - 1];
            steps += 1;
        }
        v == 0
    })
}

/// The sum of the scores of the arcs `heads[i] → i + 1`.
pub fn tree_score(scores: &[Vec<f64>], heads: &[usize]) -> Result<f64> {
    let n = tokens(scores)?;
    if heads.len() != n || heads.iter().any(|&h| h > n) {
        return Err(Error::Invalid(format!("tree score: {} heads (each in 0..={n}) for {n} tokens", heads.len())));
    }
    Ok(heads.iter().enumerate().map(|(i, &h)| scores[i + 1][h]).sum())
}

/// An arc weight: `root` is minus the number of root arcs (the exact penalty), compared before `score`.
#[derive(Clone, Copy, Debug)]
struct W {
    root: i64,
    score: f64,
}

impl W {
    fn better(self, o: W) -> bool {
        self.root > o.root || (self.root == o.root && self.score > o.score)
    }

    fn minus(self, o: W) -> W {
        W { root: self.root - o.root, score: self.score - o.score }
    }
}

/// A cycle of the head graph (nodes `1..`), if any.
fn find_cycle(head: &[usize]) -> Option<Vec<usize>> {
    let m = head.len();
    let mut done = vec![false; m];
    done[0] = true;
    let mut stamp = vec![0; m];
    for s in 1..m {
        let mut v = s;
        while !done[v] && stamp[v] != s {
            stamp[v] = s;
            v = head[v];
        }
        if !done[v] {
            let mut cycle = vec![v];
            let mut u = head[v];
            while u != v {
                cycle.push(u);
                u = head[u];
            }
            return Some(cycle);
        }
        let mut v = s;
        while !done[v] {
            done[v] = true;
            v = head[v];
        }
    }
    None
}

/// The best head of `v` among `candidates` (the first on ties), if any candidate is not `v` itself.
fn argmax_head(w: &[Vec<W>], v: usize, candidates: impl Iterator<Item = usize>) -> Option<usize> {
    candidates.filter(|&u| u != v).fold(None, |b, u| match b {
        Some(b) if !w[v][u].better(w[v][b]) => Some(b),
        _ => Some(u),
    })
}

/// Chu-Liu/Edmonds on a dense graph `w[dep][head]` (node 0 = root, at least one other node); `head[0]` is unused.
fn chu_liu_edmonds(w: &[Vec<W>]) -> Vec<usize> {
    let m = w.len();
    let mut head = vec![0; m];
    for (v, h) in head.iter_mut().enumerate().skip(1) {
        *h = argmax_head(w, v, 0..m).unwrap_or(0);
    }
    let Some(mut cycle) = find_cycle(&head) else { return head };
    cycle.sort_unstable();
    let mut in_cycle = vec![false; m];
    for &v in &cycle {
        in_cycle[v] = true;
    }
    // Contract the cycle into node c; keep[0] = 0 since the root has no head and is never on a cycle.
    let keep: Vec<usize> = (0..m).filter(|&v| !in_cycle[v]).collect();
    let c = keep.len();
    let mut w2 = vec![vec![W { root: 0, score: 0.0 }; c + 1]; c + 1];
    let mut leave_from = vec![0; c + 1]; // for an arc c → keep[i]: its head inside the cycle
    let mut enter_at = vec![0; c + 1]; // for an arc keep[j] → c: the cycle node it enters
    for (i, &v) in keep.iter().enumerate().skip(1) {
        for (j, &u) in keep.iter().enumerate() {
            w2[i][j] = w[v][u];
        }
        let u = argmax_head(w, v, cycle.iter().copied()).unwrap_or(cycle[0]);
        w2[i][c] = w[v][u];
        leave_from[i] = u;
    }
    for (j, &u) in keep.iter().enumerate() {
        let gain = |v: usize| w[v][u].minus(w[v][head[v]]);
        let v = cycle.iter().copied().fold(cycle[0], |b, v| if gain(v).better(gain(b)) { v } else { b });
        w2[c][j] = gain(v);
        enter_at[j] = v;
    }
    let h2 = chu_liu_edmonds(&w2);
    for (i, &v) in keep.iter().enumerate().skip(1) {
        head[v] = if h2[i] == c { leave_from[i] } else { keep[h2[i]] };
    }
    head[enter_at[h2[c]]] = keep[h2[c]];
    head
}

/// The highest-scoring dependency tree whose root has exactly one child.
///
/// # Shapes
/// `scores`: `[n + 1][n + 1]`, `scores[dep][head]`; returns `[n]`.
pub fn mst_heads(scores: &[Vec<f64>]) -> Result<Vec<usize>> {
    let n = tokens(scores)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let w: Vec<Vec<W>> = scores
        .iter()
        .map(|row| row.iter().enumerate().map(|(h, &s)| W { root: -i64::from(h == 0), score: s }).collect())
        .collect();
    Ok(chu_liu_edmonds(&w)[1..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::codeswitch::SplitMix64;

    /// All single-root trees of n tokens by enumeration of every head vector; the best one and its score.
    fn brute_force(scores: &[Vec<f64>]) -> (Vec<usize>, f64) {
        let n = scores.len() - 1;
        let mut heads = vec![0; n];
        let mut best: (Vec<usize>, f64) = (Vec::new(), f64::NEG_INFINITY);
        loop {
            if heads.iter().enumerate().all(|(i, &h)| h != i + 1) && is_single_root_tree(&heads) {
                let s = tree_score(scores, &heads).unwrap();
                if s > best.1 {
                    best = (heads.clone(), s);
                }
            }
            // Next head vector in base n + 1.
            let Some(i) = heads.iter().position(|&h| h < n) else { return best };
            heads[i] += 1;
            heads[..i].iter_mut().for_each(|h| *h = 0);
        }
    }

    fn random_scores(n: usize, rng: &mut SplitMix64) -> Vec<Vec<f64>> {
        (0..=n).map(|_| (0..=n).map(|_| 10.0 * rng.next_f64() - 5.0).collect()).collect()
    }

    #[test]
    fn mst_equals_brute_force_best_single_root_tree() {
        let mut rng = SplitMix64::new(2020);
        let mut multi_root_greedy = 0;
        for n in 1..=5 {
            for _ in 0..40 {
                let scores = random_scores(n, &mut rng);
                let (want, want_score) = brute_force(&scores);
                let got = mst_heads(&scores).unwrap();
                assert!(is_single_root_tree(&got), "{got:?}");
                assert_eq!(got, want, "n = {n}, scores {scores:?}");
                assert!((tree_score(&scores, &got).unwrap() - want_score).abs() < 1e-9);
                let greedy = greedy_heads(&scores).unwrap();
                assert!(tree_score(&scores, &greedy).unwrap() >= want_score - 1e-9);
                multi_root_greedy += usize::from(greedy.iter().filter(|&&h| h == 0).count() > 1);
            }
        }
        // The root constraint was exercised, not just met by chance.
        assert!(multi_root_greedy > 10, "{multi_root_greedy}");
    }

    #[test]
    fn one_root_child_even_when_two_are_better() {
        // Both tokens prefer the root; the best single-root tree is 0 → 2 → 1 (10 + 1 > 10 + 0).
        let scores = vec![vec![0.0; 3], vec![10.0, 0.0, 1.0], vec![10.0, 0.0, 0.0]];
        assert_eq!(greedy_heads(&scores).unwrap(), [0, 0]);
        assert_eq!(mst_heads(&scores).unwrap(), [2, 0]);
        assert!(!is_single_root_tree(&[0, 0]) && is_single_root_tree(&[2, 0]));
    }

    #[test]
    fn cycles_are_contracted_and_broken_at_the_cheapest_entry() {
        // Greedy: 1 ↔ 2 is a cycle and 3 hangs off 1. Entering the cycle from the root costs least at token 2
        // (loses 9 - 2 = 7 against 10 - 1 = 9), so the tree is 0 → 2 → 1 → 3.
        let scores = vec![vec![0.0; 4], vec![1.0, 0.0, 10.0, 0.0], vec![2.0, 9.0, 0.0, 0.0], vec![0.0, 5.0, 0.0, 0.0]];
        assert_eq!(greedy_heads(&scores).unwrap(), [2, 1, 1]);
        assert!(!is_single_root_tree(&[2, 1, 1]));
        assert_eq!(mst_heads(&scores).unwrap(), [2, 0, 1]);
        assert_eq!(tree_score(&scores, &[2, 0, 1]).unwrap(), 10.0 + 2.0 + 5.0);
    }

    #[test]
    fn degenerate_and_malformed_matrices() {
        assert_eq!(mst_heads(&[vec![0.0]]).unwrap(), Vec::<usize>::new());
        assert_eq!(mst_heads(&[vec![0.0, 0.0], vec![-3.0, 0.0]]).unwrap(), [0]);
        assert!(mst_heads(&[]).unwrap_err().to_string().contains("empty matrix"));
        let e = mst_heads(&[vec![0.0, 0.0], vec![0.0]]).unwrap_err().to_string();
        assert!(e.contains("row 1 has 1 columns, expected 2"), "{e}");
        let e = greedy_heads(&[vec![0.0; 3], vec![0.0, 0.0, f64::NAN], vec![0.0; 3]]).unwrap_err().to_string();
        assert!(e.contains("head 2 → dependent 1 is NaN"), "{e}");
        // Row 0 and the diagonal are ignored, so they may hold anything.
        let ok = vec![vec![f64::NAN; 3], vec![1.0, f64::INFINITY, 0.0], vec![0.0, 2.0, f64::NAN]];
        assert_eq!(mst_heads(&ok).unwrap(), [0, 1]);
        assert!(tree_score(&ok, &[0]).is_err());
        assert!(!is_single_root_tree(&[1]) && !is_single_root_tree(&[2, 1]) && !is_single_root_tree(&[3, 0]));
    }
}
