//! Every layer's hidden states for each line of a text file, stored ragged (no padding) in one safetensors file
//! — the raw material of the representation analyses (Wu, Conneau et al. 2020 §5; Liu et al. 2020 §3).
//!
//! Output tensors, for `n` lines with `T` tokens in all (`[CLS]` and `[SEP]` included) and a model of `L` layers
//! and width `d`:
//! * `hidden_states` `[L + 1, T, d]` f32 — layer 0 is the embedding output; line `i` occupies rows
//!   `offsets[i] .. offsets[i + 1]`;
//! * `input_ids` `[T]` i64, `offsets` `[n + 1]` i64, `word_of` `[T]` i64 (the line's word index of each token, -1
//!   for specials).
//!
//! With a pooling ([`DumpOptions::pool`]) the file holds pooled rows instead ([`crate::features::pooled_layers`]):
//! * `hidden_states` `[L + 1, R, d]` f32 — one row per line (`sentence`: the mean of its subword vectors, specials
//!   excluded) or per word (`word-mean` / `word-first`); line `i` occupies rows `offsets[i] .. offsets[i + 1]`;
//! * `offsets` `[n + 1]` i64. A layer is then a matrix for `crossling analyse` (`FILE.safetensors#hidden_states[l]`)
//!   and the whole stack a layer stack (`FILE.safetensors#hidden_states`).
//!
//! Metadata: `format`, `model`, `kind`, `weights_sha256`, `layers` (`L`), `hidden`, `lang`, `text_file`,
//! `text_sha256`, `max_len`, `truncated_lines`, `pool` (`none`, `sentence`, `word-mean`, `word-first`).
//!
//! Lines are sorted by length and packed into batches of at most `batch_tokens` padded tokens; each batch's
//! hidden states are written straight to their rows of the file, so memory holds one batch, never the corpus.
//! The file is written under a temporary name and renamed when complete.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tch::{Kind, Tensor};

use crate::arrays::stream::{Dtype, StreamWriter, TensorSpec};
use crate::error::{Error, Result};
use crate::features::{pooled_layers, Extraction, Pooling, Tokenized};
use crate::model::checkpoint::sha256_file;
use crate::model::load::LoadedModel;

/// Format tag written to the metadata.
pub const FEATURES_FORMAT: &str = "crossling-features/1";

/// How to run [`dump_hidden_states`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DumpOptions {
    /// Upper bound on padded tokens per forward pass.
    pub batch_tokens: usize,
    /// Longest sequence allowed (specials included); the model's `max_positions` when `None` or larger.
    pub max_len: Option<usize>,
    /// Cut longer lines to `max_len` (keeping `[SEP]`) instead of refusing them.
    pub truncate: bool,
    /// Pool each line (or word) instead of writing every token's vectors.
    pub pool: Option<Pooling>,
}

/// The name of a pooling in metadata and on the command line.
pub fn pooling_name(pool: Option<Pooling>) -> &'static str {
    match pool {
        None => "none",
        Some(Pooling::SentenceMean) => "sentence",
        Some(Pooling::WordMean) => "word-mean",
        Some(Pooling::WordFirst) => "word-first",
    }
}

/// What [`dump_hidden_states`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpSummary {
    pub out: PathBuf,
    pub lines: usize,
    pub tokens: usize,
    /// Rows of `hidden_states`: tokens, lines or words.
    pub rows: usize,
    pub layers: usize,
    pub hidden: usize,
    pub truncated_lines: usize,
}

