//! Word–word co-occurrence counts for GloVe (Pennington, Socher & Manning 2014, §3 and §4.2), counted in a
//! bounded-memory pass as the reference `cooccur.c` (stanfordnlp/GloVe) does.
//!
//! # Formula
//! For every pair of tokens at positions `p < q` of one sentence with `q − p = d ≤ window`, word `i` at `p` and
//! word `j` at `q`:
//!
//! ```text
//! X_ij += w(d)          and, when symmetric, also   X_ji += w(d)
//! w(d) = 1/d   with distance_weighting (cooccur.c `-distance-weighting 1`, the default), else 1
//! ```
//!
//! A window never crosses a sentence boundary (`cooccur.c` resets its window at every newline, one line being one
//! document). As in `cooccur.c`, two occurrences of the same word within the window count too (`X_ii`, which the
//! symmetric rule increments twice: once for each direction). Rare words were already removed from the sentences by
//! [`Corpus`] (the window spans the gap, as in `cooccur.c`, which skips out-of-vocabulary tokens).
//!
//! # Memory
//! As in `cooccur.c`, counts go to two tables whose sizes follow from `memory_mb`:
//! - a dense table for the pairs of frequent words: ids are frequency ranks (the vocabulary is sorted by
//!   descending count), and the pair of 1-based ranks `(r, s)` is stored densely when `r·s ≤ max_product`
//!   (row `r` holds `min(⌊max_product / r⌋, V)` cells); two thirds of the budget, 8 bytes a cell;
//! - a sparse buffer of `(i, j, increment)` entries for the other pairs (a third of the budget, 16 bytes an
//!   entry). When full it is sorted and duplicate pairs are summed; if that frees less than half of it, the sorted
//!   run is spilled to a temporary file in a fresh folder inside the caller's scratch directory.
//!
//! At the end, the dense table, the last buffer and the spilled runs are merged (a k-way merge over the sorted
//! runs that sums duplicate `(i, j)` keys; above [`MERGE_FAN_IN`] runs, groups of runs are first merged into
//! larger runs) into [`Cooccurrences::records`], sorted by `(i, j)`, in memory (12 bytes a record). The temporary
//! folder is removed afterwards, also on error.
//!
//! Counts are accumulated in fixed point with 28 fractional bits (`1/d` rounded to a multiple of `2⁻²⁸`, an error
//! far below the `f32` resolution of the output), so the sums are exact integer sums: the result does not depend
//! on the order of accumulation, hence not on `memory_mb` or on how many runs were spilled. Sums saturate at
//! `2³⁶` (6.9 · 10¹⁰ unit increments of one pair).
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::corpus::Corpus;
use crate::error::{Error, Result};

/// `cooccur.c`'s default context window (`-window-size 15`).
pub const DEFAULT_WINDOW: usize = 15;
/// Default memory cap of the counting tables, in MiB (`cooccur.c` defaults to 3 GB; the result does not depend
/// on it, see the module docs).
pub const DEFAULT_MEMORY_MB: f64 = 1024.0;
/// At most this many sorted runs are merged at once (open files).
pub const MERGE_FAN_IN: usize = 64;

/// Fractional bits of the fixed-point counts.
const FRAC_BITS: u32 = 28;
const ONE: u64 = 1 << FRAC_BITS;
/// Bytes of one dense cell and of one sparse entry (key + count).
const DENSE_CELL: u64 = 8;
const SPARSE_ENTRY: u64 = 16;
/// Bytes of one output record.
const RECORD_BYTES: u64 = std::mem::size_of::<Cooc>() as u64;

/// Settings of the co-occurrence pass (the `cooccur.c` options of the same names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CooccurConfig {
    /// Context words on each side (`-window-size`, default 15).
    pub window: usize,
    /// Weight a pair at distance `d` by `1/d` (`-distance-weighting`, default on).
    pub distance_weighting: bool,
    /// Count right contexts too, i.e. `X_ji` for every `X_ij` (`-symmetric`, default on).
    pub symmetric: bool,
    /// Soft cap in MiB on the counting tables (`-memory`, in GB there); the records returned come on top.
    pub memory_mb: f64,
}

