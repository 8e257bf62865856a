//! Symmetrisation of two directional word alignments with grow-diag-final-and (Koehn, Och & Marcu 2003; the
//! definition of the Moses training documentation, "Word alignment"), the heuristic fast_align's `atools` and
//! most alignment pipelines default to.
//!
//! With links `(e, f)` = (source index, target index), `forward` the alignment in which target words chose source
//! words and `reverse` the other one, and "aligned" always meaning *in the alignment being built*:
//! ```text
//! A = forward ∩ reverse
//! GROW-DIAG: repeat until a sweep adds nothing:
//!     for each (e, f) in A, visited in increasing (e, f) order (points added during the sweep are visited when
//!     the sweep reaches them):
//!         for each neighbour (e', f') = (e + de, f + df), (de, df) in
//!             (−1, 0), (0, −1), (1, 0), (0, 1), (−1, −1), (−1, 1), (1, −1), (1, 1):
//!             if (e' is not aligned OR f' is not aligned) and (e', f') ∈ forward ∪ reverse: add (e', f') to A
//! FINAL-AND(forward), then FINAL-AND(reverse):
//!     for each (e', f') in the given alignment, in increasing order:
//!         if e' is not aligned AND f' is not aligned: add (e', f') to A
//! ```
//! The result is deterministic and sorted. (`grow-diag-final` would use OR in the final step.)
use crate::tasks::word_align::link::Link;
use std::collections::BTreeSet;
use std::ops::Bound::{Excluded, Unbounded};

const NEIGHBOURS: [(isize, isize); 8] = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)];

struct Growing {
    links: BTreeSet<Link>,
    src: BTreeSet<usize>,
    tgt: BTreeSet<usize>,
}

impl Growing {
    fn add(&mut self, (e, f): Link) {
        self.links.insert((e, f));
        self.src.insert(e);
        self.tgt.insert(f);
    }
}

/// grow-diag-final-and of two directional alignments of one sentence pair (see the module doc).
pub fn grow_diag_final_and(forward: &[Link], reverse: &[Link]) -> Vec<Link> {
    let fwd: BTreeSet<Link> = forward.iter().copied().collect();
    let rev: BTreeSet<Link> = reverse.iter().copied().collect();
    let union: BTreeSet<Link> = fwd.union(&rev).copied().collect();
    let mut a = Growing { links: BTreeSet::new(), src: BTreeSet::new(), tgt: BTreeSet::new() };
    for &l in fwd.intersection(&rev) {
        a.add(l);
    }
    loop {
        let mut added = false;
        let mut next = a.links.iter().next().copied();
        while let Some((e, f)) = next {
            for (de, df) in NEIGHBOURS {
                let (Some(e2), Some(f2)) = (e.checked_add_signed(de), f.checked_add_signed(df)) else { continue };
                if (!a.src.contains(&e2) || !a.tgt.contains(&f2)) && union.contains(&(e2, f2)) {
                    a.add((e2, f2));
                    added = true;
                }
            }
            next = a.links.range((Excluded((e, f)), Unbounded)).next().copied();
        }
        if !added {
            break;
        }
    }
    for given in [&fwd, &rev] {
        for &(e, f) in given {
            if !a.src.contains(&e) && !a.tgt.contains(&f) {
                a.add((e, f));
            }
        }
    }
    a.links.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_along_neighbours_then_adds_final_points_with_both_words_unaligned() {
        // Source 4 words, target 4 words. Intersection {(0,0), (1,1)}; (1,2) touches (1,1) and target 2 is free,
        // so it grows; (3,3) touches nothing but both words are free, so FINAL-AND adds it; (3,1) touches nothing
        // and, once (3,3) is in, source 3 is aligned, so it stays out.
        let forward = [(0, 0), (1, 1), (1, 2), (3, 3)];
        let reverse = [(0, 0), (1, 1), (3, 1)];
        assert_eq!(grow_diag_final_and(&forward, &reverse), [(0, 0), (1, 1), (1, 2), (3, 3)]);
    }

    #[test]
    fn final_step_needs_both_words_unaligned() {
        // (2,0) is not a neighbour of (0,0), and target 0 is aligned: grow-diag-final would add it, -and does not.
        assert_eq!(grow_diag_final_and(&[(0, 0)], &[(0, 0), (2, 0)]), [(0, 0)]);
        // A point whose two words are free is added from either direction.
        assert_eq!(grow_diag_final_and(&[(0, 0)], &[(0, 0), (2, 2)]), [(0, 0), (2, 2)]);
    }

    #[test]
    fn diagonal_growth_chains_within_one_sweep_and_across_sweeps() {
        // One source word translated by three target words: FINAL-AND alone would keep only the seed (source 0
        // is aligned), growth chains (0,1) then (0,2) in one sweep.
        let forward = [(0, 0), (0, 1), (0, 2)];
        assert_eq!(grow_diag_final_and(&forward, &[(0, 0)]), forward);
        // Seeded at the other end, growth runs to smaller indices, one point per sweep; the same set.
        assert_eq!(grow_diag_final_and(&forward, &[(0, 2)]), forward);
        // Diagonal neighbours count too.
        assert_eq!(grow_diag_final_and(&[(0, 0), (1, 1), (1, 2)], &[(0, 0), (2, 2)]), [(0, 0), (1, 1), (1, 2), (2, 2)]);
        // Growth never adds a point whose two words are already aligned: (0,1) joins a block already covered.
        let forward = [(0, 0), (1, 1), (0, 1)];
        let reverse = [(0, 0), (1, 1), (1, 0)];
        assert_eq!(grow_diag_final_and(&forward, &reverse), [(0, 0), (1, 1)]);
        assert!(grow_diag_final_and(&[], &[]).is_empty());
        assert_eq!(grow_diag_final_and(&[(1, 2)], &[(1, 2)]), [(1, 2)]);
    }
}
