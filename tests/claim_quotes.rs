//! Every claim's quote in the committed records (`figures/**/*.json`) is its paper's own wording (issue 23: "the
//! paper's own wording, cited by section"), read against the papers' text in `../shared/papers/`
//! (`$CROSSLING_PAPERS` overrides; else `papers/` beside the data mirror).
//!
//! Both texts are normalised first: footnote lines (starting with a superscript digit) and emphasis marks dropped,
//! LaTeX `$\alpha$` read as α, curly quotes straightened, a word hyphenated across a line break joined, whitespace
//! collapsed, lower case. The quote is then cut into pieces — at "…", at a bracketed insertion ("[Word2Vec]") and at
//! clause punctuation — and every piece of 12 characters or more must occur in the paper after the one before it.
//! Pieces rather than the whole sentence, because the papers' text is broken mid-sentence by figure captions and
//! page furniture. This catches a changed, added or reordered word; it cannot catch a quote cut short, which is
//! still the paper's wording. Claims citing other sources (the small-model literature, `K et al. …`) are skipped.
use crossling::report::record::FigureRecord;
use std::path::{Path, PathBuf};

mod common;

/// The papers' text: `$CROSSLING_PAPERS`, else `papers/` beside the data mirror, else `../shared/papers`.
fn papers_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("CROSSLING_PAPERS").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(beside) = common::mirror().and_then(|m| m.parent().map(|p| p.join("papers"))) {
        if beside.is_dir() {
            return beside;
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/papers")
}

const SUPERSCRIPT_DIGITS: &str = "¹²³⁴⁵⁶⁷⁸⁹⁰";

/// Paper or quote text in the comparable form described in the module docs.
fn normalise(text: &str) -> String {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().chars().next().is_some_and(|c| SUPERSCRIPT_DIGITS.contains(c)))
        .collect();
    let mut t = kept.join("\n").replace("\\alpha", "α").replace("<i>", "").replace("</i>", "");
    t.retain(|c| !"*$\\{}_".contains(c));
    let t: String = t
        .chars()
        .map(|c| match c {
            '“' | '”' => '"',
            '‘' | '’' => '\'',
            c => c,
        })
        .collect::<String>()
        .replace('ﬁ', "fi");
    // "Com-\n\nparing" → "Comparing": a hyphen at a line's end between two letters, with the break after it.
    let chars: Vec<char> = t.chars().collect();
    let mut joined = String::with_capacity(t.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '-' && i > 0 && chars[i - 1].is_alphanumeric() {
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            let broke_line = chars[i + 1..j].contains(&'\n');
            if broke_line && j < chars.len() && chars[j].is_alphanumeric() {
                i = j;
                continue;
            }
        }
        joined.push(chars[i]);
        i += 1;
    }
    joined.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The quote's pieces, in order, that must each occur in the paper (see the module docs).
fn pieces(quote: &str) -> Vec<String> {
    let q = normalise(quote).replace("...", "…");
    // A bracketed insertion is the quoter's word, not the paper's: a cut like "…".
    let mut cut = String::new();
    let mut depth = 0;
    for c in q.chars() {
        match c {
            '[' => {
                depth += 1;
                cut.push('…');
            }
            ']' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            c => cut.push(c),
        }
    }
    cut.split(|c: char| "…,;:.()".contains(c))
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || c == '"' || c == '\'').to_string())
        .filter(|p| p.chars().count() >= 12)
        .collect()
}

/// The first piece of `quote` not found in `paper` (normalised) after the previous one; `None` when all are.
fn first_missing(quote: &str, paper: &str) -> Option<String> {
    let mut from = 0;
    for piece in pieces(quote) {
        match paper[from..].find(&piece) {
            Some(at) => from += at + piece.len(),
            None => return Some(piece),
        }
    }
    None
}

fn records(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("figures/ is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "logs") {
                records(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs ../shared: the papers' text sits beside the data mirror")]
fn every_claim_quotes_its_paper() {
    let dir = papers_dir();
    let read = |name: &str| {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (the papers' text; set CROSSLING_PAPERS to its folder)", path.display())
        });
        normalise(&text)
    };
    let emerging = read("emerging-wu-conneau-2020.md");
    let liu = read("liu-2020.md");
    let mut files = Vec::new();
    records(&Path::new(env!("CARGO_MANIFEST_DIR")).join("figures"), &mut files);
    files.sort();
    let (mut checked, mut problems) = (0, Vec::new());
    for file in &files {
        let record = FigureRecord::load(file).unwrap_or_else(|e| panic!("{e}"));
        for claim in &record.claims {
            let paper = match claim.source.split_whitespace().next() {
                Some("Emerging") => &emerging,
                Some("Liu") => &liu,
                _ => continue,
            };
            checked += 1;
            if let Some(piece) = first_missing(&claim.quote, paper) {
                let (file, id, source) = (file.display(), &claim.id, &claim.source);
                problems.push(format!("{file} {id}: \"{piece}\" is not in the paper ({source})"));
            }
        }
    }
    assert!(problems.is_empty(), "quotes that are not the paper's wording:\n{}", problems.join("\n"));
    assert!(checked >= 50, "only {checked} claims checked: are the records' claims there?");
}

#[test]
fn pieces_follow_the_paper_in_order_across_breaks() {
    let paper = normalise(
        "Overall, the *margins* were very small,\n\nFigure 1: a caption.\n\nand the overall performances were \
         not better than GloVe. Com-\n\n¹ A footnote.\n\nparing no anchors, as  $\\alpha$  grows from 0, it “works”.",
    );
    let found = |q: &str| first_missing(q, &paper).is_none();
    assert!(found("the margins were very small, and the overall performances were not better than GloVe"));
    assert!(found("Comparing no anchors, as α grows from 0, it \"works\"."));
    assert!(found("the margins were very small … not better than [the static] GloVe"));
    // A changed word, and two pieces in the wrong order, are caught.
    assert!(!found("the margins were very large, and the overall performances were not better than GloVe"));
    assert!(!found("and the overall performances were not better than GloVe; the margins were very small"));
    // A bracketed insertion cuts the quote; pieces under 12 characters are not looked for.
    assert_eq!(
        pieces("The margins [sic] were very small, and so on; and the overall performances…"),
        vec!["were very small", "and the overall performances"] // "the margins": 11 characters
    );
}