impl Default for CooccurConfig {
    fn default() -> Self {
        CooccurConfig {
            window: DEFAULT_WINDOW,
            distance_weighting: true,
            symmetric: true,
            memory_mb: DEFAULT_MEMORY_MB,
        }
    }
}

impl CooccurConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if self.window == 0 {
            return Err(Error::Invalid("co-occurrence window must be at least 1".into()));
        }
        if !(self.memory_mb.is_finite() && self.memory_mb > 0.0) {
            return Err(Error::Invalid(format!(
                "co-occurrence memory_mb = {} (expected a positive number)",
                self.memory_mb
            )));
        }
        Ok(())
    }

    /// Cells of the dense table and entries of the sparse buffer that `memory_mb` allows (2/3 and 1/3 of it).
    fn budgets(&self) -> (u64, u64) {
        let bytes = self.memory_mb * 1024.0 * 1024.0;
        let dense = (bytes * 2.0 / 3.0 / DENSE_CELL as f64) as u64;
        let sparse = (bytes / 3.0 / SPARSE_ENTRY as f64) as u64;
        (dense, sparse)
    }
}

/// One co-occurrence record: `X_ij = x` (`cooccur.c`'s `CREC`, with 0-based ids and an `f32` value).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cooc {
    pub i: u32,
    pub j: u32,
    pub x: f32,
}

/// What the pass did and what it cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CooccurStats {
    /// Tokens read.
    pub tokens: u64,
    /// Increments made (pairs within the window, twice when symmetric).
    pub increments: u64,
    /// Distinct pairs with `X_ij > 0` (the records returned).
    pub records: u64,
    /// Pairs of 1-based ranks with `r·s ≤ max_product` were counted in the dense table.
    pub max_product: u64,
    /// Cells of the dense table.
    pub dense_cells: u64,
    /// Capacity of the sparse buffer, in entries.
    pub sparse_capacity: u64,
    /// Times the full sparse buffer was sorted and its duplicates summed.
    pub compactions: u64,
    /// Sorted runs spilled to disk while counting.
    pub spills: u64,
    /// Intermediate merges of [`MERGE_FAN_IN`] runs into one.
    pub merge_passes: u64,
    /// Bytes written to the scratch folder (runs and intermediate merges).
    pub spill_bytes: u64,
    /// High-water mark of the counting tables (dense table, its row offsets, the sparse buffer), in bytes.
    pub peak_table_bytes: u64,
    /// Bytes of the records returned.
    pub output_bytes: u64,
}

/// The co-occurrence matrix as records sorted by `(i, j)`, with the pass's statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Cooccurrences {
    /// The pairs with `X_ij > 0`, sorted by `(i, j)`.
    pub records: Vec<Cooc>,
    /// Size of the vocabulary the ids index.
    pub vocab_size: usize,
    pub stats: CooccurStats,
}

impl Cooccurrences {
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// `X_ij` (0 for a pair never seen).
    pub fn get(&self, i: u32, j: u32) -> f32 {
        self.records.binary_search_by_key(&(i, j), |r| (r.i, r.j)).map_or(0.0, |k| self.records[k].x)
    }
}

/// Counts the co-occurrences of `corpus` (see the module docs). Temporary files go to a fresh folder inside
/// `scratch` (created if missing), removed before returning. `progress` draws a bar over the tokens.
pub fn count(corpus: &Corpus, cfg: &CooccurConfig, scratch: &Path, progress: bool) -> Result<Cooccurrences> {
    cfg.validate()?;
    let (dense, sparse) = cfg.budgets();
    count_with_budget(corpus, cfg, dense, sparse, scratch, progress)
}

