//! Dictionary code-switching: the *Extra anchors* ablation of Wu, Conneau et al. 2020 (§4, Table 1 row
//! "Extra anchors"), which adds anchor points by replacing words of the training text with their translations from
//! a bilingual dictionary (following Conneau & Lample 2019 and dictionary code-switching as in Rosenthal et al.).
//!
//! Each word that the dictionary knows is replaced, with probability `p` (Wu et al. use 0.3), by one of its
//! translations chosen uniformly. [`CodeSwitcher::switch_batch`] also caps a batch: at most
//! `⌊max_fraction × words in the batch⌋` words change (Wu et al.: 15%); when more are drawn, a uniformly random
//! subset of them of the cap's size is kept. Words are whitespace-separated (Chinese arrives segmented); a switched
//! batch sentence is re-joined with single spaces. Randomness comes from a seeded [`SplitMix64`], so a run is
//! reproducible without a dependency.
use std::collections::HashMap;

/// Wu et al.'s per-word switching probability.
pub const DEFAULT_P: f64 = 0.3;
/// Wu et al.'s cap on the fraction of a batch's words that change.
pub const DEFAULT_MAX_FRACTION: f64 = 0.15;

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny seeded generator, enough for sampling, not for cryptography.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` (53 bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift with rejection, unbiased); 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
}

/// What a batch switch did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SwitchStats {
    pub sentences: usize,
    /// Whitespace-separated words in the input batch.
    pub words: usize,
    /// Input words that the dictionary knows.
    pub dictionary_words: usize,
    /// Words drawn for switching (each dictionary word with probability `p`), before the cap.
    pub drawn: usize,
    /// Words replaced by a translation (`min(drawn, cap)`).
    pub switched: usize,
    /// `⌊max_fraction × words⌋`.
    pub cap: usize,
}

impl SwitchStats {
    /// Accumulate the counts of another batch.
    pub fn add(&mut self, other: &SwitchStats) {
        self.sentences += other.sentences;
        self.words += other.words;
        self.dictionary_words += other.dictionary_words;
        self.drawn += other.drawn;
        self.switched += other.switched;
        self.cap += other.cap;
    }
}

/// Replaces dictionary words by translations.
#[derive(Debug, Clone, Default)]
pub struct CodeSwitcher {
    dict: HashMap<String, Vec<String>>,
}

impl CodeSwitcher {
    /// From `(source, target)` pairs; with `both_directions` each target also translates back to its source.
    /// Repeated pairs count once; translation lists keep first-seen order.
    pub fn new(pairs: &[(String, String)], both_directions: bool) -> Self {
        let mut dict: HashMap<String, Vec<String>> = HashMap::new();
        let mut add = |a: &str, b: &str| {
            if a.is_empty() || b.is_empty() {
                return;
            }
            let list = dict.entry(a.to_string()).or_default();
            if !list.iter().any(|x| x == b) {
                list.push(b.to_string());
            }
        };
        for (s, t) in pairs {
            add(s, t);
            if both_directions {
                add(t, s);
            }
        }
        CodeSwitcher { dict }
    }

    /// Number of words with at least one translation.
    pub fn len(&self) -> usize {
        self.dict.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }

    /// Translations of `word`, if any.
    pub fn translations(&self, word: &str) -> Option<&[String]> {
        self.dict.get(word).map(|v| v.as_slice())
    }

    fn pick(&self, word: &str, rng: &mut SplitMix64) -> Option<String> {
        let t = self.dict.get(word)?;
        Some(t[rng.below(t.len() as u64) as usize].clone())
    }

    /// Replace each dictionary word, with probability `p`, by a uniformly chosen translation (no cap).
    pub fn switch_sentence(&self, words: &[&str], p: f64, rng: &mut SplitMix64) -> Vec<String> {
        words
            .iter()
            .map(|w| {
                if self.dict.contains_key(*w) && rng.next_f64() < p {
                    self.pick(w, rng).unwrap_or_else(|| w.to_string())
                } else {
                    w.to_string()
                }
            })
            .collect()
    }

    /// Switch a batch of sentences with probability `p` per dictionary word, changing at most
    /// `⌊max_fraction × total words⌋` words; the survivors of the cap are a uniform random subset of those drawn.
    pub fn switch_batch(
        &self,
        sentences: &[String],
        p: f64,
        max_fraction: f64,
        rng: &mut SplitMix64,
    ) -> (Vec<String>, SwitchStats) {
        let split: Vec<Vec<&str>> = sentences.iter().map(|s| s.split_whitespace().collect()).collect();
        let words: usize = split.iter().map(Vec::len).sum();
        let cap = (max_fraction.clamp(0.0, 1.0) * words as f64).floor() as usize;
        let mut stats = SwitchStats { sentences: sentences.len(), words, cap, ..Default::default() };
        let mut drawn: Vec<(usize, usize)> = Vec::new();
        for (si, ws) in split.iter().enumerate() {
            for (wi, w) in ws.iter().enumerate() {
                if self.dict.contains_key(*w) {
                    stats.dictionary_words += 1;
                    if rng.next_f64() < p {
                        drawn.push((si, wi));
                    }
                }
            }
        }
        stats.drawn = drawn.len();
        if drawn.len() > cap {
            // Partial Fisher–Yates: a uniform subset of size `cap`.
            for i in 0..cap {
                let j = i + rng.below((drawn.len() - i) as u64) as usize;
                drawn.swap(i, j);
            }
            drawn.truncate(cap);
            drawn.sort_unstable();
        }
        stats.switched = drawn.len();
        let mut out: Vec<Vec<String>> = split.iter().map(|ws| ws.iter().map(|w| w.to_string()).collect()).collect();
        for (si, wi) in drawn {
            if let Some(t) = self.pick(split[si][wi], rng) {
                out[si][wi] = t;
            }
        }
        (out.into_iter().map(|ws| ws.join(" ")).collect(), stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict() -> CodeSwitcher {
        let pairs: Vec<(String, String)> = [("cat", "chat"), ("dog", "chien"), ("house", "maison"), ("house", "logis")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        CodeSwitcher::new(&pairs, false)
    }

    fn batch() -> Vec<String> {
        (0..50).map(|i| format!("the cat and the dog saw house {i} near the house")).collect()
    }

    #[test]
    fn p_zero_changes_nothing() {
        let sw = dict();
        let b = batch();
        let (out, st) = sw.switch_batch(&b, 0.0, 0.15, &mut SplitMix64::new(1));
        assert_eq!(out, b);
        assert_eq!((st.switched, st.drawn), (0, 0));
        let words: Vec<&str> = b[0].split(' ').collect();
        assert_eq!(sw.switch_sentence(&words, 0.0, &mut SplitMix64::new(1)), words);
    }

    #[test]
    fn cap_holds_exactly_and_stats_are_right() {
        let sw = dict();
        let b = batch();
        let (out, st) = sw.switch_batch(&b, 1.0, 0.15, &mut SplitMix64::new(7));
        assert_eq!(st.sentences, 50);
        assert_eq!(st.words, 50 * 11);
        assert_eq!(st.dictionary_words, 50 * 4);
        assert_eq!(st.drawn, 200);
        assert_eq!(st.cap, (0.15f64 * 550.0).floor() as usize);
        assert_eq!(st.switched, st.cap);
        let changed: usize =
            out.iter().zip(&b).map(|(o, i)| o.split(' ').zip(i.split(' ')).filter(|(x, y)| x != y).count()).sum();
        assert_eq!(changed, st.cap);
        // Below the cap everything drawn is switched.
        let (_, st) = sw.switch_batch(&b, 0.3, 1.0, &mut SplitMix64::new(7));
        assert_eq!(st.switched, st.drawn);
        assert!(st.drawn > 30 && st.drawn < 90, "{}", st.drawn);
    }

    #[test]
    fn only_dictionary_words_change_into_their_translations() {
        let sw = dict();
        let b = batch();
        let (out, _) = sw.switch_batch(&b, 0.5, 0.5, &mut SplitMix64::new(3));
        for (o, i) in out.iter().zip(&b) {
            for (x, y) in o.split(' ').zip(i.split(' ')) {
                if x != y {
                    assert!(sw.translations(y).unwrap().iter().any(|t| t == x), "{y} -> {x}");
                }
            }
        }
        let back = CodeSwitcher::new(&[("cat".into(), "chat".into())], true);
        assert_eq!(back.translations("chat").unwrap(), ["cat".to_string()]);
        assert!(dict().translations("chat").is_none());
    }

    #[test]
    fn same_seed_same_output() {
        let sw = dict();
        let b = batch();
        let a1 = sw.switch_batch(&b, 0.3, 0.15, &mut SplitMix64::new(42));
        let a2 = sw.switch_batch(&b, 0.3, 0.15, &mut SplitMix64::new(42));
        assert_eq!(a1, a2);
        let a3 = sw.switch_batch(&b, 0.3, 0.15, &mut SplitMix64::new(43));
        assert_ne!(a1.0, a3.0);
    }

    #[test]
    fn splitmix_is_uniform_enough() {
        let mut r = SplitMix64::new(0);
        // Reference value of SplitMix64 with seed 0.
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut hist = [0usize; 3];
        for _ in 0..3000 {
            hist[r.below(3) as usize] += 1;
        }
        assert!(hist.iter().all(|&h| h > 900 && h < 1100), "{hist:?}");
        assert!((0..1000).map(|_| r.next_f64()).all(|x| (0.0..1.0).contains(&x)));
        assert_eq!(r.below(0), 0);
    }
}
