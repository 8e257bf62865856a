//! `crossling data …`: list, verify, fetch, count datasets and build pre-training corpora.
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use crossling::data::manifest::Catalog;
use crossling::data::resolve::{DataRoots, Found};
use crossling::text::corpus::{build_corpus, CorpusSpec};
use crossling::text::stats::dataset_stats;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum DataCommand {
    /// List every dataset: id, languages, files, size, licence, and where its files were found.
    #[command(after_help = "Example:\n  crossling data list")]
    List(ListArgs),
    /// Check the sha256 of every file of the given datasets (all when none given); exits non-zero on any mismatch.
    #[command(after_help = "Example:\n  crossling data verify tatoeba muse")]
    Verify(IdsArgs),
    /// Download the given datasets into the cache (files already in the mirror or cache are kept), then verify.
    #[command(after_help = "Example:\n  crossling data fetch tatoeba")]
    Fetch(FetchArgs),
    /// Documents / sentences / tokens / characters per language of the given datasets.
    #[command(after_help = "Example:\n  crossling data stats eltec-en eltec-fr")]
    Stats(StatsArgs),
    /// Build a per-language pre-training corpus (one sentence per line, train/validation split) from datasets.
    #[command(after_help = "Example:\n  crossling data corpus --lang fr --dataset eltec-fr --out corpora")]
    Corpus(CorpusArgs),
}

#[derive(Args)]
pub struct ListArgs {
    /// Also hash every found file (slow) and report verified / mismatched.
    #[arg(long)]
    verify: bool,
}

#[derive(Args)]
pub struct IdsArgs {
    /// Dataset ids (see `crossling data list`); all datasets when empty.
    ids: Vec<String>,
}

#[derive(Args)]
pub struct FetchArgs {
    /// Dataset ids to fetch.
    #[arg(required = true)]
    ids: Vec<String>,
}

#[derive(Args)]
pub struct StatsArgs {
    /// Dataset ids to count.
    #[arg(required = true)]
    ids: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct CorpusArgs {
    /// Language code (en, fr, de, ru, zh).
    #[arg(long)]
    lang: String,
    /// Running-text dataset ids to draw from (repeatable).
    #[arg(long = "dataset", required = true)]
    datasets: Vec<String>,
    /// Cap on training sentences (e.g. 200000 or 1000000 as in Liu et al.).
    #[arg(long)]
    max_sentences: Option<usize>,
    /// Cap on training bytes.
    #[arg(long)]
    max_bytes: Option<u64>,
    /// Documents held out for validation, per mille.
    #[arg(long, default_value_t = crossling::text::corpus::DEFAULT_VALID_PER_MILLE)]
    valid_per_mille: u32,
    /// Seed of the split and file order.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Keep Chinese unsegmented (default: jieba words separated by spaces).
    #[arg(long)]
    no_segment_zh: bool,
    /// Output folder.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(cmd: DataCommand) -> Result<()> {
    let catalog = Catalog::load_default().context("loading data manifests")?;
    let roots = DataRoots::from_env();
    match cmd {
        DataCommand::List(args) => list(&catalog, &roots, args.verify),
        DataCommand::Verify(args) => verify(&catalog, &roots, &args.ids),
        DataCommand::Fetch(args) => fetch(&catalog, &roots, &args.ids),
        DataCommand::Stats(args) => stats(&catalog, &roots, &args.ids, args.json),
        DataCommand::Corpus(args) => corpus(&catalog, &roots, args),
    }
}

pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

fn list(catalog: &Catalog, roots: &DataRoots, verify_hashes: bool) -> Result<()> {
    match &roots.mirror {
        Some(m) => println!("mirror (CROSSLING_DATA): {}", m.display()),
        None => println!("mirror: none (set CROSSLING_DATA to a folder laid out like shared/data)"),
    }
    println!("cache: {}\n", roots.cache.display());
    println!("{:<16} {:<14} {:>5} {:>9}  {:<34} status", "id", "languages", "files", "size", "licence");
    let mut bad = 0;
    for m in catalog.manifests() {
        let found: Vec<Option<Found>> = m.files.iter().map(|f| roots.locate(f)).collect();
        let n_found = found.iter().filter(|f| f.is_some()).count();
        let mut status = if n_found == m.files.len() {
            let in_mirror = found.iter().flatten().filter(|f| f.kind() == "mirror").count();
            if in_mirror == n_found {
                "found (mirror)".to_string()
            } else {
                format!("found ({in_mirror} mirror, {} cache)", n_found - in_mirror)
            }
        } else {
            format!("missing {}/{}", m.files.len() - n_found, m.files.len())
        };
        if verify_hashes && n_found == m.files.len() {
            let mismatches = m.files.iter().filter(|f| roots.verify(f).is_err()).count();
            if mismatches == 0 {
                status.push_str(", verified");
            } else {
                bad += 1;
                status.push_str(&format!(", {mismatches} MISMATCHED"));
            }
        }
        println!(
            "{:<16} {:<14} {:>5} {:>9}  {:<34} {status}",
            m.id,
            truncate(&m.languages.join(","), 14),
            m.files.len(),
            human_bytes(m.total_bytes()),
            truncate(&m.licence, 34)
        );
    }
    if bad > 0 {
        bail!("{bad} dataset(s) have files whose sha256 does not match (run `crossling data verify` for details)");
    }
    Ok(())
}

fn verify(catalog: &Catalog, roots: &DataRoots, ids: &[String]) -> Result<()> {
    let manifests = catalog.select(ids)?;
    let total: u64 = manifests.iter().map(|m| m.total_bytes()).sum();
    let bar = crossling::progress::bar(total, "verify {msg:<16} [{bar:30}] {bytes}/{total_bytes} eta {eta}");
    let mut failures = Vec::new();
    let mut files = 0usize;
    for m in &manifests {
        bar.set_message(m.id.clone());
        let mut ok = true;
        for f in &m.files {
            if let Err(e) = roots.verify(f) {
                failures.push(format!("{}: {e}", m.id));
                ok = false;
            }
            files += 1;
            bar.inc(f.bytes);
        }
        bar.suspend(|| println!("{:<16} {:>5} files  {}", m.id, m.files.len(), if ok { "ok" } else { "FAILED" }));
    }
    bar.finish_and_clear();
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("{f}");
        }
        bail!("{} of {files} files failed verification", failures.len());
    }
    println!("all {files} files of {} datasets verified ({})", manifests.len(), human_bytes(total));
    Ok(())
}

