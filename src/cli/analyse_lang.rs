//! `crossling analyse lang`: language-specific information of any model (Liu et al. 2020, §4) — the mean of each
//! language per layer, the mean-difference shift `D_l = R_l(tgt) − R_l(src)`, and, given test sentences with
//! references, unsupervised token translation over a layer × α grid scored by convert rate and BLEU-1
//! ([`crossling::analysis::token_translation`]). Text files hold one sentence per line; the test and reference
//! files are line-parallel.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use crossling::analysis::token_translation::{mds_grid_with, MdsResult, MdsSpec, PairMeans};
use crossling::data::text_file::LineReader;
use crossling::device::parse_device;
use crossling::model::LoadedModel;
use serde_json::json;
use tch::{Kind, Tensor};

#[derive(Args)]
pub struct LangArgs {
    /// Model folder: a crossling checkpoint or run, or a Hugging Face BERT folder.
    #[arg(long)]
    model: PathBuf,
    /// Source language (L1) and its corpus for the mean of language and its token set.
    #[arg(long)]
    src: String,
    #[arg(long)]
    corpus_src: PathBuf,
    /// Target language (L2) and its corpus.
    #[arg(long)]
    tgt: String,
    #[arg(long)]
    corpus_tgt: PathBuf,
    /// Sentences of L1 to translate by adding α·D_l (needs --test-ref).
    #[arg(long, requires = "test_ref")]
    test_src: Option<PathBuf>,
    /// Their references in L2, line-parallel to --test-src.
    #[arg(long, requires = "test_src")]
    test_ref: Option<PathBuf>,
    /// Layers to shift, comma-separated (0 = embedding output), or `all`.
    #[arg(long, default_value = "all")]
    layers: String,
    /// Values of α, comma-separated.
    #[arg(long, default_value = "0,0.5,1,1.5,2,2.5,3")]
    alphas: String,
    /// Sample translations to print at the best BLEU-1 cell.
    #[arg(long, default_value_t = 3)]
    samples: usize,
    /// Write R(src), R(tgt) and D as `[layers + 1, hidden]` tensors `mean_src`, `mean_tgt`, `shift` here.
    #[arg(long)]
    means_out: Option<PathBuf>,
    /// Padded tokens per forward pass (memory bound).
    #[arg(long, default_value_t = 8192)]
    batch_tokens: usize,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: String,
    #[arg(long)]
    json: bool,
}

/// The non-blank lines of `path`; an error naming the file when there are none.
fn corpus_lines(path: &Path) -> Result<Vec<String>> {
    let mut r = LineReader::open(path)?;
    let mut out = Vec::new();
    while let Some(line) = r.next_line()? {
        if !line.trim().is_empty() {
            out.push(line.trim().to_string());
        }
    }
    if out.is_empty() {
        bail!("{}: no sentences (expected one sentence per line)", path.display());
    }
    Ok(out)
}

/// Every line of `path`, none blank (`file:line` names the first blank one).
fn parallel_lines(path: &Path) -> Result<Vec<String>> {
    let mut r = LineReader::open(path)?;
    let mut out = Vec::new();
    while let Some(line) = r.next_line()? {
        if line.trim().is_empty() {
            bail!(
                "{}:{}: blank line (expected one sentence per line, line-parallel to the other test file)",
                path.display(),
                r.line_no()
            );
        }
        out.push(line.trim().to_string());
    }
    if out.is_empty() {
        bail!("{}: no sentences (expected one sentence per line)", path.display());
    }
    Ok(out)
}

fn parse_list<T: std::str::FromStr>(text: &str, what: &str) -> Result<Vec<T>> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<T>()
                .map_err(|_| anyhow::anyhow!("--{what}: '{}' is not a number (expected e.g. 0,1,2)", s.trim()))
        })
        .collect()
}

fn cosine(a: &Tensor, b: &Tensor) -> f64 {
    let (a, b) = (a.to_kind(Kind::Double), b.to_kind(Kind::Double));
    (&a * &b).sum(Kind::Double).double_value(&[]) / (a.norm().double_value(&[]) * b.norm().double_value(&[]))
}

