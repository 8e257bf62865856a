//! Rendering a [`FigureRecord`]: each chart spec to `ID.png` + `ID.svg` (`ID-2.*`, … for further charts) and each
//! table to `ID.md` + `ID.csv` (`ID-2.*`, …). Used after a run and by `crossling plot ID` from the JSON alone.
//!
//! Every chart gets a [`footer`] from the record (issue 23 §4: what a reader needs to weigh the figure): the
//! figure id, scale, seeds, the trained models' shape and pre-training tokens (`steps × batch × seq_len` of
//! `provenance.models[*].config.train`), the other models (random encoders, static vectors, given checkpoints),
//! the number of substitutions of the study's setup, and the revision. The notebooks show a figure's claims with
//! [`claims_markdown`] (re-evaluated with [`crate::claims::rule::evaluate`], as `REPRODUCTION.md` is) through
//! [`markdown_display`].
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::record::FigureRecord;
use crate::atomic_file::write_atomic;
use crate::claims::rule::Verdict;
use crate::error::{Error, Result};
use crate::plot::{ChartSpec, Table};

/// `s` as one Markdown table cell (pipes escaped, line breaks as spaces).
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A verdict as the Markdown of `REPRODUCTION.md` and the notebooks shows it (`not evaluated` for none).
pub fn verdict_of(v: Option<Verdict>) -> String {
    match v {
        Some(Verdict::Supported) => "**supported**".into(),
        Some(Verdict::Contradicted) => "**contradicted**".into(),
        Some(Verdict::Inconclusive) => "inconclusive".into(),
        None => "not evaluated".into(),
    }
}

fn stem(out_dir: &Path, id: &str, i: usize) -> PathBuf {
    if i == 0 {
        out_dir.join(id)
    } else {
        out_dir.join(format!("{id}-{}", i + 1))
    }
}

/// Parses a chart spec from a record.
pub fn chart_spec(v: &serde_json::Value) -> Result<ChartSpec> {
    serde_json::from_value(v.clone()).map_err(|e| Error::Invalid(format!("chart spec: {e}")))
}

/// Parses a table spec from a record.
pub fn table_spec(v: &serde_json::Value) -> Result<Table> {
    serde_json::from_value(v.clone()).map_err(|e| Error::Invalid(format!("table spec: {e}")))
}

