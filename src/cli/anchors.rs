//! `crossling anchors`: shared token types of two languages under a trained tokenizer, and their share of tokens;
//! each corpus's tokens per word and `[UNK]` share, and the vocabulary's Han entries.
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct AnchorsArgs {
    /// Tokenizer folder (e.g. the `tokenizer/` of a training run).
    #[arg(long)]
    tokenizer: PathBuf,
    /// First corpus as LANG=FILE (one sentence per line).
    #[arg(long)]
    a: String,
    /// Second corpus as LANG=FILE.
    #[arg(long)]
    b: String,
    /// Read at most this many lines of each corpus.
    #[arg(long)]
    max_lines: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn lang_file(spec: &str) -> Result<(String, PathBuf)> {
    match spec.split_once('=') {
        Some((lang, path)) if !lang.is_empty() && !path.is_empty() => Ok((lang.to_string(), PathBuf::from(path))),
        _ => bail!("expected LANG=FILE (e.g. en=out/run/corpora/en.train.txt), got '{spec}'"),
    }
}

pub fn run(args: AnchorsArgs) -> Result<()> {
    let tok = crossling::text::tokenize::CrossTokenizer::load(&args.tokenizer)?;
    let (la, pa) = lang_file(&args.a)?;
    let (lb, pb) = lang_file(&args.b)?;
    let s = crossling::text::anchors::anchor_stats(&tok, (&la, &pa), (&lb, &pb), args.max_lines)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!("token types: {la} {}, {lb} {}, shared {}", s.types_a, s.types_b, s.shared_types);
        println!(
            "tokens of a shared type: {la} {:.2}%, {lb} {:.2}%",
            100.0 * s.shared_token_share_a,
            100.0 * s.shared_token_share_b
        );
        println!(
            "tokens per word: {la} {:.2}, {lb} {:.2}; [UNK] share: {la} {:.2}%, {lb} {:.2}%",
            s.tokens_per_word_a,
            s.tokens_per_word_b,
            100.0 * s.unk_share_a,
            100.0 * s.unk_share_b
        );
        println!("vocabulary: {} entries, {} holding a Han character", s.vocab_size, s.han_entries);
    }
    Ok(())
}
