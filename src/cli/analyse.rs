//! `crossling analyse`: CKA between representations, Procrustes alignment on a dictionary, and word or sentence
//! retrieval with P@1/5/10 and MRR in both directions (`analyse lang`, means of language and MDS, is in
//! `analyse_lang`). Matrices are `.npy` or `.safetensors` (`FILE#NAME` picks a tensor; a file of `crossling features`
//! gives its `hidden_states`, a layer stack `[layers, rows, dim]`, and `--layer L` picks one of its layers); word and
//! sentence lists are text files, one entry per line, in row order.
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use crossling::analysis::{
    bootstrap, cka,
    metrics::{self, IndexedDict},
    normalize::{self, Normalization},
    procrustes,
    scores::{Method, Options, Scorer},
};
use crossling::arrays;
use crossling::data::formats::muse;
use serde_json::json;
use std::path::{Path, PathBuf};
use tch::Tensor;
use unicode_normalization::UnicodeNormalization;

#[derive(Subcommand)]
pub enum AnalyseCommand {
    /// CKA between two matrices [n, d] (one number) or two layer stacks [L, n, d] (layer × layer grid).
    #[command(
        after_help = "Example:\n  crossling analyse cka en.safetensors fr.safetensors --diagonal   (two `features --pool sentence` files of parallel lines; --layer L for one layer)"
    )]
    Cka(CkaArgs),
    /// Fit a map from source to target embeddings on a dictionary (orthogonal Procrustes by default).
    #[command(
        after_help = "Example:\n  crossling analyse align --src en.safetensors --tgt fr.safetensors --layer 8 --out w.npy"
    )]
    Align(AlignArgs),
    /// Retrieval in both directions: word translation with a dictionary, else row i ↔ row i (sentences).
    #[command(
        after_help = "Example:\n  crossling analyse retrieve --src en.safetensors --tgt fr.safetensors   (every layer, one line each)"
    )]
    Retrieve(RetrieveArgs),
    /// Means of language per layer, the mean-difference shift, and MDS token translation (Liu et al. 2020, §4).
    #[command(
        after_help = "Example:\n  crossling analyse lang --model e5-small --src en --corpus-src en.txt --tgt fr --corpus-tgt fr.txt"
    )]
    Lang(super::analyse_lang::LangArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum CkaChoice {
    Linear,
    Debiased,
    Rbf,
}

#[derive(Args)]
pub struct CkaArgs {
    /// First representation (.npy or .safetensors[#NAME]).
    x: String,
    /// Second representation, same rows as the first.
    y: String,
    #[arg(long, value_enum, default_value = "linear")]
    kind: CkaChoice,
    /// RBF bandwidth: σ² = threshold² × median squared distance.
    #[arg(long, default_value_t = 1.0)]
    threshold: f64,
    /// For stacks: only matching layers (CKA(X_l, Y_l)), one line each.
    #[arg(long)]
    diagonal: bool,
    /// For stacks: layer L of both (one number).
    #[arg(long, conflicts_with = "diagonal")]
    layer: Option<i64>,
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum MapKind {
    Orthogonal,
    Lstsq,
}

#[derive(Args)]
struct Spaces {
    /// Source embeddings [n_src, d] (.npy or .safetensors[#NAME]).
    #[arg(long)]
    src: String,
    /// Target embeddings [n_tgt, d].
    #[arg(long)]
    tgt: String,
    /// Source words (or sentences), one per line, row order.
    #[arg(long)]
    src_words: Option<PathBuf>,
    /// Target words (or sentences), one per line, row order.
    #[arg(long)]
    tgt_words: Option<PathBuf>,
    /// Normalization applied to both spaces first: comma-separated center, unit, iter, iter:N.
    #[arg(long, default_value = "none")]
    norm: String,
    /// Layer L of layer stacks [layers, rows, dim] (a `crossling features` file; 0 is the embedding output).
    #[arg(long)]
    layer: Option<i64>,
}

#[derive(Args)]
pub struct AlignArgs {
    #[command(flatten)]
    spaces: Spaces,
    /// Training dictionary: MUSE pairs (`src tgt`, or `tgt @ src` in .dict files) with --src-words/--tgt-words,
    /// else pairs of row indices `i j`; without one, row i of the source is parallel to row i of the target
    /// (sentences).
    #[arg(long)]
    dict: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "orthogonal")]
    map: MapKind,
    /// MUSE-style refinement rounds after the fit (orthogonal maps only).
    #[arg(long, default_value_t = 0)]
    refine: usize,
    /// Most frequent rows among which refinement induces its dictionary.
    #[arg(long, default_value_t = 15_000)]
    refine_top: usize,
    /// Write the map W [d_tgt, d_src] (mapped source = X Wᵀ) here (.npy, f64).
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct RetrieveArgs {
    #[command(flatten)]
    spaces: Spaces,
    /// Test dictionary (as for align); without one, row i of the source is parallel to row i of the target.
    #[arg(long)]
    dict: Option<PathBuf>,
    /// A map W (.npy) applied to the normalized source first (X Wᵀ).
    #[arg(long)]
    map: Option<String>,
    /// nn (cosine), csls, or isf (inverted softmax).
    #[arg(long, default_value = "csls")]
    method: String,
    /// CSLS neighbourhood size.
    #[arg(long, default_value_t = 10)]
    k: usize,
    /// Inverted-softmax inverse temperature β.
    #[arg(long, default_value_t = 30.0)]
    beta: f64,
    /// Bootstrap resamples for 95% intervals of P@k and MRR (0 = none).
    #[arg(long, default_value_t = 0)]
    bootstrap: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: AnalyseCommand) -> Result<()> {
    match cmd {
        AnalyseCommand::Cka(a) => run_cka(a),
        AnalyseCommand::Align(a) => run_align(a),
        AnalyseCommand::Retrieve(a) => run_retrieve(a),
        AnalyseCommand::Lang(a) => super::analyse_lang::run(a),
    }
}

/// CKA compares representations of the same examples: `x` and `y` (matrices, or stacks) hold as many rows along
/// dimension `rows_dim`.
fn same_rows(a: &CkaArgs, x: &Tensor, y: &Tensor, rows_dim: usize) -> Result<()> {
    if x.size()[rows_dim] != y.size()[rows_dim] {
        bail!(
            "{} has shape {:?} and {} has shape {:?}: CKA needs the same rows{}",
            a.x,
            x.size(),
            a.y,
            y.size(),
            ROWS_HINT
        );
    }
    Ok(())
}

fn run_cka(a: CkaArgs) -> Result<()> {
    let kind = match a.kind {
        CkaChoice::Linear => cka::CkaKind::Linear,
        CkaChoice::Debiased => cka::CkaKind::Debiased,
        CkaChoice::Rbf => cka::CkaKind::Rbf { threshold: a.threshold },
    };
    let name = match a.kind {
        CkaChoice::Linear => "linear",
        CkaChoice::Debiased => "debiased",
        CkaChoice::Rbf => "rbf",
    };
    let x = arrays::read_array(&a.x)?;
    let y = arrays::read_array(&a.y)?;
    let (dx, dy) = (x.dim(), y.dim());
    let out = match (dx, dy) {
        (2, 2) | (3, 3) if a.layer.is_some() || dx == 2 => {
            let (x, y) = (read_rows(&a.x, a.layer)?, read_rows(&a.y, a.layer)?);
            same_rows(&a, &x, &y, 0)?;
            json!({ "kind": name, "threshold": a.threshold, "layer": a.layer, "cka": cka::cka(&x, &y, kind)? })
        }
        (3, 3) => {
            let (x, y) = (arrays::read_stack(&a.x)?, arrays::read_stack(&a.y)?);
            same_rows(&a, &x, &y, 1)?;
            if a.diagonal {
                json!({ "kind": name, "threshold": a.threshold, "diagonal": cka::cka_diagonal(&x, &y, kind)? })
            } else {
                json!({ "kind": name, "threshold": a.threshold, "grid": cka::cka_grid(&x, &y, kind)? })
            }
        }
        _ => bail!(
            "{} has shape {:?} and {} has shape {:?}: give two matrices [n, d] or two stacks [layers, n, d]",
            a.x,
            x.size(),
            a.y,
            y.size()
        ),
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if let Some(v) = out.get("cka") {
        println!("{v:.6}");
    } else if let Some(d) = out.get("diagonal").and_then(|d| d.as_array()) {
        for (i, v) in d.iter().enumerate() {
            println!("layer {i}: {:.6}", v.as_f64().unwrap_or(f64::NAN));
        }
    } else if let Some(g) = out.get("grid").and_then(|g| g.as_array()) {
        for row in g {
            let cells: Vec<String> = row
                .as_array()
                .map(|r| r.iter().map(|v| format!("{:.4}", v.as_f64().unwrap_or(f64::NAN))).collect())
                .unwrap_or_default();
            println!("{}", cells.join(" "));
        }
    }
    Ok(())
}

/// What a row-count mismatch adds: a `features` file without pooling holds one row per token.
const ROWS_HINT: &str = " (a `crossling features` file holds one row per token unless written with `--pool sentence`, \
                         one row per line)";

/// A representation as a matrix `[rows, dim]`: the file's matrix, or layer `layer` of its layer stack
/// `[layers, rows, dim]` (a stack without a layer is an error that says to pick one).
fn read_rows(spec: &str, layer: Option<i64>) -> Result<Tensor> {
    let Some(l) = layer else {
        let t = arrays::read_array(spec)?;
        if t.dim() == 3 {
            bail!("{spec} holds a layer stack {:?} [layers, rows, dim]: pick a layer with --layer L", t.size());
        }
        return Ok(arrays::read_matrix(spec)?);
    };
    let stack = arrays::read_stack(spec)?;
    let n = stack.size()[0];
    if !(0..n).contains(&l) {
        bail!("--layer {l}: {spec} holds layers 0 to {} (shape {:?})", n - 1, stack.size());
    }
    Ok(stack.get(l))
}

/// The number of layers of a layer stack `[layers, rows, dim]`; `None` for a matrix.
fn stack_layers(spec: &str) -> Result<Option<i64>> {
    let t = arrays::read_array(spec)?;
    Ok((t.dim() == 3).then(|| t.size()[0]))
}

/// One entry per line (trimmed, NFC); the count must equal the matrix rows.
fn read_list(path: &Path, rows: i64, matrix: &str, shape: &[i64]) -> Result<Vec<String>> {
    let text = crossling::data::text_file::read_to_string(path)?;
    let list: Vec<String> = text.lines().map(|l| l.trim().nfc().collect()).collect();
    if list.len() as i64 != rows {
        bail!("{} has {} lines but {matrix} has shape {shape:?} ({rows} rows)", path.display(), list.len());
    }
    Ok(list)
}

struct Loaded {
    src: Tensor,
    tgt: Tensor,
    src_words: Option<Vec<String>>,
    tgt_words: Option<Vec<String>>,
    residuals: (normalize::Residual, normalize::Residual),
}

fn load(s: &Spaces, layer: Option<i64>) -> Result<Loaded> {
    let src = read_rows(&s.src, layer)?;
    let tgt = read_rows(&s.tgt, layer)?;
    let src_words = s.src_words.as_deref().map(|p| read_list(p, src.size()[0], &s.src, &src.size())).transpose()?;
    let tgt_words = s.tgt_words.as_deref().map(|p| read_list(p, tgt.size()[0], &s.tgt, &tgt.size())).transpose()?;
    let norm: Normalization = s.norm.parse()?;
    let (src, rs) = normalize::apply(&src, &norm)?;
    let (tgt, rt) = normalize::apply(&tgt, &norm)?;
    Ok(Loaded { src, tgt, src_words, tgt_words, residuals: (rs, rt) })
}

/// Dictionary pairs as words (with word lists) or as row indices.
enum Pairs {
    Words(Vec<(String, String)>),
    Rows(Vec<(i64, i64)>),
}

fn read_dict(path: &Path, words: bool) -> Result<Pairs> {
    if words {
        let pairs = muse::read(path, muse::layout_for(path))?;
        return Ok(Pairs::Words(pairs.into_iter().map(|p| (p.src, p.tgt)).collect()));
    }
    let text = crossling::data::text_file::read_to_string(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut it = line.split_whitespace().map(str::parse::<i64>);
        match (it.next(), it.next(), it.next()) {
            (Some(Ok(s)), Some(Ok(t)), None) => out.push((s, t)),
            _ => bail!(
                "{}:{}: expected two row indices `i j` (give --src-words and --tgt-words for a word dictionary), got '{line}'",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(Pairs::Rows(out))
}

fn resolve(pairs: &Pairs, l: &Loaded, reverse: bool) -> Result<IndexedDict> {
    let (ns, nt) = (l.src.size()[0], l.tgt.size()[0]);
    Ok(match (pairs, &l.src_words, &l.tgt_words) {
        (Pairs::Words(p), Some(sw), Some(tw)) => {
            if reverse {
                metrics::index_dictionary(&metrics::reverse_pairs(p), tw, sw)
            } else {
                metrics::index_dictionary(p, sw, tw)
            }
        }
        (Pairs::Rows(p), _, _) => {
            if reverse {
                metrics::index_pairs(&metrics::reverse_pairs(p), nt, ns)?
            } else {
                metrics::index_pairs(p, ns, nt)?
            }
        }
        _ => bail!("a word dictionary needs both --src-words and --tgt-words"),
    })
}

fn flat_pairs(d: &IndexedDict) -> Vec<(i64, i64)> {
    d.sources.iter().zip(&d.golds).flat_map(|(&s, g)| g.iter().map(move |&t| (s, t))).collect()
}

/// Without a dictionary row i of the source is parallel to row i of the target: the row count (`src_rows`, after
/// any map) must be the target's.
fn parallel_rows(spaces: &Spaces, l: &Loaded, src_rows: i64) -> Result<i64> {
    if src_rows != l.tgt.size()[0] {
        bail!(
            "without --dict rows are parallel, but {} has shape {:?} and {} has shape {:?}{}",
            spaces.src,
            l.src.size(),
            spaces.tgt,
            l.tgt.size(),
            ROWS_HINT
        );
    }
    Ok(src_rows)
}

fn run_align(a: AlignArgs) -> Result<()> {
    let l = load(&a.spaces, a.spaces.layer)?;
    let (train, n_sources, n_oov) = match &a.dict {
        Some(path) => {
            let words = l.src_words.is_some() || l.tgt_words.is_some();
            let dict = resolve(&read_dict(path, words)?, &l, false)?;
            let train = flat_pairs(&dict);
            if train.is_empty() {
                bail!(
                    "{}: no pair has both words in the vocabularies ({} pairs dropped)",
                    path.display(),
                    dict.n_oov_pairs
                );
            }
            (train, dict.sources.len(), dict.n_oov_pairs)
        }
        None => {
            let n = parallel_rows(&a.spaces, &l, l.src.size()[0])?;
            ((0..n).map(|i| (i, i)).collect::<Vec<_>>(), n as usize, 0)
        }
    };
    let (x, y) = procrustes::paired_rows(&l.src, &l.tgt, &train)?;
    let mut w = match a.map {
        MapKind::Orthogonal => procrustes::procrustes(&x, &y)?,
        MapKind::Lstsq => procrustes::least_squares(&x, &y)?,
    };
    let mut sizes = Vec::new();
    if a.refine > 0 {
        if matches!(a.map, MapKind::Lstsq) {
            bail!("--refine re-fits orthogonal maps; drop --map lstsq");
        }
        let opts = procrustes::RefineOptions { iterations: a.refine, top_n: a.refine_top, csls_k: 10 };
        let r = procrustes::refine(&l.src, &l.tgt, &w, opts)?;
        w = r.w;
        sizes = r.dictionary_sizes;
    }
    let fit_cos = procrustes::mean_pair_cosine(&procrustes::apply_map(&l.src, &w)?, &l.tgt, &train)?;
    if let Some(out) = &a.out {
        arrays::write_npy(out, &w.to_device(tch::Device::Cpu))?;
    }
    let report = json!({
        "pairs": train.len(),
        "source_words": n_sources,
        "oov_pairs": n_oov,
        "map": match a.map { MapKind::Orthogonal => "orthogonal", MapKind::Lstsq => "lstsq" },
        "w_shape": w.size(),
        "mean_pair_cosine": fit_cos,
        "refinement_dictionary_sizes": sizes,
        "normalization_residual": { "src": l.residuals.0, "tgt": l.residuals.1 },
        "out": a.out,
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "fitted a {} map {:?} on {} pairs ({} source words; {} pairs out of vocabulary)",
            report["map"].as_str().unwrap_or(""),
            w.size(),
            train.len(),
            n_sources,
            n_oov
        );
        println!("mean cosine of mapped training pairs: {fit_cos:.4}");
        if !sizes.is_empty() {
            println!("refinement dictionary sizes: {sizes:?}");
        }
        if let Some(out) = &a.out {
            println!("wrote {}", out.display());
        }
    }
    Ok(())
}

fn direction_json(
    scorer: &Scorer,
    dict: Option<&IndexedDict>,
    texts: Option<&[String]>,
    resamples: usize,
    seed: u64,
) -> Result<serde_json::Value> {
    Ok(match dict {
        Some(d) => {
            let e = metrics::word_translation(scorer, d)?;
            let mut v = serde_json::to_value(&e)?;
            if resamples > 0 {
                let [p1, p5, p10, mrr] = bootstrap::word_intervals(&e, resamples, 0.95, seed)?;
                v["ci95"] = json!({ "p1": p1, "p5": p5, "p10": p10, "mrr": mrr });
            }
            v
        }
        None => serde_json::to_value(metrics::sentence_retrieval(scorer, texts)?)?,
    })
}

/// Retrieval at `--layer`, or at every layer (one line each) when both inputs are layer stacks and none is given.
fn run_retrieve(a: RetrieveArgs) -> Result<()> {
    let every = match (a.spaces.layer, stack_layers(&a.spaces.src)?, stack_layers(&a.spaces.tgt)?) {
        (None, Some(n), Some(m)) if n == m => Some(n),
        (None, Some(n), Some(m)) => bail!(
            "{} holds {n} layers and {} holds {m}: give --layer L, or two stacks of the same depth",
            a.spaces.src,
            a.spaces.tgt
        ),
        _ => None,
    };
    let Some(n) = every else {
        let report = retrieve(&a, a.spaces.layer)?;
        if a.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print_retrieval(&report, "");
        }
        return Ok(());
    };
    let mut layers = Vec::new();
    for layer in 0..n {
        let report = retrieve(&a, Some(layer))?;
        if !a.json {
            print_retrieval(&report, &format!("layer {layer:>2} "));
        }
        layers.push(report);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json!({ "layers": layers }))?);
    }
    Ok(())
}

/// Retrieval in both directions at one layer (`None`: the inputs are matrices): the report as JSON.
fn retrieve(a: &RetrieveArgs, layer: Option<i64>) -> Result<serde_json::Value> {
    let l = load(&a.spaces, layer)?;
    let method = Method::parse(&a.method, a.k, a.beta)?;
    let src = match &a.map {
        Some(m) => {
            let w = arrays::read_matrix(m)?;
            procrustes::apply_map(&l.src, &w).with_context(|| format!("applying the map {m}"))?
        }
        None => l.src.shallow_clone(),
    };
    if src.size()[1] != l.tgt.size()[1] {
        bail!(
            "source {} has shape {:?}{} but target {} has shape {:?}: dimensions differ",
            a.spaces.src,
            l.src.size(),
            a.map.as_ref().map(|_| format!(" (mapped: {:?})", src.size())).unwrap_or_default(),
            a.spaces.tgt,
            l.tgt.size()
        );
    }
    let (fwd_dict, bwd_dict) = match &a.dict {
        Some(p) => {
            let words = l.src_words.is_some() || l.tgt_words.is_some();
            let pairs = read_dict(p, words)?;
            (Some(resolve(&pairs, &l, false)?), Some(resolve(&pairs, &l, true)?))
        }
        None => {
            parallel_rows(&a.spaces, &l, src.size()[0])?;
            (None, None)
        }
    };
    let opts = Options::default();
    let fwd = Scorer::new(&src, &l.tgt, method, opts)?;
    let forward = direction_json(&fwd, fwd_dict.as_ref(), l.tgt_words.as_deref(), a.bootstrap, a.seed)?;
    drop(fwd);
    let bwd = Scorer::new(&l.tgt, &src, method, opts)?;
    let backward = direction_json(&bwd, bwd_dict.as_ref(), l.src_words.as_deref(), a.bootstrap, a.seed)?;
    Ok(json!({ "method": method, "layer": layer, "src_to_tgt": forward, "tgt_to_src": backward }))
}

/// The text form of a retrieval report, each line after `prefix`.
fn print_retrieval(report: &serde_json::Value, prefix: &str) {
    for (name, v) in [("src→tgt", &report["src_to_tgt"]), ("tgt→src", &report["tgt_to_src"])] {
        if let Some(p) = v.get("precision").and_then(|p| p.as_array()) {
            let p: Vec<f64> = p.iter().filter_map(|x| x.as_f64()).collect();
            println!(
                "{prefix}{name}: P@1 {:.2}  P@5 {:.2}  P@10 {:.2}  MRR {:.4}  ({} of {} source words, coverage {:.3})",
                100.0 * p[0],
                100.0 * p[1],
                100.0 * p[2],
                v["mrr"].as_f64().unwrap_or(f64::NAN),
                v["n_evaluated"],
                v["n_dict_sources"],
                v["coverage"].as_f64().unwrap_or(f64::NAN)
            );
            if let Some(ci) = v.get("ci95") {
                let r = |k: &str| {
                    format!(
                        "[{:.4}, {:.4}]",
                        ci[k]["low"].as_f64().unwrap_or(0.0),
                        ci[k]["high"].as_f64().unwrap_or(0.0)
                    )
                };
                println!(
                    "{prefix}  95% bootstrap: P@1 {}  P@5 {}  P@10 {}  MRR {}",
                    r("p1"),
                    r("p5"),
                    r("p10"),
                    r("mrr")
                );
            }
        } else {
            let by_text =
                v["accuracy_by_text"].as_f64().map(|t| format!("  by text {:.2}", 100.0 * t)).unwrap_or_default();
            println!(
                "{prefix}{name}: accuracy by index {:.2}{by_text}  MRR {:.4}  ({} rows)",
                100.0 * v["accuracy_by_index"].as_f64().unwrap_or(f64::NAN),
                v["mrr"].as_f64().unwrap_or(f64::NAN),
                v["n"]
            );
        }
    }
}
