//! The Rhai helper libraries under `scripts/lib/` on constructed values, through `crossling run` (a script outside
//! `scripts/` still imports `lib/…` from there): each case throws with what it got when a helper is wrong.
use std::process::Command;

/// Runs `body` (after `import "lib/{lib}" as k;`) at smoke scale; panics with the script's output when it fails.
fn run_with(lib: &str, body: &str) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("case.rhai");
    let text = format!(
        "import \"lib/{lib}\" as k;\n{body}\nresults::title(\"case\");\nresults::caption(\"a test of lib/{lib}\");\n"
    );
    std::fs::write(&script, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(["run", script.to_str().unwrap(), "--scale", "smoke", "--out"])
        .arg(dir.path().join("out"))
        .env("CROSSLING_OFFLINE", "1")
        .env("CROSSLING_MODELS", dir.path().join("models"))
        .output()
        .expect("run crossling");
    assert!(
        out.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn curves_trend_budget_extrapolates_the_log_linear_line_of_the_last_budgets() {
    run_with(
        "curves",
        r#"
fn near(a, b) { (a - b).abs() < 1e-6 * b.abs().max(1.0) }
// y = 10 · log10(tokens / 1M): +10 per tenfold budget, 20 at 100M.
let t = k::trend_budget([1000000, 10000000], [0.0, 10.0], 20.0, 3);
if !near(t.slope, 10.0) || !near(t.reached_at.to_float(), 100000000.0) || t.already { throw `exact line: ${t}`; }
if k::trend_cell(t) != "≈100M tokens (+10.0 per tenfold budget)" { throw `cell: ${k::trend_cell(t)}`; }
// Only the last three values count, and () entries are skipped: the early 50.0 would otherwise flatten the line.
let t = k::trend_budget([1000, 1000000, 10000000, 100000000, 1000000000], [50.0, (), 0.0, 10.0, 20.0], 40.0, 3);
if !near(t.slope, 10.0) || !near(t.reached_at.to_float(), 1.0e11) { throw `last three: ${t}`; }
if k::trend_cell(t) != "≈100B tokens (+10.0 per tenfold budget)" { throw `cell: ${k::trend_cell(t)}`; }
// Off the line: least squares, not the end points (the emergence record's Tatoeba values at 3.1M, 10M, 20.5M).
let t = k::trend_budget([3072000, 10240000, 20480000], [4.1, 6.2, 12.3], 20.0, 3);
if !near(t.slope, 9.2922369) || (t.reached_at - 189658396).abs() > 100 { throw `least squares: ${t}`; }
// A () inside the window is skipped and the window reaches further back.
let t = k::trend_budget([1000, 1000000, 10000000, 100000000, 1000000000], [50.0, 0.0, (), 10.0, 20.0], 40.0, 3);
if !near(t.slope, 45.0 / 7.0) { throw `() in the window: ${t}`; }   // x 6, 8, 9; y 0, 10, 20
// A flat series whose rounding leaves a tiny positive slope, and a crossing far beyond any budget: no token count.
let t = k::trend_budget([3072000, 10240000, 20480000], [0.7, 0.7, 0.7], 10.0, 3);
if t.reached_at != () || t.beyond || !k::trend_cell(t).starts_with("no rising trend") { throw `flat 0.7: ${t}`; }
let t = k::trend_budget([3072000, 10240000, 20480000], [0.3, 0.3, 0.31], 10.0, 3);
if t.reached_at != () || !t.beyond || !k::trend_cell(t).starts_with("beyond 10^15") { throw `slow rise: ${t}`; }
if k::trend_budget([1000, 1000], [1.0, 2.0], 5.0, 3) != () { throw "one budget must give ()"; }
// A flat or falling line reaches nothing; a value at the target already is "reached"; one value is no trend.
let flat = k::trend_budget([1000, 2000, 4000], [0.3, 0.3, 0.3], 10.0, 3);
if flat.reached_at != () || k::trend_cell(flat) != "no rising trend (0.0 per tenfold budget)" { throw `flat: ${flat}`; }
let falling = k::trend_budget([1000, 2000], [5.0, 4.0], 10.0, 3);
if falling.reached_at != () || falling.slope >= 0.0 { throw `falling: ${falling}`; }
let there = k::trend_budget([1000, 2000], [0.7, 0.6], 0.5, 3);
if !there.already || k::trend_cell(there) != "reached" { throw `reached: ${there}`; }
if k::trend_budget([1000, 2000], [(), 1.0], 5.0, 3) != () { throw "one value must give ()"; }
if k::trend_cell(()) != "fewer than two budgets" { throw "cell of ()"; }
"#,
    );
}

#[test]
fn curves_tokens_label_reads_like_an_axis() {
    run_with(
        "curves",
        r#"
let got = [k::tokens_label(512), k::tokens_label(512000), k::tokens_label(3072000), k::tokens_label(20480000),
           k::tokens_label(1292624948)];
if got != ["512", "512k", "3.1M", "20M", "1.3B"] { throw `labels: ${got}`; }
"#,
    );
}

#[test]
fn common_centred_sums_give_pearson_and_the_least_squares_slope() {
    run_with(
        "common",
        r#"
fn near(a, b) { (a - b).abs() < 1e-9 * b.abs().max(1.0) }
// x 1..5, y 3, 6, 7, 8, 11: x̄ 3, ȳ 7, Σ(x−x̄)² 10, Σ(y−ȳ)² 34, Σ(x−x̄)(y−ȳ) 18.
let m = k::centred_sums([1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 6.0, 7.0, 8.0, 11.0]);
if !near(m.mx, 3.0) || !near(m.my, 7.0) || !near(m.sxx, 10.0) || !near(m.syy, 34.0) || !near(m.sxy, 18.0) {
    throw `sums: ${m}`;
}
// Pearson r = 18 / √(10 · 34), the slope 18 / 10.
if !near(m.sxy / (m.sxx * m.syy).sqrt(), 18.0 / 340.0.sqrt()) || !near(m.sxy / m.sxx, 1.8) { throw `r / slope: ${m}`; }
// An anti-correlated pair gives a negative sxy.
let m = k::centred_sums([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]);
if !near(m.sxy, -2.0) { throw `anti: ${m}`; }
// Arrays of different lengths are refused.
let refused = false;
try { k::centred_sums([1.0, 2.0], [1.0]); } catch (e) { refused = `${e}`.contains("2 x values but 1 y values"); }
if !refused { throw "different lengths must be refused"; }
"#,
    );
}

#[test]
fn common_replicate_helpers_average_layers_per_resample_and_difference_pairs() {
    run_with(
        "common",
        r#"
fn near(a, b) { (a - b).abs() < 1e-12 }
// Three layers × two resamples (reps[layer][resample], as cka::linear_bootstrap returns them).
let reps = [[0.1, 0.4], [0.2, 0.5], [0.6, 0.9]];
let all = k::layer_mean_replicates(reps);
if all.len() != 2 || !near(all[0], 0.3) || !near(all[1], 0.6) { throw `all layers: ${all}`; }
let top = k::span_replicates(reps, 1, 2);
if !near(top[0], 0.4) || !near(top[1], 0.7) { throw `layers 1–2: ${top}`; }
let d = k::minus(top, all);
if d.len() != 2 || !near(d[0], 0.1) || !near(d[1], 0.1) { throw `difference: ${d}`; }
"#,
    );
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn cka_bootstrap_replicates_are_paired_across_calls_and_score_with_an_interval() {
    run_with(
        "common",
        r#"
let m = train::model(#{ preset: "mono", langs: "en" });
let text = ["A cat sat.", "Two dogs ran far.", "The sun rose.", "Rain fell all day.", "She read a book.",
            "We walked home.", "Birds sang loudly.", "He drank tea.", "A ship sailed.", "The door opened."];
let f = features::sentences(m, text, "en");
let r = model::random_like(m, 1000);
let g = features::sentences(r, text, "en");
let a = cka::linear_bootstrap(f, g, SEED);
let b = cka::linear_bootstrap(f, g, SEED);
if a.len() != cka::linear(f, g).len() || a[0].len() != 1000 { throw `shape: ${a.len()} × ${a[0].len()}`; }
if a != b { throw "the same seed must draw the same resamples"; }
let own = cka::linear_bootstrap(f, f, SEED);
for x in own[1] { if (x - 1.0).abs() > 1e-5 { throw `CKA of a stack with itself is 1 on every resample, got ${x}`; } }
let est = k::mean(cka::linear(f, g));
results::score("cka", #{ estimate: est, replicates: k::layer_mean_replicates(a), resampled_items: text.len(), range: [0.0, 1.0] });
"#,
    );
}