/// [`count`] with explicit table sizes: at most `dense_budget` dense cells and `sparse_capacity` buffer entries
/// (at least 16).
pub(crate) fn count_with_budget(
    corpus: &Corpus,
    cfg: &CooccurConfig,
    dense_budget: u64,
    sparse_capacity: u64,
    scratch: &Path,
    progress: bool,
) -> Result<Cooccurrences> {
    if cfg.window == 0 {
        return Err(Error::Invalid("co-occurrence window must be at least 1".into()));
    }
    let v = corpus.vocab.len();
    let mut counter = Counter::new(v, dense_budget, sparse_capacity.max(16), scratch);
    // weight[d] for d in 1..=window, in fixed point.
    let weight: Vec<u64> = (0..=cfg.window as u64)
        .map(|d| match d {
            0 => 0,
            _ if cfg.distance_weighting => (ONE + d / 2) / d,
            _ => ONE,
        })
        .collect();

    let bar = progress.then(|| {
        crate::progress::bar(corpus.n_tokens() as u64, "co-occurrences {msg} [{bar:30}] {pos}/{len} tokens, eta {eta}")
    });
    let mut since_tick = 0usize;
    for sentence in corpus.sentences() {
        for (q, &j) in sentence.iter().enumerate() {
            let lo = q.saturating_sub(cfg.window);
            for p in (lo..q).rev() {
                let i = sentence[p];
                let w = weight[q - p];
                counter.add(i, j, w)?;
                if cfg.symmetric {
                    counter.add(j, i, w)?;
                }
            }
        }
        counter.stats.tokens += sentence.len() as u64;
        since_tick += sentence.len();
        if since_tick >= 1 << 16 {
            if let Some(b) = &bar {
                b.inc(since_tick as u64);
                b.set_message(format!("({} spills)", counter.stats.spills));
            }
            since_tick = 0;
        }
    }
    if let Some(b) = &bar {
        b.inc(since_tick as u64);
        b.finish_and_clear();
    }
    counter.finish(progress)
}

/// The two tables and the spilled runs.
struct Counter {
    v: usize,
    /// Row offsets of the dense table: row `i` is `dense[offsets[i]..offsets[i + 1]]`, holding columns `0..len`.
    offsets: Vec<usize>,
    dense: Vec<u64>,
    /// `(key = i << 32 | j, count)`.
    buf: Vec<(u64, u64)>,
    cap: usize,
    runs: Vec<Run>,
    scratch: Scratch,
    stats: CooccurStats,
}

/// A sorted run of `(key, count)` records on disk.
struct Run {
    path: PathBuf,
    len: u64,
}

impl Counter {
    fn new(v: usize, dense_budget: u64, cap: u64, scratch: &Path) -> Counter {
        let max_product = max_product(v as u64, dense_budget);
        let mut offsets = Vec::with_capacity(v + 1);
        offsets.push(0usize);
        for r in 1..=v as u64 {
            let len = (max_product / r).min(v as u64) as usize;
            offsets.push(offsets[offsets.len() - 1] + len);
        }
        let cells = offsets[v];
        let stats = CooccurStats {
            max_product,
            dense_cells: cells as u64,
            sparse_capacity: cap,
            peak_table_bytes: cells as u64 * DENSE_CELL + (v as u64 + 1) * 8,
            ..Default::default()
        };
        Counter {
            v,
            offsets,
            dense: vec![0; cells],
            buf: Vec::new(),
            cap: cap as usize,
            runs: Vec::new(),
            scratch: Scratch::new(scratch),
            stats,
        }
    }

