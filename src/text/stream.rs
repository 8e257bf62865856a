//! Continuous token streams for MLM pre-training, as in XLM (Conneau & Lample 2019) and Wu, Conneau et al.
//! (2020, §3: "streams of 256 tokens"): a language's corpus is encoded into one long stream of ids, with
//! `[SEP]` after every sentence as the sentence separator, and the stream is cut into consecutive segments
//! of `seq_len` tokens (the final partial segment is dropped). Segments therefore cross sentence boundaries,
//! exactly like the study's streams; no `[CLS]` or padding is added.
//!
//! [`StreamBatcher`] visits the segments in an order shuffled per epoch by a seeded Fisher–Yates shuffle
//! ([`SplitMix64`]); the permutation of epoch `e` is a pure function of `(seed, e)`, so a
//! [`StreamPosition`] `(epoch, cursor, seed)` is all a resumed run needs to continue exactly.
use std::io::BufRead;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::text::codeswitch::SplitMix64;
use crate::text::tokenize::{CrossTokenizer, Special};

/// One language's corpus as a single stream of token ids (`[SEP]` after every sentence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenStream {
    pub lang: String,
    pub ids: Vec<u32>,
}

/// Encode `path` (one sentence per line; blank lines skipped) in language `lang` into a [`TokenStream`]:
/// each sentence's ids followed by `[SEP]`, the sentence separator. At most `max_lines` non-blank lines are
/// read when given.
pub fn encode_corpus(tok: &CrossTokenizer, lang: &str, path: &Path, max_lines: Option<usize>) -> Result<TokenStream> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let sep = tok.special_id(Special::Sep);
    let mut ids = Vec::new();
    let mut taken = 0usize;
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        if max_lines.is_some_and(|m| taken >= m) {
            break;
        }
        let line = line.map_err(|e| Error::io(path, e))?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let enc = tok.encode(text, lang).map_err(|e| Error::format(path, i + 1, e.to_string()))?;
        ids.extend(enc);
        ids.push(sep);
        taken += 1;
    }
    Ok(TokenStream { lang: lang.to_string(), ids })
}

/// A batch of stream segments of one language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub lang: String,
    /// Row-major `[batch, seq]`.
    pub input_ids: Vec<i64>,
    pub batch: usize,
    pub seq: usize,
}

impl Batch {
    /// The ids as a tensor.
    ///
    /// # Shapes
    /// Returns `[batch, seq]`, `i64`, on the CPU.
    pub fn to_tensor(&self) -> tch::Tensor {
        tch::Tensor::from_slice(&self.input_ids).view([self.batch as i64, self.seq as i64])
    }
}

/// Where a [`StreamBatcher`] stands: the epoch, the next segment index within that epoch's permutation, and
/// the shuffle seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamPosition {
    pub epoch: u64,
    pub cursor: usize,
    pub seed: u64,
}

/// Cuts a [`TokenStream`] into `seq_len`-token segments and yields batches of `batch_size` segments in a
/// per-epoch shuffled order. Batches are always full: when an epoch runs out mid-batch, the batch is completed
/// from the next epoch's permutation, so every segment is seen exactly once per epoch.
#[derive(Debug, Clone)]
pub struct StreamBatcher {
    lang: String,
    ids: Vec<u32>,
    seq_len: usize,
    batch_size: usize,
    n_segments: usize,
    seed: u64,
    epoch: u64,
    cursor: usize,
    order: Vec<usize>,
}

impl StreamBatcher {
    /// Errors when `seq_len < 2`, `batch_size == 0`, or the stream is shorter than one segment.
    pub fn new(stream: TokenStream, seq_len: usize, batch_size: usize, seed: u64) -> Result<Self> {
        if seq_len < 2 {
            return Err(Error::Invalid(format!("stream batcher: seq_len must be at least 2, got {seq_len}")));
        }
        if batch_size == 0 {
            return Err(Error::Invalid("stream batcher: batch_size must be at least 1".into()));
        }
        let n_segments = stream.ids.len() / seq_len;
        if n_segments == 0 {
            return Err(Error::Invalid(format!(
                "stream batcher: the '{}' stream has {} tokens, but one segment needs seq_len = {seq_len}",
                stream.lang,
                stream.ids.len()
            )));
        }
        let order = permutation(n_segments, seed, 0);
        Ok(StreamBatcher {
            lang: stream.lang,
            ids: stream.ids,
            seq_len,
            batch_size,
            n_segments,
            seed,
            epoch: 0,
            cursor: 0,
            order,
        })
    }

    /// Number of full segments in the stream.
    pub fn num_segments(&self) -> usize {
        self.n_segments
    }

    /// Batches per epoch, rounded up (the last may be completed from the next epoch).
    pub fn batches_per_epoch(&self) -> usize {
        self.n_segments.div_ceil(self.batch_size)
    }

    pub fn seq_len(&self) -> usize {
        self.seq_len
    }

    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    pub fn lang(&self) -> &str {
        &self.lang
    }

    /// The current position, for checkpoints.
    pub fn position(&self) -> StreamPosition {
        StreamPosition { epoch: self.epoch, cursor: self.cursor, seed: self.seed }
    }

    /// Continue from `pos` (from [`position`](Self::position) on a batcher over the same stream).
    pub fn restore(&mut self, pos: StreamPosition) -> Result<()> {
        if pos.cursor > self.n_segments {
            return Err(Error::Invalid(format!(
                "stream batcher: cannot restore cursor {} on a stream of {} segments",
                pos.cursor, self.n_segments
            )));
        }
        self.seed = pos.seed;
        self.epoch = pos.epoch;
        self.cursor = pos.cursor;
        self.order = permutation(self.n_segments, self.seed, self.epoch);
        Ok(())
    }