/// `1.6M`, `820k`, `1.2B`: a count with two significant digits and an SI suffix.
fn si(n: u64) -> String {
    let x = n as f64;
    let (v, unit) = match x {
        _ if x >= 1e9 => (x / 1e9, "B"),
        _ if x >= 1e6 => (x / 1e6, "M"),
        _ if x >= 1e3 => (x / 1e3, "k"),
        _ => return n.to_string(),
    };
    if v >= 10.0 {
        format!("{v:.0}{unit}")
    } else {
        format!("{v:.1}{unit}")
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The models of a record's provenance in a few words: trained MLMs grouped by shape (layers × hidden, heads)
/// with their pre-training tokens (steps × batch × sequence length), then random encoders, static vectors and
/// given checkpoints, then the generation of the `cpu` presets that made them ([`super::generations::note`]). `None`
/// when the record used no model.
pub fn models_summary(models: &BTreeMap<String, Value>) -> Option<String> {
    let u = |v: &Value, path: &str| v.pointer(path).and_then(Value::as_u64);
    /// (layers, hidden, heads) of a model.
    type Triple = (u64, u64, u64);
    /// (steps, batch, seq_len, masked share in per mille) of its pre-training; the share is 0 in configs without
    /// one.
    type Budget = (u64, u64, u64, u64);
    let mut shapes: BTreeMap<Triple, BTreeMap<Budget, usize>> = BTreeMap::new();
    let (mut random, mut other) = (0, 0);
    let mut statics: BTreeMap<String, usize> = BTreeMap::new();
    let mut given = Vec::new();
    for (name, m) in models {
        let arch = (u(m, "/config/train/model/layers"), u(m, "/config/train/model/hidden"));
        let heads = u(m, "/config/train/model/heads");
        let budget = (u(m, "/config/train/steps"), u(m, "/config/train/batch_size"), u(m, "/config/train/seq_len"));
        let masked = m.pointer("/config/train/masking/mask_prob").and_then(Value::as_f64);
        let per_mille = masked.map_or(0, |p| (p * 1000.0).round() as u64);
        if let ((Some(l), Some(h)), Some(a), (Some(st), Some(b), Some(sl))) = (arch, heads, budget) {
            *shapes.entry((l, h, a)).or_default().entry((st, b, sl, per_mille)).or_default() += 1;
        } else if m.get("random_like").is_some() {
            random += 1;
        } else if let Some(kind) = m.pointer("/request/kind").and_then(Value::as_str) {
            *statics.entry(kind.to_string()).or_default() += 1;
        } else if m.get("given").is_some() {
            let kind = m.get("kind").and_then(Value::as_str).unwrap_or("checkpoint");
            given.push(format!("{name} ({kind})"));
        } else {
            other += 1;
        }
    }
    let mut parts = Vec::new();
    for ((layers, hidden, heads), budgets) in &shapes {
        let n: usize = budgets.values().sum();
        let tokens: Vec<String> = budgets
            .keys()
            .map(|(steps, batch, seq, per_mille)| {
                let tokens = format!("{steps} steps × {batch} × {seq} = {} tokens", si(steps * batch * seq));
                match per_mille {
                    0 => tokens,
                    p => format!("{tokens}, {} % masked", format_percent(*p)),
                }
            })
            .collect();
        parts.push(format!(
            "{}: {layers} layers × {hidden} wide, {heads} heads, pre-trained on {}",
            plural(n, "MLM", "MLMs"),
            tokens.join(" or ")
        ));
    }
    if random > 0 {
        parts.push(plural(random, "random encoder", "random encoders"));
    }
    if !statics.is_empty() {
        let n: usize = statics.values().sum();
        let kinds: Vec<&str> = statics.keys().map(String::as_str).collect();
        parts.push(format!("{} ({})", plural(n, "static embedding", "static embeddings"), kinds.join(", ")));
    }
    if !given.is_empty() {
        parts.push(format!("given: {}", given.join(", ")));
    }
    if other > 0 {
        parts.push(plural(other, "other model", "other models"));
    }
    parts.extend(super::generations::note(models.values()));
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// A share in per mille as a percentage without trailing zeros: 400 is `40`, 150 is `15`, 125 is `12.5`.
fn format_percent(per_mille: u64) -> String {
    if per_mille.is_multiple_of(10) {
        (per_mille / 10).to_string()
    } else {
        format!("{}.{}", per_mille / 10, per_mille % 10)
    }
}

/// `seed 0` or `seeds 0, 1, 2` (`provenance.seeds`, or `provenance.seed` in records made before seeds existed).
fn seeds_text(record: &FigureRecord) -> String {
    let seeds = record.provenance.seeds_used();
    format!("{} {}", if seeds.len() == 1 { "seed" } else { "seeds" }, seed_list(&seeds))
}

/// `0, 1, 2`: the seeds joined by commas.
pub(crate) fn seed_list(seeds: &[u64]) -> String {
    seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// The footer under every chart of `record`, from the record alone (so `crossling plot ID` redraws it):
/// `ID · SCALE scale · seeds … · models (shape, pre-training tokens)` and
/// `N substitutions of the study's setup: see the caption and ID.json · crossling REVISION`.
pub fn footer(record: &FigureRecord) -> Vec<String> {
    let p = &record.provenance;
    let mut first = vec![record.id.clone(), format!("{} scale", p.scale), seeds_text(record)];
    first.extend(models_summary(&p.models));
    let n = record.substitutions.len();
    let subs = if n == 0 {
        "no substitution of the study's setup recorded".to_string()
    } else {
        format!(
            "{} of the study's setup: see the caption and {}.json",
            plural(n, "substitution", "substitutions"),
            record.id
        )
    };
    let rev = match p.revision.strip_suffix("-dirty") {
        Some(r) => format!("{}-dirty", r.chars().take(7).collect::<String>()),
        None => p.revision.chars().take(7).collect(),
    };
    let second = if rev.is_empty() { subs } else { format!("{subs} · crossling {rev}") };
    vec![first.join(" · "), second]
}

/// Writes every chart (with the record's [`footer`]) and table of `record` into `out_dir` under the record's id;
/// returns the files written.
pub fn render_record(record: &FigureRecord, out_dir: &Path) -> Result<Vec<PathBuf>> {
    render_record_as(record, out_dir, &record.id)
}

/// [`render_record`] under the file stem `name` (`NAME.png`, `NAME-2.md`, …): a record kept under another name than
/// its id (`figures/regime/emergence-4x128.json`, id `emergence`) re-renders beside its JSON, not over another's.
pub fn render_record_as(record: &FigureRecord, out_dir: &Path, name: &str) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let footer = footer(record);
    for (i, v) in record.charts.iter().enumerate() {
        let spec = chart_spec(v).map_err(|e| Error::Invalid(format!("{}: chart {}: {e}", record.id, i + 1)))?;
        written.extend(crate::plot::render(&spec, &footer, &stem(out_dir, name, i))?);
    }
    for (i, v) in record.tables.iter().enumerate() {
        let table = table_spec(v).map_err(|e| Error::Invalid(format!("{}: table {}: {e}", record.id, i + 1)))?;
        let s = stem(out_dir, name, i);
        let (md, csv) = (s.with_extension("md"), s.with_extension("csv"));
        let mut text = table.to_markdown()?;
        text.push_str(&format!("\n{}\n", record.caption));
        write_atomic(&md, &text)?;
        write_atomic(&csv, table.to_csv()?)?;
        written.extend([md, csv]);
    }
    Ok(written)
}

/// Standard base64 (RFC 4648, with `=` padding).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            s.push(if i <= c.len() { ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    s
}

/// What an evcxr Jupyter cell prints to show a rendered file inline (evcxr's `EVCXR_BEGIN_CONTENT` protocol): a
/// PNG as an image, a Markdown table as Markdown; `None` for other files (SVG, CSV).
pub fn notebook_display(path: &Path) -> Result<Option<String>> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| Error::io(p, e));
    Ok(match path.extension().and_then(|e| e.to_str()) {
        Some("png") => Some(format!("EVCXR_BEGIN_CONTENT image/png\n{}\nEVCXR_END_CONTENT", base64(&read(path)?))),
        Some("md") => Some(markdown_display(&String::from_utf8_lossy(&read(path)?))),
        _ => None,
    })
}