    #[inline]
    fn add(&mut self, i: u32, j: u32, w: u64) -> Result<()> {
        self.stats.increments += 1;
        let (lo, hi) = (self.offsets[i as usize], self.offsets[i as usize + 1]);
        if (j as usize) < hi - lo {
            let c = &mut self.dense[lo + j as usize];
            *c = c.saturating_add(w);
            return Ok(());
        }
        if self.buf.len() == self.buf.capacity() {
            if self.buf.len() >= self.cap {
                self.compact_or_spill()?;
            } else {
                let grow = self.buf.capacity().max(1024).min(self.cap - self.buf.len());
                self.buf.reserve_exact(grow);
                let bytes = self.stats.dense_cells * DENSE_CELL + (self.v as u64 + 1) * 8;
                let bytes = bytes + self.buf.capacity() as u64 * SPARSE_ENTRY;
                self.stats.peak_table_bytes = self.stats.peak_table_bytes.max(bytes);
            }
        }
        self.buf.push(((i as u64) << 32 | j as u64, w));
        Ok(())
    }

    /// Sorts the buffer and sums duplicates; spills it when that freed less than half of it.
    fn compact_or_spill(&mut self) -> Result<()> {
        sort_and_sum(&mut self.buf);
        self.stats.compactions += 1;
        if self.buf.len() * 2 > self.cap {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<()> {
        let path = self.scratch.file(&format!("run-{:05}.bin", self.stats.spills))?;
        let mut w = RunWriter::create(&path)?;
        for &(k, c) in &self.buf {
            w.push(k, c)?;
        }
        let len = w.finish()?;
        self.stats.spills += 1;
        self.stats.spill_bytes += len * SPARSE_ENTRY;
        self.runs.push(Run { path, len });
        self.buf.clear();
        Ok(())
    }

    /// Merges everything into the sorted records.
    fn finish(mut self, progress: bool) -> Result<Cooccurrences> {
        sort_and_sum(&mut self.buf);
        // Keep at most MERGE_FAN_IN − 2 runs for the final merge (beside the dense table and the buffer).
        while self.runs.len() > MERGE_FAN_IN - 2 {
            // Merge just enough runs (at most MERGE_FAN_IN) to come down to MERGE_FAN_IN − 2.
            let take = (self.runs.len() - (MERGE_FAN_IN - 2) + 1).min(MERGE_FAN_IN);
            let group: Vec<Run> = self.runs.drain(..take).collect();
            self.stats.merge_passes += 1;
            let path = self.scratch.file(&format!("merge-{:05}.bin", self.stats.merge_passes))?;
            let mut w = RunWriter::create(&path)?;
            let sources = group.iter().map(Source::file).collect::<Result<Vec<_>>>()?;
            merge(sources, |k, c| w.push(k, c))?;
            let len = w.finish()?;
            self.stats.spill_bytes += len * SPARSE_ENTRY;
            for r in &group {
                std::fs::remove_file(&r.path).map_err(|e| Error::io(&r.path, e))?;
            }
            self.runs.push(Run { path, len });
        }
        let bar = progress.then(|| {
            let b = crate::progress::bar(0, "co-occurrences: merging {spinner} {pos} records");
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        let mut sources = vec![Source::Dense { offsets: &self.offsets, dense: &self.dense, row: 0, pos: 0 }];
        sources.push(Source::Mem { buf: &self.buf, pos: 0 });
        for r in &self.runs {
            sources.push(Source::file(r)?);
        }
        let mut records = Vec::new();
        merge(sources, |k, c| {
            records.push(Cooc { i: (k >> 32) as u32, j: k as u32, x: (c as f64 / ONE as f64) as f32 });
            if let Some(b) = &bar {
                if records.len() % (1 << 20) == 0 {
                    b.set_position(records.len() as u64);
                }
            }
            Ok(())
        })?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        let mut stats = self.stats;
        stats.records = records.len() as u64;
        stats.output_bytes = records.len() as u64 * RECORD_BYTES;
        records.shrink_to_fit();
        Ok(Cooccurrences { records, vocab_size: self.v, stats })
    }
}

/// The largest `P ≤ V²` whose dense table `Σ_r min(⌊P/r⌋, V)` has at most `budget` cells.
fn max_product(v: u64, budget: u64) -> u64 {
    let cells = |p: u64| -> u64 {
        let mut total = 0u64;
        for r in 1..=v {
            let len = (p / r).min(v);
            if len == 0 {
                break;
            }
            total += len;
            if total > budget {
                break;
            }
        }
        total
    };
    let (mut lo, mut hi) = (0u64, v * v);
    if cells(hi) <= budget {
        return hi;
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if cells(mid) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Sorts `(key, count)` entries by key and sums duplicates in place.
fn sort_and_sum(buf: &mut Vec<(u64, u64)>) {
    buf.sort_unstable_by_key(|e| e.0);
    let mut out = 0usize;
    for k in 0..buf.len() {
        if out > 0 && buf[out - 1].0 == buf[k].0 {
            buf[out - 1].1 = buf[out - 1].1.saturating_add(buf[k].1);
        } else {
            buf[out] = buf[k];
            out += 1;
        }
    }
    buf.truncate(out);
}

/// A sorted source of `(key, count)`.
enum Source<'a> {
    Dense { offsets: &'a [usize], dense: &'a [u64], row: usize, pos: usize },
    Mem { buf: &'a [(u64, u64)], pos: usize },
    File { path: PathBuf, reader: BufReader<std::fs::File>, left: u64 },
}

impl<'a> Source<'a> {
    fn file(run: &Run) -> Result<Source<'a>> {
        let f = std::fs::File::open(&run.path).map_err(|e| Error::io(&run.path, e))?;
        Ok(Source::File { path: run.path.clone(), reader: BufReader::with_capacity(1 << 16, f), left: run.len })
    }

    fn next(&mut self) -> Result<Option<(u64, u64)>> {
        match self {
            Source::Dense { offsets, dense, row, pos } => {
                while *row + 1 < offsets.len() {
                    let end = offsets[*row + 1];
                    while *pos < end {
                        let (p, c) = (*pos, dense[*pos]);
                        *pos += 1;
                        if c != 0 {
                            let j = (p - offsets[*row]) as u64;
                            return Ok(Some(((*row as u64) << 32 | j, c)));
                        }
                    }
                    *row += 1;
                }
                Ok(None)
            }
            Source::Mem { buf, pos } => {
                let e = buf.get(*pos).copied();
                *pos += 1;
                Ok(e)
            }
            Source::File { path, reader, left } => {
                if *left == 0 {
                    return Ok(None);
                }
                let mut b = [0u8; 16];
                reader.read_exact(&mut b).map_err(|e| Error::io(&*path, e))?;
                *left -= 1;
                let key = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
                let c = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
                Ok(Some((key, c)))
            }
        }
    }
}

/// K-way merge of sorted sources: calls `sink` once per distinct key, in key order, with the summed count.
fn merge(mut sources: Vec<Source<'_>>, mut sink: impl FnMut(u64, u64) -> Result<()>) -> Result<()> {
    let mut heap = BinaryHeap::with_capacity(sources.len());
    for (s, src) in sources.iter_mut().enumerate() {
        if let Some((k, c)) = src.next()? {
            heap.push(Reverse((k, s, c)));
        }
    }
    let mut current: Option<(u64, u64)> = None;
    while let Some(Reverse((k, s, c))) = heap.pop() {
        match &mut current {
            Some((ck, cc)) if *ck == k => *cc = cc.saturating_add(c),
            _ => {
                if let Some((ck, cc)) = current.take() {
                    sink(ck, cc)?;
                }
                current = Some((k, c));
            }
        }
        if let Some((k, c)) = sources[s].next()? {
            heap.push(Reverse((k, s, c)));
        }
    }
    if let Some((ck, cc)) = current {
        sink(ck, cc)?;
    }
    Ok(())
}

/// Writes `(key, count)` records as 16 little-endian bytes each.
struct RunWriter {
    path: PathBuf,
    w: BufWriter<std::fs::File>,
    len: u64,
}

impl RunWriter {
    fn create(path: &Path) -> Result<RunWriter> {
        let f = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
        Ok(RunWriter { path: path.to_path_buf(), w: BufWriter::with_capacity(1 << 16, f), len: 0 })
    }

    fn push(&mut self, key: u64, count: u64) -> Result<()> {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&key.to_le_bytes());
        b[8..].copy_from_slice(&count.to_le_bytes());
        self.len += 1;
        self.w.write_all(&b).map_err(|e| Error::io(&self.path, e))
    }

    fn finish(mut self) -> Result<u64> {
        self.w.flush().map_err(|e| Error::io(&self.path, e))?;
        Ok(self.len)
    }
}

/// A uniquely named folder inside the caller's scratch directory, made on first use and removed on drop.
struct Scratch {
    parent: PathBuf,
    dir: Option<PathBuf>,
}

impl Scratch {
    fn new(parent: &Path) -> Scratch {
        Scratch { parent: parent.to_path_buf(), dir: None }
    }

    /// The path of `name` inside the folder (creating the folder).
    fn file(&mut self, name: &str) -> Result<PathBuf> {
        if self.dir.is_none() {
            std::fs::create_dir_all(&self.parent).map_err(|e| Error::io(&self.parent, e))?;
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            for attempt in 0u32.. {
                let dir = self.parent.join(format!("cooccur-{}-{nanos:x}-{attempt}", std::process::id()));
                match std::fs::create_dir(&dir) {
                    Ok(()) => {
                        self.dir = Some(dir);
                        break;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => continue,
                    Err(e) => return Err(Error::io(&dir, e)),
                }
            }
        }
        Ok(self.dir.as_ref().map(|d| d.join(name)).unwrap_or_default())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::codeswitch::SplitMix64;

    fn corpus(text: &[&str]) -> Corpus {
        Corpus::from_sentences(text.iter().map(|s| s.split(' ')), 1).unwrap()
    }

    fn cfg(window: usize, distance_weighting: bool, symmetric: bool) -> CooccurConfig {
        CooccurConfig { window, distance_weighting, symmetric, ..Default::default() }
    }

    /// All records as `(word, word, x)`.
    fn named(c: &Corpus, x: &Cooccurrences) -> Vec<(String, String, f32)> {
        x.records.iter().map(|r| (c.vocab.word(r.i).to_string(), c.vocab.word(r.j).to_string(), r.x)).collect()
    }

    fn assert_counts(c: &Corpus, x: &Cooccurrences, expected: &[(&str, &str, f64)]) {
        let mut want: Vec<(u32, u32, f64)> =
            expected.iter().map(|&(a, b, v)| (c.vocab.id(a).unwrap(), c.vocab.id(b).unwrap(), v)).collect();
        want.sort_by_key(|e| (e.0, e.1));
        let got: Vec<(u32, u32, f64)> = x.records.iter().map(|r| (r.i, r.j, r.x as f64)).collect();
        assert_eq!(got.len(), want.len(), "got {:?}", named(c, x));
        for (g, w) in got.iter().zip(&want) {
            assert_eq!((g.0, g.1), (w.0, w.1), "got {:?}", named(c, x));
            assert!((g.2 - w.2).abs() < 1e-6, "X[{}][{}] = {} (expected {})", g.0, g.1, g.2, w.2);
        }
    }

    #[test]
    fn counts_match_hand_computed_values() {
        // ids: a 0 (3), b 1 (2), c 2 (1). Sentence 1: a b c a; sentence 2: b a.
        let c = corpus(&["a b c a", "b a"]);
        let dir = tempfile::tempdir().unwrap();
        // Window 2, 1/d: a·b at 1 (s1), b·a at 2 (s1), b·a at 1 (s2) → 2.5; a·c at 2, c·a at 1 → 1.5; b·c at 1.
        let x = count(&c, &cfg(2, true, true), dir.path(), false).unwrap();
        let sym = |v: &[(&'static str, &'static str, f64)]| -> Vec<(&'static str, &'static str, f64)> {
            v.iter().flat_map(|&(a, b, x)| if a == b { vec![(a, b, x)] } else { vec![(a, b, x), (b, a, x)] }).collect()
        };
        assert_counts(&c, &x, &sym(&[("a", "b", 2.5), ("a", "c", 1.5), ("b", "c", 1.0)]));
        assert_eq!(x.stats.tokens, 6);
        assert_eq!(x.stats.increments, 2 * (1 + 2 + 2 + 1));
        // Unweighted: every pair within the window counts 1.
        let x = count(&c, &cfg(2, false, true), dir.path(), false).unwrap();
        assert_counts(&c, &x, &sym(&[("a", "b", 3.0), ("a", "c", 2.0), ("b", "c", 1.0)]));
        // Window 3 reaches a…a at distance 3: X_aa gets 1/3 from each direction (as cooccur.c). The window is
        // wider than sentence 2 and the gap between sentences, yet nothing crosses the boundary.
        let x = count(&c, &cfg(3, true, true), dir.path(), false).unwrap();
        assert_counts(&c, &x, &sym(&[("a", "a", 2.0 / 3.0), ("a", "b", 2.5), ("a", "c", 1.5), ("b", "c", 1.0)]));
        assert!((x.get(0, 0) - 2.0 / 3.0).abs() < 1e-7);
        assert_eq!(x.get(2, 2), 0.0);
        // Asymmetric: only X[left][right].
        let x = count(&c, &cfg(2, true, false), dir.path(), false).unwrap();
        assert_counts(&c, &x, &[("a", "b", 1.0), ("a", "c", 0.5), ("b", "c", 1.0), ("b", "a", 1.5), ("c", "a", 1.0)]);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing spilled, nothing left");
    }

    /// A Zipf-like random corpus of `n` sentences over `v` words.
    fn random_corpus(n: usize, v: usize, seed: u64) -> Corpus {
        let mut rng = SplitMix64::new(seed);
        let words: Vec<String> = (0..v).map(|k| format!("w{k}")).collect();
        let sentences: Vec<Vec<&str>> = (0..n)
            .map(|_| {
                let len = 1 + rng.below(30) as usize;
                (0..len)
                    .map(|_| {
                        let r = rng.next_f64();
                        &words[((v as f64).powf(r) as usize).saturating_sub(1).min(v - 1)][..]
                    })
                    .collect()
            })
            .collect();
        Corpus::from_sentences(sentences, 1).unwrap()
    }

    #[test]
    fn a_tiny_memory_cap_spills_and_gives_exactly_the_same_counts() {
        let c = random_corpus(800, 300, 7);
        let dir = tempfile::tempdir().unwrap();
        for config in [cfg(5, true, true), cfg(3, false, false)] {
            let full = count(&c, &config, dir.path(), false).unwrap();
            assert_eq!(full.stats.spills, 0);
            assert_eq!(full.stats.max_product, (c.vocab.len() * c.vocab.len()) as u64, "all dense by default");
            // Only the sparse buffer, 16 entries: hundreds of runs, intermediate merges.
            let sparse = count_with_budget(&c, &config, 0, 16, dir.path(), false).unwrap();
            assert!(sparse.stats.spills > 2 * MERGE_FAN_IN as u64, "{:?}", sparse.stats);
            assert!(sparse.stats.merge_passes > 0);
            // A small dense table for the frequent pairs and a small buffer for the rest.
            let mixed = count_with_budget(&c, &config, 2000, 500, dir.path(), false).unwrap();
            assert!(mixed.stats.max_product > 0 && mixed.stats.dense_cells <= 2000, "{:?}", mixed.stats);
            assert!(mixed.stats.spills > 0);
            // memory_mb itself: 0.01 MiB.
            let capped = count(&c, &CooccurConfig { memory_mb: 0.01, ..config.clone() }, dir.path(), false).unwrap();
            let offsets = (c.vocab.len() as u64 + 1) * 8;
            assert!(capped.stats.spills > 0 && capped.stats.peak_table_bytes <= 10_486 + offsets, "{:?}", capped.stats);
            for other in [&sparse, &mixed, &capped] {
                assert_eq!(other.records, full.records, "exactly the same records");
                assert_eq!(other.stats.increments, full.stats.increments);
            }
            assert!(full.records.windows(2).all(|w| (w[0].i, w[0].j) < (w[1].i, w[1].j)), "sorted, distinct");
        }
        // Run counts around the fan-in of the merge: one final merge, or intermediate merges first.
        let small = random_corpus(60, 60, 8);
        let config = cfg(5, true, true);
        let reference = count(&small, &config, dir.path(), false).unwrap();
        let mut spills = Vec::new();
        for cap in (16..).step_by(2) {
            let x = count_with_budget(&small, &config, 0, cap, dir.path(), false).unwrap();
            assert_eq!(x.records, reference.records, "sparse capacity {cap}: {:?}", x.stats);
            spills.push(x.stats.spills);
            if x.stats.spills + 8 < MERGE_FAN_IN as u64 {
                break;
            }
        }
        let fan = MERGE_FAN_IN as u64;
        for (lo, hi) in [(fan - 5, fan - 2), (fan - 1, fan + 1), (fan + 2, 2 * fan)] {
            assert!(spills.iter().any(|s| (lo..=hi).contains(s)), "no run count in {lo}..={hi}: {spills:?}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "spill folders removed");
    }

    #[test]
    fn counts_equal_a_direct_hash_map_count() {
        let c = random_corpus(300, 50, 3);
        let dir = tempfile::tempdir().unwrap();
        let window = 4;
        let x = count_with_budget(&c, &cfg(window, true, true), 100, 16, dir.path(), false).unwrap();
        let mut direct = std::collections::HashMap::<(u32, u32), f64>::new();
        for s in c.sentences() {
            for q in 0..s.len() {
                for p in q.saturating_sub(window)..q {
                    let w = 1.0 / (q - p) as f64;
                    *direct.entry((s[p], s[q])).or_default() += w;
                    *direct.entry((s[q], s[p])).or_default() += w;
                }
            }
        }
        assert_eq!(x.len(), direct.len());
        for r in &x.records {
            let d = direct[&(r.i, r.j)];
            assert!((r.x as f64 - d).abs() <= 1e-6 * d, "X[{}][{}] = {} vs {d}", r.i, r.j, r.x);
        }
    }

    #[test]
    fn dense_table_sizing_and_bad_settings() {
        assert_eq!(max_product(10, 1000), 100);
        // P = 4 over V = 3: rows min(4, 3) + 2 + 1 = 6 cells; P = 5 would need 3 + 2 + 1 = 6 too, P = 6: 3 + 3 + 2 = 8.
        assert_eq!(max_product(3, 6), 5);
        assert_eq!(max_product(3, 0), 0);
        let c = corpus(&["a b"]);
        let dir = tempfile::tempdir().unwrap();
        assert!(count(&c, &cfg(0, true, true), dir.path(), false).is_err());
        let e = count(&c, &CooccurConfig { memory_mb: -1.0, ..Default::default() }, dir.path(), false).unwrap_err();
        assert!(e.to_string().contains("memory_mb"), "{e}");
        let e = serde_json::from_str::<CooccurConfig>(r#"{"windw": 3}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field"), "{e}");
        let parsed: CooccurConfig = serde_json::from_str(r#"{"window": 3}"#).unwrap();
        assert_eq!(parsed, CooccurConfig { window: 3, ..Default::default() });
    }
}