fn fetch(catalog: &Catalog, roots: &DataRoots, ids: &[String]) -> Result<()> {
    for m in catalog.select(ids)? {
        let mut fetched = 0;
        for f in &m.files {
            // A download is checked against its sha256 before it enters the cache; only found files need hashing.
            if roots.locate(f).is_none() {
                roots.download(f)?;
                fetched += 1;
            } else {
                roots.verify(f)?;
            }
        }
        println!("{:<16} {} files ({} downloaded), verified", m.id, m.files.len(), fetched);
    }
    Ok(())
}

fn stats(catalog: &Catalog, roots: &DataRoots, ids: &[String], json: bool) -> Result<()> {
    let mut all = serde_json::Map::new();
    if !json {
        println!(
            "{:<16} {:<6} {:>10} {:>12} {:>14} {:>15}",
            "dataset", "lang", "documents", "sentences", "tokens", "characters"
        );
    }
    for m in catalog.select(ids)? {
        let counts = dataset_stats(m, roots).with_context(|| format!("counting {}", m.id))?;
        if json {
            all.insert(m.id.clone(), serde_json::to_value(&counts)?);
            continue;
        }
        for (lang, c) in &counts {
            println!(
                "{:<16} {:<6} {:>10} {:>12} {:>14} {:>15}",
                m.id, lang, c.documents, c.sentences, c.tokens, c.characters
            );
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&all)?);
    }
    Ok(())
}

fn corpus(catalog: &Catalog, roots: &DataRoots, a: CorpusArgs) -> Result<()> {
    let spec = CorpusSpec {
        lang: a.lang,
        datasets: a.datasets,
        max_sentences: a.max_sentences,
        max_bytes: a.max_bytes,
        valid_per_mille: a.valid_per_mille,
        seed: a.seed,
        segment_zh: !a.no_segment_zh,
        ..CorpusSpec::new("", &[])
    };
    let s = build_corpus(catalog, roots, &spec, &a.out)?;
    println!(
        "{}: train {} sentences ({} docs, {}), valid {} sentences ({} docs, {}); {} duplicates dropped; domains: {}",
        spec.lang,
        s.train.sentences,
        s.train.documents,
        human_bytes(s.train.bytes),
        s.valid.sentences,
        s.valid.documents,
        human_bytes(s.valid.bytes),
        s.duplicates_dropped,
        s.domains.join(", ")
    );
    println!("wrote {} and {}", s.train_path.display(), s.valid_path.display());
    Ok(())
}