/// Encodes every line of `text_file` in `lang` and writes all hidden states to `out` (see the module docs).
pub fn dump_hidden_states(
    m: &LoadedModel,
    text_file: &Path,
    lang: &str,
    opts: &DumpOptions,
    out: &Path,
) -> Result<DumpSummary> {
    let text = std::fs::read_to_string(text_file).map_err(|e| Error::io(text_file, e))?;
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return Err(Error::format_file(text_file, "empty file: no lines to encode"));
    }
    let max_pos = m.config.max_positions;
    let limit = opts.max_len.map_or(max_pos, |l| l.min(max_pos));
    if limit < 2 {
        return Err(Error::Invalid(format!("--max-len {limit} leaves no room for [CLS] and [SEP]")));
    }
    let mut seqs: Vec<Tokenized> = Vec::with_capacity(lines.len());
    let mut truncated = 0;
    for (i, line) in lines.iter().enumerate() {
        let mut t =
            m.tokenizer.encode_words(line, lang).map_err(|e| Error::format(text_file, i + 1, e.to_string()))?.tokenized;
        if t.ids.len() > limit {
            if !opts.truncate {
                return Err(Error::format(
                    text_file,
                    i + 1,
                    format!(
                        "{} tokens ([CLS] and [SEP] included) exceed the limit of {limit} (model max_positions {max_pos}); \
                         shorten the line or pass --truncate",
                        t.ids.len()
                    ),
                ));
            }
            t = t.fit(limit).0;
            truncated += 1;
        }
        seqs.push(t);
    }
    let mut offsets = vec![0i64; seqs.len() + 1];
    for (i, s) in seqs.iter().enumerate() {
        offsets[i + 1] = offsets[i] + s.ids.len() as i64;
    }
    let total = offsets[seqs.len()] as usize;
    let (layers, hidden) = (m.config.layers, m.config.hidden);
    let specs = vec![
        TensorSpec { name: "hidden_states".into(), dtype: Dtype::F32, shape: vec![layers + 1, total, hidden] },
        TensorSpec { name: "input_ids".into(), dtype: Dtype::I64, shape: vec![total] },
        TensorSpec { name: "offsets".into(), dtype: Dtype::I64, shape: vec![seqs.len() + 1] },
        TensorSpec { name: "word_of".into(), dtype: Dtype::I64, shape: vec![total] },
    ];
    let meta: BTreeMap<String, String> = [
        ("format", FEATURES_FORMAT.to_string()),
        ("model", m.source.path.display().to_string()),
        ("kind", m.source.kind.name().to_string()),
        ("weights_sha256", m.source.weights_sha256.clone()),
        ("layers", layers.to_string()),
        ("hidden", hidden.to_string()),
        ("lang", lang.to_string()),
        ("text_file", text_file.display().to_string()),
        ("text_sha256", sha256_file(text_file)?),
        ("max_len", limit.to_string()),
        ("truncated_lines", truncated.to_string()),
        ("pool", pooling_name(opts.pool).to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let name = out.file_name().ok_or_else(|| Error::Invalid(format!("{} is not a file path", out.display())))?;
    let tmp = out.with_file_name(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    let result = match opts.pool {
        None => write_all(m, lang, &seqs, &offsets, &specs, &meta, opts.batch_tokens, &tmp).map(|()| total),
        Some(pooling) => write_pooled(m, lang, &seqs, pooling, &meta, opts.batch_tokens, &tmp),
    };
    let rows = match result {
        Ok(rows) => rows,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, out).map_err(|e| Error::io(out, e))?;
    Ok(DumpSummary {
        out: out.to_path_buf(),
        lines: seqs.len(),
        tokens: total,
        rows,
        layers,
        hidden,
        truncated_lines: truncated,
    })
}

/// Writes the pooled stack and its row offsets to `path`; returns the number of rows.
fn write_pooled(
    m: &LoadedModel,
    lang: &str,
    seqs: &[Tokenized],
    pooling: Pooling,
    meta: &BTreeMap<String, String>,
    batch_tokens: usize,
    path: &Path,
) -> Result<usize> {
    let how = Extraction { pooling, batch_tokens, device: m.device() };
    let stack = pooled_layers(&m.model, lang, seqs, &how)?; // [L + 1, rows, d]
    let mut offsets = vec![0i64; seqs.len() + 1];
    for (i, s) in seqs.iter().enumerate() {
        let rows = if pooling == Pooling::SentenceMean { 1 } else { s.n_words() };
        offsets[i + 1] = offsets[i] + rows as i64;
    }
    let rows = stack.size()[1] as usize;
    let tensors = [("hidden_states".to_string(), stack), ("offsets".to_string(), Tensor::from_slice(&offsets))];
    crate::arrays::stream::write_tensors(path, &tensors, meta)?;
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn write_all(
    m: &LoadedModel,
    lang: &str,
    seqs: &[Tokenized],
    offsets: &[i64],
    specs: &[TensorSpec],
    meta: &BTreeMap<String, String>,
    batch_tokens: usize,
    path: &Path,
) -> Result<()> {
    let total = *offsets.last().unwrap_or(&0) as u64;
    let hidden = m.config.hidden;
    let mut w = StreamWriter::create(path, specs, meta)?;
    let ids: Vec<i64> = seqs.iter().flat_map(|s| s.ids.iter().copied()).collect();
    let word_of: Vec<i64> = seqs.iter().flat_map(|s| s.word_of.iter().map(|w| w.map_or(-1, |x| x as i64))).collect();
    w.write_i64("input_ids", 0, &ids)?;
    w.write_i64("word_of", 0, &word_of)?;
    w.write_i64("offsets", 0, offsets)?;
    let pad = m.tokenizer.specials().pad as i64;
    let device = m.device();
    let bar = crate::progress::bar(seqs.len() as u64, "features [{bar:30}] {pos}/{len} lines, eta {eta}");
    let lens: Vec<usize> = seqs.iter().map(|s| s.ids.len()).collect();
    for batch in crate::nn::batch::length_batches(&lens, batch_tokens) {
        let rows: Vec<&[i64]> = batch.iter().map(|&i| seqs[i].ids.as_slice()).collect();
        let (ids_t, mask_t, seq) = crate::nn::batch::padded(&rows, pad, device);
        let hs = m.hidden_states(&ids_t, Some(&mask_t), lang)?.hidden_states;
        let stacked = Tensor::stack(&hs, 0).to_kind(Kind::Float).to_device(tch::Device::Cpu).contiguous(); // [L+1, b, seq, d]
        let values =
            Vec::<f32>::try_from(stacked.view([-1])).map_err(|e| Error::Invalid(format!("hidden states: {e}")))?;
        for (l, layer) in values.chunks(batch.len() * seq * hidden).enumerate() {
            for (r, &i) in batch.iter().enumerate() {
                let n = seqs[i].ids.len();
                let start = r * seq * hidden;
                let rows = &layer[start..start + n * hidden];
                let element = (l as u64 * total + offsets[i] as u64) * hidden as u64;
                w.write_f32("hidden_states", element, rows)?;
            }
        }
        bar.inc(batch.len() as u64);
    }
    bar.finish_and_clear();
    w.finish()
}