    /// The next batch of `batch_size` segments.
    pub fn next_batch(&mut self) -> Batch {
        let mut input_ids = Vec::with_capacity(self.batch_size * self.seq_len);
        for _ in 0..self.batch_size {
            if self.cursor >= self.n_segments {
                self.epoch += 1;
                self.cursor = 0;
                self.order = permutation(self.n_segments, self.seed, self.epoch);
            }
            let start = self.order[self.cursor] * self.seq_len;
            input_ids.extend(self.ids[start..start + self.seq_len].iter().map(|&id| id as i64));
            self.cursor += 1;
        }
        Batch { lang: self.lang.clone(), input_ids, batch: self.batch_size, seq: self.seq_len }
    }
}

/// Fisher–Yates permutation of `0..n`, a pure function of `(seed, epoch)`.
fn permutation(n: usize, seed: u64, epoch: u64) -> Vec<usize> {
    let mut rng = SplitMix64::new(seed ^ epoch.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize::tests::write_corpora;
    use crate::text::tokenize::{AnchorScheme, TokenizerSpec};

    fn stream(n: usize) -> TokenStream {
        TokenStream { lang: "en".into(), ids: (0..n as u32).collect() }
    }

    #[test]
    fn encode_corpus_separates_sentences_with_sep() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 50);
        let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 120), &files[..1]).unwrap();
        let s = encode_corpus(&tok, "en", &files[0].1, Some(10)).unwrap();
        let sep = tok.special_id(Special::Sep);
        assert_eq!(s.ids.iter().filter(|&&id| id == sep).count(), 10);
        assert_eq!(*s.ids.last().unwrap(), sep);
        let first_line = std::fs::read_to_string(&files[0].1).unwrap().lines().next().unwrap().to_string();
        let first = tok.encode(&first_line, "en").unwrap();
        assert_eq!(&s.ids[..first.len()], &first[..]);
        assert_eq!(s.ids[first.len()], sep);
        let all = encode_corpus(&tok, "en", &files[0].1, None).unwrap();
        assert_eq!(all.ids.iter().filter(|&&id| id == sep).count(), 50);
        assert!(encode_corpus(&tok, "en", &dir.path().join("missing.txt"), None).is_err());
    }

    #[test]
    fn segments_are_consecutive_and_each_seen_once_per_epoch() {
        let mut b = StreamBatcher::new(stream(103), 10, 3, 7).unwrap();
        assert_eq!(b.num_segments(), 10);
        assert_eq!(b.batches_per_epoch(), 4);
        let mut starts = Vec::new();
        for _ in 0..4 {
            let batch = b.next_batch();
            assert_eq!((batch.batch, batch.seq, batch.input_ids.len()), (3, 10, 30));
            for row in batch.input_ids.chunks(10) {
                assert!(row.windows(2).all(|w| w[1] == w[0] + 1));
                assert_eq!(row[0] % 10, 0);
                starts.push(row[0]);
            }
        }
        // 12 segments drawn: the first 10 are one epoch (a permutation), the last 2 belong to epoch 1.
        let mut epoch0 = starts[..10].to_vec();
        epoch0.sort();
        assert_eq!(epoch0, (0..10).map(|i| i * 10).collect::<Vec<i64>>());
        assert_ne!(starts[..10], (0..10).map(|i| i * 10).collect::<Vec<i64>>()[..], "order is shuffled");
        assert_eq!(b.position(), StreamPosition { epoch: 1, cursor: 2, seed: 7 });
    }

    #[test]
    fn restore_continues_exactly() {
        let mut a = StreamBatcher::new(stream(500), 8, 5, 42).unwrap();
        for _ in 0..17 {
            a.next_batch();
        }
        let pos = a.position();
        let json = serde_json::to_string(&pos).unwrap();
        let mut b = StreamBatcher::new(stream(500), 8, 5, 0).unwrap();
        b.restore(serde_json::from_str(&json).unwrap()).unwrap();
        for _ in 0..30 {
            assert_eq!(a.next_batch(), b.next_batch());
        }
        assert!(b.restore(StreamPosition { epoch: 0, cursor: 1000, seed: 1 }).is_err());
    }

    #[test]
    fn same_seed_same_batches_different_seed_different() {
        let mut a = StreamBatcher::new(stream(400), 4, 2, 1).unwrap();
        let mut b = StreamBatcher::new(stream(400), 4, 2, 1).unwrap();
        let mut c = StreamBatcher::new(stream(400), 4, 2, 2).unwrap();
        let xa: Vec<Batch> = (0..20).map(|_| a.next_batch()).collect();
        let xb: Vec<Batch> = (0..20).map(|_| b.next_batch()).collect();
        let xc: Vec<Batch> = (0..20).map(|_| c.next_batch()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn invalid_inputs_are_errors() {
        assert!(StreamBatcher::new(stream(100), 1, 2, 0).is_err());
        assert!(StreamBatcher::new(stream(100), 4, 0, 0).is_err());
        let msg = StreamBatcher::new(stream(5), 8, 1, 0).unwrap_err().to_string();
        assert!(msg.contains("5 tokens") && msg.contains("seq_len = 8"), "{msg}");
    }

    #[test]
    fn to_tensor_has_batch_seq_shape() {
        let mut b = StreamBatcher::new(stream(64), 4, 3, 0).unwrap();
        let batch = b.next_batch();
        let t = batch.to_tensor();
        assert_eq!(t.size(), vec![3, 4]);
        assert_eq!(t.kind(), tch::Kind::Int64);
        assert_eq!(t.int64_value(&[1, 2]), batch.input_ids[4 + 2]);
    }
}