pub fn run(a: LangArgs) -> Result<()> {
    let device = parse_device(&a.device)?;
    let m = LoadedModel::open(&a.model, device).with_context(|| format!("loading model {}", a.model.display()))?;
    for note in &m.notes {
        eprintln!("note: {note}");
    }
    let layers: Vec<usize> =
        if a.layers.trim() == "all" { (0..=m.config.layers).collect() } else { parse_list(&a.layers, "layers")? };
    let alphas: Vec<f64> = parse_list(&a.alphas, "alphas")?;
    let tests = match (&a.test_src, &a.test_ref) {
        (Some(ts), Some(tr)) => {
            let (test_src, test_ref) = (parallel_lines(ts)?, parallel_lines(tr)?);
            if test_src.len() != test_ref.len() {
                bail!(
                    "{} has {} lines but {} has {}: the test and reference files must be line-parallel",
                    ts.display(),
                    test_src.len(),
                    tr.display(),
                    test_ref.len()
                );
            }
            Some((test_src, test_ref))
        }
        _ => None,
    };
    let has_tests = tests.is_some();
    if has_tests {
        m.require_mlm_head("MDS token translation (--test-src)")?; // before the means, not after them
    }
    let (test_src, test_ref) = tests.unwrap_or_default();
    let spec = MdsSpec {
        src: a.src.clone(),
        tgt: a.tgt.clone(),
        corpus_src: corpus_lines(&a.corpus_src)?,
        corpus_tgt: corpus_lines(&a.corpus_tgt)?,
        test_src,
        test_ref,
        layers,
        alphas,
        samples: a.samples,
        sample_cells: Vec::new(),
        batch_tokens: a.batch_tokens,
    };
    let means = PairMeans::compute(&m, &spec)?;
    let (r_src, r_tgt, shift) = (&means.r_src, &means.r_tgt, means.shift());
    let per_layer: Vec<serde_json::Value> = (0..=m.config.layers as i64)
        .map(|l| {
            json!({
                "layer": l,
                "shift_norm": shift.get(l).to_kind(Kind::Double).norm().double_value(&[]),
                "mean_norm_src": r_src.get(l).to_kind(Kind::Double).norm().double_value(&[]),
                "mean_norm_tgt": r_tgt.get(l).to_kind(Kind::Double).norm().double_value(&[]),
                "cosine_of_means": cosine(&r_src.get(l), &r_tgt.get(l)),
            })
        })
        .collect();
    if let Some(out) = &a.means_out {
        let mut meta = BTreeMap::new();
        meta.insert("model".to_string(), a.model.display().to_string());
        meta.insert("weights_sha256".to_string(), m.source.weights_sha256.clone());
        meta.insert("src".to_string(), a.src.clone());
        meta.insert("tgt".to_string(), a.tgt.clone());
        let sentences = |p: &Path, n: usize| format!("{} ({n} sentences)", p.display());
        meta.insert("corpus_src".to_string(), sentences(&a.corpus_src, spec.corpus_src.len()));
        meta.insert("corpus_tgt".to_string(), sentences(&a.corpus_tgt, spec.corpus_tgt.len()));
        let tensors = [
            ("mean_src".to_string(), r_src.shallow_clone()),
            ("mean_tgt".to_string(), r_tgt.shallow_clone()),
            ("shift".to_string(), shift.shallow_clone()),
        ];
        crossling::arrays::stream::write_tensors(out, &tensors, &meta)?;
    }
    let grid: Option<MdsResult> = if has_tests { Some(mds_grid_with(&m, &spec, &means)?) } else { None };
    let (t_src, t_tgt) = (&means.t_src, &means.t_tgt);
    let report = json!({
        "model": a.model.display().to_string(), "weights_sha256": m.source.weights_sha256,
        "src": a.src, "tgt": a.tgt,
        "token_sets": { "src": t_src.len(), "tgt": t_tgt.len(), "both": t_src.intersection(t_tgt).count() },
        "per_layer": per_layer, "mds": grid,
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{} → {}: token sets {} / {} ids, {} shared",
        a.src,
        a.tgt,
        t_src.len(),
        t_tgt.len(),
        t_src.intersection(t_tgt).count()
    );
    println!("layer  ‖D‖      ‖R(src)‖  ‖R(tgt)‖  cos(R(src), R(tgt))");
    for v in &per_layer {
        println!(
            "{:>5}  {:<8.4} {:<9.4} {:<9.4} {:.4}",
            v["layer"],
            v["shift_norm"].as_f64().unwrap_or(f64::NAN),
            v["mean_norm_src"].as_f64().unwrap_or(f64::NAN),
            v["mean_norm_tgt"].as_f64().unwrap_or(f64::NAN),
            v["cosine_of_means"].as_f64().unwrap_or(f64::NAN)
        );
    }
    if let Some(g) = grid {
        let symbols: Vec<Vec<Option<f64>>> = g
            .counts
            .iter()
            .map(|row| {
                row.iter()
                    .map(|c| (c.target_only > 0).then(|| c.target_only_symbols as f64 / c.target_only as f64))
                    .collect()
            })
            .collect();
        for (name, cells, scale) in [
            ("BLEU-1 (%)", &g.bleu1, 100.0),
            ("convert rate", &g.convert_rate, 1.0),
            ("converted tokens that are punctuation or digits (share)", &symbols, 1.0),
        ] {
            println!("\n{name}, rows α, columns layer");
            let head: Vec<String> = g.layers.iter().map(|l| format!("{l:>7}")).collect();
            println!("  α   {}", head.join(""));
            for (alpha, row) in g.alphas.iter().zip(cells) {
                let cells: Vec<String> =
                    row.iter().map(|c| c.map_or("      —".to_string(), |v| format!("{:>7.2}", v * scale))).collect();
                println!("{alpha:>4.1} {}", cells.join(""));
            }
        }
        println!(
            "\nbest BLEU-1 {:.2} % at layer {}, α {} (convert rate {})",
            g.best.bleu1 * 100.0,
            g.best.layer,
            g.best.alpha,
            g.best.convert_rate.map_or("—".into(), |c| format!("{c:.3}"))
        );
        for s in &g.samples {
            println!(
                "  source:    {}\n  output:    {}\n  reference: {}\n  converted content tokens: {}",
                s.source_text,
                s.output_text,
                s.reference_text,
                if s.converted_content.is_empty() { "none".to_string() } else { s.converted_content.join(" ") }
            );
        }
    }
    Ok(())
}