/// What an evcxr Jupyter cell prints to show `markdown` rendered (evcxr's `EVCXR_BEGIN_CONTENT` protocol).
pub fn markdown_display(markdown: &str) -> String {
    format!("EVCXR_BEGIN_CONTENT text/markdown\n{markdown}\nEVCXR_END_CONTENT")
}

/// The claims of `record` as Markdown: a line naming the scale and seeds, then one table row per claim (id,
/// source, the predicate as tested, the paper's numbers, ours with their 95 % intervals and, where a check is not
/// supported, why, and the verdict), then the paper's own words per claim. The verdicts are re-evaluated from the
/// record's scores with the one rule ([`crate::claims::rule::evaluate`]), as `REPRODUCTION.md` does; an error
/// names the record and the claim whose check names a missing score.
pub fn claims_markdown(record: &FigureRecord) -> Result<String> {
    let mut claims = record.claims.clone();
    crate::claims::rule::evaluate(&mut claims, &record.scores)
        .map_err(|e| Error::Invalid(format!("{}.json: {e}", record.id)))?;
    let scale = &record.provenance.scale;
    if claims.is_empty() {
        return Ok(format!("*No claims recorded in `{}.json` ({scale} scale, {}).*\n", record.id, seeds_text(record)));
    }
    let mut md = format!(
        "**Claims of {}** ({scale} scale, {}; 95 % intervals; verdict rule `src/claims/rule.rs`; every figure: \
         `REPRODUCTION.md`)\n\n\
         | claim | source | as tested | paper | ours (95 % interval) | verdict |\n|---|---|---|---|---|---|\n",
        record.id,
        seeds_text(record)
    );
    for c in &claims {
        let ours: Vec<String> = c
            .outcomes
            .iter()
            .map(|o| if o.reason.is_empty() { o.ours.clone() } else { format!("{} ({})", o.ours, o.reason) })
            .collect();
        let verdict = verdict_of(c.verdict);
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            cell(&c.id),
            cell(&c.source),
            cell(&c.statement),
            cell(if c.paper.is_empty() { "plot only" } else { &c.paper }),
            cell(&ours.join("; ")),
            verdict
        ));
    }
    md.push_str("\nIn the paper's words:\n\n");
    for c in &claims {
        md.push_str(&format!("- **{}** ({}): “{}”\n", c.id, c.source, c.quote.replace('\n', " ")));
    }
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads_and_notebook_display_picks_by_extension() {
        assert_eq!([base64(b"Man"), base64(b"Ma"), base64(b"M"), base64(b"")], ["TWFu", "TWE=", "TQ==", ""]);
        assert_eq!(base64(&[0xfb, 0xff, 0xbf]), "+/+/");
        let dir = tempfile::tempdir().unwrap();
        let (png, md, csv) = (dir.path().join("a.png"), dir.path().join("a.md"), dir.path().join("a.csv"));
        std::fs::write(&png, [1u8, 2, 3]).unwrap();
        std::fs::write(&md, "| a |").unwrap();
        std::fs::write(&csv, "a").unwrap();
        assert_eq!(notebook_display(&png).unwrap().unwrap(), "EVCXR_BEGIN_CONTENT image/png\nAQID\nEVCXR_END_CONTENT");
        assert!(notebook_display(&md).unwrap().unwrap().contains("text/markdown\n| a |\n"));
        assert!(notebook_display(&csv).unwrap().is_none());
        assert!(notebook_display(&dir.path().join("b.png")).unwrap_err().to_string().contains("b.png"));
    }

    /// A trained model's provenance entry as `train::model` writes it (only the fields the footer reads).
    fn trained(layers: u64, hidden: u64, heads: u64, steps: u64, batch: u64, seq: u64) -> Value {
        serde_json::json!({ "key": "k", "config": { "train": {
            "steps": steps, "batch_size": batch, "seq_len": seq,
            "model": { "layers": layers, "hidden": hidden, "heads": heads } } } })
    }

    fn record() -> FigureRecord {
        let mut r =
            FigureRecord { format: super::super::record::RECORD_FORMAT, id: "fig7".into(), ..Default::default() };
        r.title = "CKA".into();
        r.provenance.scale = "cpu".into();
        r.provenance.revision = "0f37cdf0123456789abcdef-dirty".into();
        r.substitutions = vec!["en–en′ from a second seed.".into(), "Novels, not Wikipedia.".into()];
        r.provenance.models.insert("default-en-fr".into(), trained(4, 128, 4, 800, 16, 128));
        r.provenance.models.insert("mono-en".into(), trained(4, 128, 4, 800, 16, 128));
        r.provenance.models.insert("random-default-en-fr".into(), serde_json::json!({"random_like": "x", "seed": 0}));
        r
    }

    #[test]
    fn footer_names_scale_seeds_model_shape_tokens_and_substitutions() {
        let mut r = record();
        let f = footer(&r);
        assert_eq!(
            f,
            vec![
                "fig7 · cpu scale · seed 0 · 2 MLMs: 4 layers × 128 wide, 4 heads, pre-trained on 800 steps × 16 × \
                 128 = 1.6M tokens · 1 random encoder"
                    .to_string(),
                "2 substitutions of the study's setup: see the caption and fig7.json · crossling 0f37cdf-dirty".into()
            ]
        );
        // Several seeds, several shapes and budgets, static vectors and a given checkpoint; no substitution.
        r.provenance.seeds = vec![0, 1, 2];
        r.substitutions.clear();
        r.provenance.revision = "unknown".into();
        r.provenance.models.insert("short".into(), trained(4, 128, 4, 2400, 102, 20));
        r.provenance.models.insert("big".into(), trained(8, 768, 12, 100_000, 256, 256));
        let glove = serde_json::json!({"key": "g", "source": "m", "request": {"kind": "glove"}});
        r.provenance.models.insert("glove-m".into(), glove);
        r.provenance.models.insert("mbert".into(), serde_json::json!({"given": "/m", "kind": "hf_bert"}));
        let f = footer(&r);
        assert!(
            f[0].starts_with("fig7 · cpu scale · seeds 0, 1, 2 · 3 MLMs: 4 layers × 128 wide, 4 heads"),
            "{}",
            f[0]
        );
        assert!(f[0].contains("800 steps × 16 × 128 = 1.6M tokens or 2400 steps × 102 × 20 = 4.9M tokens"), "{}", f[0]);
        assert!(f[0].contains("1 MLM: 8 layers × 768 wide, 12 heads, pre-trained on 100000 steps × 256 × 256 = 6.6B"));
        assert!(f[0].ends_with("1 random encoder · 1 static embedding (glove) · given: mbert (hf_bert)"), "{}", f[0]);
        assert_eq!(f[1], "no substitution of the study's setup recorded · crossling unknown");
        // The masked share where the config has one (40 % and 15 % models are told apart).
        let mut masked = BTreeMap::new();
        for (name, p) in [("a", 0.4), ("b", 0.4), ("c", 0.15), ("d", 0.125)] {
            let mut m = trained(4, 128, 4, 6000, 32, 64);
            m["config"]["train"]["masking"] = serde_json::json!({ "mask_prob": p });
            masked.insert(name.to_string(), m);
        }
        assert_eq!(
            models_summary(&masked).unwrap(),
            "4 MLMs: 4 layers × 128 wide, 4 heads, pre-trained on 6000 steps × 32 × 64 = 12M tokens, 12.5 % masked \
             or 6000 steps × 32 × 64 = 12M tokens, 15 % masked or 6000 steps × 32 × 64 = 12M tokens, 40 % masked"
        );
        // A preset's models name their generation of the cpu presets (src/report/generations.rs).
        let mut preset = trained(4, 128, 4, 1500, 32, 64);
        preset["config"]["train"]["model"]["dropout"] = serde_json::json!(0.1);
        let old = BTreeMap::from([("default-en-fr".to_string(), preset)]);
        assert!(
            models_summary(&old)
                .unwrap()
                .ends_with(" · cpu presets: post-LN, until 2026-11-28 (older than the current mask40)"),
            "{}",
            models_summary(&old).unwrap()
        );
        // No model at all (the schematics): no model part.
        assert_eq!(models_summary(&BTreeMap::new()), None);
        assert_eq!([si(999), si(1_000), si(52_000), si(1_638_400)], ["999", "1.0k", "52k", "1.6M"]);
    }

    #[test]
    fn render_record_draws_the_footer_under_every_chart() {
        let mut r = record();
        r.charts.push(serde_json::json!({"kind": "line", "title": "t", "x": [0, 1],
                                          "series": [{"name": "a", "y": [0.1, 0.2]}], "size": [400, 300]}));
        let dir = tempfile::tempdir().unwrap();
        let files = render_record(&r, dir.path()).unwrap();
        assert_eq!(files.len(), 2);
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        // At 400 px the footer wraps; every wrapped line is drawn (the apostrophe escaped in SVG).
        let lines = crate::plot::footer::wrap(&footer(&r), 400);
        assert!(lines.len() > 2, "{lines:?}");
        for line in lines {
            assert!(svg.contains(&line.replace('\'', "&apos;")), "SVG lacks {line:?}");
        }
    }

    /// A claim as a script declares it (built from JSON, as the record stores it).
    fn claim(id: &str, left: &str, op: &str, right: Value) -> crate::claims::Claim {
        serde_json::from_value(serde_json::json!({
            "id": id,
            "source": "Emerging §5.2, Figure 7",
            "quote": "bilingual models have slightly higher similarity",
            "statement": format!("{left} {op} …"),
            "paper": if id == "order" { "avg en-fr 0.69 > 0.58" } else { "" },
            "checks": [{ "left": left, "op": op, "right": right, "label": "en-fr" }],
        }))
        .unwrap()
    }

    #[test]
    fn claims_markdown_is_the_notebook_table_with_re_evaluated_verdicts() {
        use crate::claims::score::{IntervalKind, Score, SeedScore};
        let score = |e: f64, half: f64, chance: Option<f64>| Score {
            estimate: e,
            low: e - half,
            high: e + half,
            interval: IntervalKind::Bootstrap,
            items: 100,
            chance,
            sd: None,
            per_seed: vec![SeedScore { seed: 0, estimate: e, low: e - half, high: e + half }],
            range: None,
            difference_of: None,
        };
        let mut r = record();
        assert!(claims_markdown(&r).unwrap().starts_with("*No claims recorded in `fig7.json` (cpu scale, seed 0)"));
        r.scores.insert("bi".into(), score(0.6, 0.01, None));
        r.scores.insert("mono".into(), score(0.3, 0.01, None));
        r.scores.insert("nli".into(), score(34.0, 1.5, Some(33.3)));
        r.claims.push(claim("order", "bi", ">", Value::from("mono")));
        r.claims.push(claim("chance|pipe", "nli", ">", Value::from(40.0)));
        // What the notebook cell prints (notebooks/build.py): the helper's output in evcxr's Markdown block.
        let shown = markdown_display(&claims_markdown(&r).unwrap());
        assert!(shown.starts_with("EVCXR_BEGIN_CONTENT text/markdown\n**Claims of fig7** (cpu scale, seed 0;"));
        assert!(shown.ends_with("\nEVCXR_END_CONTENT"));
        let md = claims_markdown(&r).unwrap();
        assert!(
            md.contains(
                "| order | Emerging §5.2, Figure 7 | bi > … | avg en-fr 0.69 > 0.58 | en-fr: bi 0.600 [0.590, 0.610] > \
                 mono 0.300 [0.290, 0.310] | **supported** |"
            ),
            "{md}"
        );
        // Escaped pipe, "plot only" for an empty paper field, the reason of a non-supported check.
        assert!(
            md.contains("| chance\\|pipe | Emerging §5.2, Figure 7 | nli > … | plot only | en-fr: nli 34.0"),
            "{md}"
        );
        assert!(md.contains("(the opposite order, intervals apart) | **contradicted** |"), "{md}");
        assert!(
            md.contains("- **order** (Emerging §5.2, Figure 7): “bilingual models have slightly higher similarity”")
        );
        // A check naming a score the record lacks is an error naming the record and the claim.
        r.claims.push(claim("bad", "missing", ">", Value::from(0.0)));
        let e = claims_markdown(&r).unwrap_err().to_string();
        assert!(e.contains("fig7.json") && e.contains("claim 'bad'") && e.contains("'missing'"), "{e}");
    }

    #[test]
    fn every_figure_notebook_shows_its_claims_with_these_helpers() {
        // The notebooks cannot run here (Jupyter + evcxr); this ties their claims cell to the helpers above, whose
        // names and signatures the tests check. notebooks/build.py writes the cells.
        let dir = crate::paths::beside_crate("notebooks");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".ipynb") || name == "index.ipynb" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            if name == "real.ipynb" {
                // Not a figure notebook: its one `show` helper renders each record and then its claims.
                assert!(text.contains("render_record(record, out_dir)?") && text.contains("claims_markdown(record)?"));
                continue;
            }
            let nb: Value = serde_json::from_str(&text).unwrap();
            let sources: Vec<String> = nb["cells"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| match &c["source"] {
                    Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
                    v => v.as_str().unwrap_or_default().to_string(),
                })
                .collect();
            let figure = sources.iter().position(|s| s.contains("render_record(&record, &out_dir)?")).unwrap();
            let claims = sources.iter().position(|s| {
                s.contains("use crossling::report::render::{claims_markdown, markdown_display};")
                    && s.contains("println!(\"{}\", markdown_display(&claims_markdown(&record)?));")
            });
            assert_eq!(claims, Some(figure + 2), "{name}: the claims cell must follow the figure cell and its heading");
            seen += 1;
        }
        assert!(seen >= 20, "only {seen} figure notebooks");
    }
}
