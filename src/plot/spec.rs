//! Chart specifications: plain serde data that fully determine a figure, so a figure's JSON record can be
//! re-rendered (`crossling plot ID`) without recomputing anything.
//!
//! JSON shape: an object tagged by `"kind"` (`"line"`, `"grouped_bars"`, `"heatmap_table"`,
//! `"alpha_layer_heatmap"`, `"schematic"`, `"panels"`); every other field belongs to that kind, unknown fields
//! are rejected. Missing values are JSON `null` (no point, no bar, blank cell). The chart kinds follow the
//! figures of Wu, Conneau et al. (2020) — layer curves (Figs. 4–7), grouped bars with the paper's values as
//! reference ticks (Fig. 3, Table-like bars), the architecture schematics of Figs. 1–2 — and of Liu et al.
//! (2020) — per-layer curves (Figs. 1–6) and α × layer heat maps of the mean-difference shift (Figs. 7–8).
//!
//! What a reader needs to judge a chart, and the fields that draw it (as a script writes them in Rhai):
//! - **Chance and reference levels** — `reference_lines: [#{ y: 33.3, label: "chance" }]` on `line` and
//!   `grouped_bars` charts: a dashed grey horizontal line across the plot at `y`, its label at the right end
//!   above it; the automatic y range always includes it. Use it for a metric's chance level (XNLI 33.3 %, P@1
//!   `1/n`, the MRR of a random ranking `H_n / n`) or any fixed reference.
//! - **The paper's values beside ours** — on `grouped_bars`, each series' `reference: [one value or () per
//!   group]` draws the paper's number for that bar as a black diamond on it; the legend names the diamonds
//!   `reference_label` (default `"paper"`). For a heat-map table, add the paper's table as further panels of a
//!   `panels` chart (e.g. ours in the first row, the paper's in the second, titled `"paper: …"`); panels may have
//!   different row counts (the paper's L0–L8 beside our layers).
//! - **Bars and scores start at 0**: the automatic y range of `grouped_bars` always includes 0, and an explicit
//!   `y_range` must include 0 (a bar whose axis starts above 0 misleads); so does the automatic y range of a `line`
//!   chart (an axis fitted to the data magnifies differences), whose explicit `y_range` is the script's choice.
//! - **Footer**: the renderer adds the record's scale, model shapes, pre-training tokens, seeds and
//!   substitutions under every chart ([`crate::report::render::footer`]); nothing in the spec is needed.
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One chart, or a grid of charts under one title.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChartSpec {
    Line(LineChart),
    GroupedBars(GroupedBars),
    HeatmapTable(HeatmapTable),
    AlphaLayerHeatmap(AlphaLayerHeatmap),
    Schematic(Schematic),
    Panels(Panels),
}

/// The x axis of a line chart: numeric positions, or category labels placed at 0, 1, 2, ….
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum XAxis {
    Numbers(Vec<f64>),
    Labels(Vec<String>),
}

impl XAxis {
    /// Number of x positions.
    pub fn len(&self) -> usize {
        match self {
            XAxis::Numbers(v) => v.len(),
            XAxis::Labels(v) => v.len(),
        }
    }

    /// Whether there are no x positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The numeric position of point `i`.
    pub fn position(&self, i: usize) -> f64 {
        match self {
            XAxis::Numbers(v) => v[i],
            XAxis::Labels(_) => i as f64,
        }
    }
}

/// Where a legend goes. Legends are drawn outside the plotting area so they never cover data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LegendPosition {
    /// In rows below the x-axis label (default).
    #[default]
    Bottom,
    /// In a column right of the plotting area.
    Right,
    /// No legend.
    None,
}

/// Curves over x (e.g. accuracy per layer), with optional shaded bands (error bars, confidence intervals).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineChart {
    pub title: String,
    #[serde(default)]
    pub x_label: String,
    #[serde(default)]
    pub y_label: String,
    pub x: XAxis,
    pub series: Vec<LineSeries>,
    /// Fixed y range `[min, max]`; by default 0 and the data range (with the bands and reference lines), with 5 %
    /// padding away from 0.
    #[serde(default)]
    pub y_range: Option<[f64; 2]>,
    /// Dashed horizontal lines, e.g. a chance level (`[{"y": 33.3, "label": "chance"}]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_lines: Vec<ReferenceLine>,
    #[serde(default)]
    pub legend: LegendPosition,
    /// Pixel size `[width, height]` when rendered on its own; default 1200 × 800.
    #[serde(default)]
    pub size: Option<[u32; 2]>,
}

/// One curve. `y[i]` is `null` where there is no value (the curve breaks there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineSeries {
    pub name: String,
    pub y: Vec<Option<f64>>,
    /// Lower edge of a shaded band (same length as `y`); requires `upper`.
    #[serde(default)]
    pub lower: Option<Vec<Option<f64>>>,
    /// Upper edge of a shaded band (same length as `y`); requires `lower`.
    #[serde(default)]
    pub upper: Option<Vec<Option<f64>>>,
    /// Draw dashed (e.g. for baselines or the paper's curve).
    #[serde(default)]
    pub dashed: bool,
}

/// Bars grouped by category (`groups`), one bar per series in each group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupedBars {
    pub title: String,
    #[serde(default)]
    pub x_label: String,
    #[serde(default)]
    pub y_label: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
    /// Print each bar's value above it, formatted with `value_format`.
    #[serde(default)]
    pub value_labels: bool,
    /// Format of value labels, e.g. `"{:.2}"` (see [`crate::plot::format`]).
    #[serde(default = "default_format")]
    pub value_format: String,
    /// Legend name of the reference markers (e.g. `"paper"`); markers are drawn as black diamonds.
    #[serde(default = "default_reference_label")]
    pub reference_label: String,
    /// Fixed y range `[min, max]`, which must include 0 (bars grow from 0); by default from 0 (or the minimum, if
    /// negative) to the maximum + 10 %, the reference markers, error bars and reference lines included.
    #[serde(default)]
    pub y_range: Option<[f64; 2]>,
    /// Dashed horizontal lines, e.g. a chance level (`[{"y": 33.3, "label": "chance"}]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_lines: Vec<ReferenceLine>,
    #[serde(default)]
    pub legend: LegendPosition,
    #[serde(default)]
    pub size: Option<[u32; 2]>,
}

/// One series of bars: `values[g]` for group `g` (`null` = no bar).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
    /// Half-width of an error bar per group (e.g. standard deviation over seeds).
    #[serde(default)]
    pub errors: Option<Vec<Option<f64>>>,
    /// An interval `[low, high]` per group (e.g. a 95 % bootstrap interval), drawn as a whisker from `low` to
    /// `high`; an asymmetric alternative to `errors` (a series gives one or the other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<Vec<Option<[f64; 2]>>>,
    /// Reference value per group (e.g. the paper's number), drawn as a black diamond on the bar (also where the
    /// bar itself is missing); the legend names the diamonds [`GroupedBars::reference_label`].
    #[serde(default)]
    pub reference: Option<Vec<Option<f64>>>,
}

/// A dashed horizontal line at `y` across a line or bar chart, labelled at its right end (e.g. a chance level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceLine {
    pub y: f64,
    /// Drawn above the line at the right end of the plot, e.g. `"chance 33.3"`; may be empty.
    #[serde(default)]
    pub label: String,
}

/// Colour scales for heat maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColorScale {
    /// Perceptually uniform, colour-blind safe, dark (low) to yellow (high).
    #[default]
    Viridis,
    /// White (low) to dark blue (high).
    Blues,
    /// Diverging blue (low) – white (middle) – red (high).
    RedBlue,
}

/// A table of numbers coloured by value, the number printed in each cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatmapTable {
    pub title: String,
    /// Caption of the row labels (drawn above them), e.g. `"source"`.
    #[serde(default)]
    pub row_label: String,
    /// Caption of the column labels (drawn above them), e.g. `"target"`.
    #[serde(default)]
    pub col_label: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// `values[r][c]`; `null` = blank cell.
    pub values: Vec<Vec<Option<f64>>>,
    #[serde(default = "default_format")]
    pub format: String,
    #[serde(default)]
    pub color: ColorScale,
    /// Colour range `[min, max]`; by default the data range.
    #[serde(default)]
    pub range: Option<[f64; 2]>,
    /// Draw a colour bar at the right.
    #[serde(default)]
    pub colorbar: bool,
    #[serde(default)]
    pub size: Option<[u32; 2]>,
}

/// Which cell of an α × layer grid is the best one (outlined).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Best {
    #[default]
    Max,
    Min,
    None,
}

/// Liu et al. (2020) Figs. 7–8: a metric over shift strength α (rows) × layer (columns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlphaLayerHeatmap {
    pub title: String,
    pub alphas: Vec<f64>,
    /// Column labels, e.g. `["1", "2", …]` or `["emb", "1", …]`.
    pub layers: Vec<String>,
    /// `values[a][l]`; `null` = not computed.
    pub values: Vec<Vec<Option<f64>>>,
    /// Name of the metric, shown next to the colour bar (e.g. `"convert rate"`).
    #[serde(default)]
    pub value_label: String,
    #[serde(default = "default_true")]
    pub show_numbers: bool,
    #[serde(default = "default_format")]
    pub format: String,
    #[serde(default)]
    pub best: Best,
    #[serde(default)]
    pub color: ColorScale,
    #[serde(default)]
    pub range: Option<[f64; 2]>,
    #[serde(default)]
    pub size: Option<[u32; 2]>,
}

/// Wu, Conneau et al. (2020) Figs. 1–2: which parts of a two-language transformer are shared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schematic {
    pub title: String,
    /// The two language columns, e.g. `["en", "fr"]`.
    pub languages: Vec<String>,
    /// One stack per panel, side by side.
    pub panels: Vec<SchematicPanel>,
    #[serde(default)]
    pub size: Option<[u32; 2]>,
}

/// One model configuration: embeddings, transformer layers 1..=L (bottom to top), softmax; each part either
/// shared by both languages (one wide box) or separate (one box per language).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchematicPanel {
    /// Caption under the stack, e.g. `"Sep Emb + L1-3"`.
    pub title: String,
    pub embeddings_shared: bool,
    /// `layers_shared[i]` for transformer layer `i + 1`.
    pub layers_shared: Vec<bool>,
    pub softmax_shared: bool,
    /// An arrow between the two language columns at one level (Fig. 2's probe "linear map W").
    #[serde(default)]
    pub link: Option<SchematicLink>,
}

/// An arrow from the left to the right language column at `level` (0 = embeddings, 1..=L = layers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchematicLink {
    pub level: usize,
    pub label: String,
}

/// Several charts in a grid (sub-panels (a), (b), … or one per language pair) under one title.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Panels {
    pub title: String,
    /// Number of grid columns; rows follow from the number of charts.
    pub columns: usize,
    /// The charts, row-major; a `Panels` may not contain another `Panels`.
    pub charts: Vec<ChartSpec>,
    /// Pixel size of one panel; default 800 × 600.
    #[serde(default)]
    pub panel_size: Option<[u32; 2]>,
}

fn default_format() -> String {
    "{:.2}".to_string()
}

fn default_reference_label() -> String {
    "paper".to_string()
}

fn default_true() -> bool {
    true
}

fn invalid(chart: &str, msg: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("chart '{chart}': {msg}"))
}

fn check_len<T>(chart: &str, what: &str, v: &[T], expected: usize, of: &str) -> Result<()> {
    if v.len() != expected {
        return Err(invalid(chart, format!("{what} has {} values but {of} has {expected}", v.len())));
    }
    Ok(())
}

fn check_range(chart: &str, range: &Option<[f64; 2]>) -> Result<()> {
    if let Some([lo, hi]) = range {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(invalid(chart, format!("range [{lo}, {hi}] must be finite with min < max")));
        }
    }
    Ok(())
}

fn check_reference_lines(chart: &str, lines: &[ReferenceLine]) -> Result<()> {
    match lines.iter().find(|l| !l.y.is_finite()) {
        Some(l) => Err(invalid(chart, format!("reference line '{}' has a non-finite y", l.label))),
        None => Ok(()),
    }
}

fn check_size(chart: &str, size: &Option<[u32; 2]>) -> Result<()> {
    if let Some([w, h]) = size {
        if *w < 200 || *h < 150 || *w > 10_000 || *h > 10_000 {
            return Err(invalid(chart, format!("size {w}×{h} must be within 200×150 ..= 10000×10000")));
        }
    }
    Ok(())
}

fn check_grid(chart: &str, values: &[Vec<Option<f64>>], rows: usize, cols: usize, names: (&str, &str)) -> Result<()> {
    check_len(chart, "values", values, rows, names.0)?;
    for (r, row) in values.iter().enumerate() {
        check_len(chart, &format!("values[{r}]"), row, cols, names.1)?;
        if let Some(c) = row.iter().position(|v| v.is_some_and(|x| !x.is_finite())) {
            return Err(invalid(chart, format!("values[{r}][{c}] is not finite")));
        }
    }
    Ok(())
}

impl ChartSpec {
    /// The chart's title.
    pub fn title(&self) -> &str {
        match self {
            ChartSpec::Line(c) => &c.title,
            ChartSpec::GroupedBars(c) => &c.title,
            ChartSpec::HeatmapTable(c) => &c.title,
            ChartSpec::AlphaLayerHeatmap(c) => &c.title,
            ChartSpec::Schematic(c) => &c.title,
            ChartSpec::Panels(c) => &c.title,
        }
    }

    /// Checks that the spec can be drawn: lengths agree, numbers are finite, formats parse.
    /// Errors are `Error::Invalid` naming the chart (by title) and the offending series or field.
    pub fn validate(&self) -> Result<()> {
        let t = self.title();
        match self {
            ChartSpec::Line(c) => {
                if c.x.is_empty() {
                    return Err(invalid(t, "x is empty"));
                }
                if let XAxis::Numbers(x) = &c.x {
                    if x.iter().any(|v| !v.is_finite()) {
                        return Err(invalid(t, "x has a non-finite value"));
                    }
                }
                if c.series.is_empty() {
                    return Err(invalid(t, "no series"));
                }
                for s in &c.series {
                    let what = format!("series '{}'", s.name);
                    check_len(t, &format!("{what} y"), &s.y, c.x.len(), "x")?;
                    match (&s.lower, &s.upper) {
                        (Some(lo), Some(hi)) => {
                            check_len(t, &format!("{what} lower"), lo, c.x.len(), "x")?;
                            check_len(t, &format!("{what} upper"), hi, c.x.len(), "x")?;
                        }
                        (None, None) => {}
                        _ => return Err(invalid(t, format!("{what}: a band needs both lower and upper"))),
                    }
                    let all = s.y.iter().chain(s.lower.iter().flatten()).chain(s.upper.iter().flatten());
                    if all.flatten().any(|v| !v.is_finite()) {
                        return Err(invalid(t, format!("{what} has a non-finite value (use null for missing)")));
                    }
                }
                check_range(t, &c.y_range)?;
                check_reference_lines(t, &c.reference_lines)?;
                check_size(t, &c.size)
            }
            ChartSpec::GroupedBars(c) => {
                if c.groups.is_empty() || c.series.is_empty() {
                    return Err(invalid(t, "needs at least one group and one series"));
                }
                for s in &c.series {
                    let what = format!("series '{}'", s.name);
                    check_len(t, &format!("{what} values"), &s.values, c.groups.len(), "groups")?;
                    if let Some(e) = &s.errors {
                        check_len(t, &format!("{what} errors"), e, c.groups.len(), "groups")?;
                    }
                    if let Some(r) = &s.reference {
                        check_len(t, &format!("{what} reference"), r, c.groups.len(), "groups")?;
                    }
                    if let Some(iv) = &s.intervals {
                        if s.errors.is_some() {
                            return Err(invalid(
                                t,
                                format!("{what} gives both errors and intervals (one or the other)"),
                            ));
                        }
                        check_len(t, &format!("{what} intervals"), iv, c.groups.len(), "groups")?;
                        if let Some([lo, hi]) =
                            iv.iter().flatten().find(|[lo, hi]| lo.partial_cmp(hi).is_none_or(|o| o.is_gt()))
                        {
                            return Err(invalid(
                                t,
                                format!("{what} has an interval [{lo}, {hi}] whose low is above its high"),
                            ));
                        }
                    }
                    let bounds = s.intervals.iter().flatten().flatten().flat_map(|iv| iv.iter().map(|v| Some(*v)));
                    let all = s.values.iter().chain(s.errors.iter().flatten()).chain(s.reference.iter().flatten());
                    if all.flatten().copied().chain(bounds.flatten()).any(|v| !v.is_finite()) {
                        return Err(invalid(t, format!("{what} has a non-finite value (use null for missing)")));
                    }
                }
                crate::plot::format::NumberFormat::parse(&c.value_format).map_err(|e| invalid(t, e))?;
                check_range(t, &c.y_range)?;
                if let Some([lo, hi]) = c.y_range {
                    if lo > 0.0 || hi < 0.0 {
                        return Err(invalid(
                            t,
                            format!(
                                "y_range [{lo}, {hi}] must include 0: bars grow from 0, so their axis starts there"
                            ),
                        ));
                    }
                }
                check_reference_lines(t, &c.reference_lines)?;
                check_size(t, &c.size)
            }
            ChartSpec::HeatmapTable(c) => {
                if c.rows.is_empty() || c.cols.is_empty() {
                    return Err(invalid(t, "needs at least one row and one column"));
                }
                check_grid(t, &c.values, c.rows.len(), c.cols.len(), ("rows", "cols"))?;
                crate::plot::format::NumberFormat::parse(&c.format).map_err(|e| invalid(t, e))?;
                check_range(t, &c.range)?;
                check_size(t, &c.size)
            }
            ChartSpec::AlphaLayerHeatmap(c) => {
                if c.alphas.is_empty() || c.layers.is_empty() {
                    return Err(invalid(t, "needs at least one alpha and one layer"));
                }
                if c.alphas.iter().any(|a| !a.is_finite()) {
                    return Err(invalid(t, "alphas has a non-finite value"));
                }
                check_grid(t, &c.values, c.alphas.len(), c.layers.len(), ("alphas", "layers"))?;
                crate::plot::format::NumberFormat::parse(&c.format).map_err(|e| invalid(t, e))?;
                check_range(t, &c.range)?;
                check_size(t, &c.size)
            }
            ChartSpec::Schematic(c) => {
                if c.languages.len() != 2 {
                    return Err(invalid(t, format!("languages must name 2 columns, got {}", c.languages.len())));
                }
                if c.panels.is_empty() {
                    return Err(invalid(t, "no panels"));
                }
                let n = c.panels[0].layers_shared.len();
                for p in &c.panels {
                    if p.layers_shared.is_empty() {
                        return Err(invalid(t, format!("panel '{}' has no layers", p.title)));
                    }
                    if p.layers_shared.len() != n {
                        return Err(invalid(
                            t,
                            format!("panel '{}' has {} layers, the first panel {n}", p.title, p.layers_shared.len()),
                        ));
                    }
                    if let Some(l) = &p.link {
                        if l.level > n {
                            return Err(invalid(
                                t,
                                format!("panel '{}' links level {} > {n} layers", p.title, l.level),
                            ));
                        }
                    }
                }
                check_size(t, &c.size)
            }
            ChartSpec::Panels(c) => {
                if c.columns == 0 || c.charts.is_empty() {
                    return Err(invalid(t, "needs columns ≥ 1 and at least one chart"));
                }
                for ch in &c.charts {
                    if matches!(ch, ChartSpec::Panels(_)) {
                        return Err(invalid(t, format!("panel '{}' is itself a panels chart", ch.title())));
                    }
                    ch.validate()?;
                }
                check_size(t, &c.panel_size)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::gallery;

    #[test]
    fn every_kind_round_trips_through_json_and_validates() {
        for (stem, spec) in gallery::specs() {
            spec.validate().unwrap_or_else(|e| panic!("{stem}: {e}"));
            let json = serde_json::to_string(&spec).unwrap();
            let back: ChartSpec = serde_json::from_str(&json).unwrap();
            assert_eq!(back, spec, "{stem}");
        }
    }

    #[test]
    fn json_form_is_tagged_and_defaults_apply() {
        let json = r#"{"kind": "line", "title": "t", "x": ["a", "b"], "series": [{"name": "s", "y": [1, null]}]}"#;
        let ChartSpec::Line(c) = serde_json::from_str::<ChartSpec>(json).unwrap() else { panic!("not a line chart") };
        assert_eq!(c.x, XAxis::Labels(vec!["a".into(), "b".into()]));
        assert_eq!(c.series[0].y, vec![Some(1.0), None]);
        assert_eq!(c.legend, LegendPosition::Bottom);
        let json = r#"{"kind": "heatmap_table", "title": "t", "rows": ["r"], "cols": ["c"], "values": [[0.5]]}"#;
        let ChartSpec::HeatmapTable(h) = serde_json::from_str::<ChartSpec>(json).unwrap() else {
            panic!("not a heatmap")
        };
        assert_eq!((h.format.as_str(), h.color), ("{:.2}", ColorScale::Viridis));
    }

    #[test]
    fn unknown_fields_and_kinds_are_rejected() {
        let extra = r#"{"kind": "line", "title": "t", "x": [1], "series": [], "colour": "red"}"#;
        let e = serde_json::from_str::<ChartSpec>(extra).unwrap_err().to_string();
        assert!(e.contains("colour"), "{e}");
        let nested = r#"{"kind": "line", "title": "t", "x": [1], "series": [{"name": "s", "y": [1], "z": 1}]}"#;
        assert!(serde_json::from_str::<ChartSpec>(nested).is_err());
        assert!(serde_json::from_str::<ChartSpec>(r#"{"kind": "pie", "title": "t"}"#).is_err());
    }

    fn line(y: Vec<Option<f64>>) -> LineChart {
        LineChart {
            title: "Fig 5".into(),
            x_label: String::new(),
            y_label: String::new(),
            x: XAxis::Numbers(vec![1.0, 2.0, 3.0]),
            series: vec![LineSeries { name: "en-fr".into(), y, lower: None, upper: None, dashed: false }],
            y_range: None,
            reference_lines: vec![],
            legend: LegendPosition::Bottom,
            size: None,
        }
    }

    fn err_of(spec: ChartSpec) -> String {
        match spec.validate() {
            Err(Error::Invalid(m)) => m,
            other => panic!("expected Error::Invalid, got {other:?}"),
        }
    }

    #[test]
    fn validation_names_the_chart_and_the_series() {
        let m = err_of(ChartSpec::Line(line(vec![Some(1.0), Some(2.0)])));
        assert_eq!(m, "chart 'Fig 5': series 'en-fr' y has 2 values but x has 3");
        let mut c = line(vec![Some(1.0); 3]);
        c.series[0].lower = Some(vec![Some(0.0); 3]);
        assert!(err_of(ChartSpec::Line(c)).contains("needs both lower and upper"));
        let mut c = line(vec![Some(1.0); 3]);
        c.y_range = Some([1.0, 1.0]);
        assert!(err_of(ChartSpec::Line(c)).contains("min < max"));
        let c = line(vec![Some(1.0), Some(f64::NAN), None]);
        assert!(err_of(ChartSpec::Line(c)).contains("non-finite"));
        let mut c = line(vec![Some(1.0); 3]);
        c.reference_lines = vec![ReferenceLine { y: f64::INFINITY, label: "chance".into() }];
        assert!(err_of(ChartSpec::Line(c)).contains("reference line 'chance' has a non-finite y"));
    }

    #[test]
    fn reference_lines_parse_and_bar_ranges_must_include_zero() {
        let json = r#"{"kind": "grouped_bars", "title": "t", "groups": ["a"], "series": [{"name": "s", "values": [40]}],
                       "reference_lines": [{"y": 33.3, "label": "chance"}]}"#;
        let ChartSpec::GroupedBars(mut b) = serde_json::from_str::<ChartSpec>(json).unwrap() else {
            panic!("not bars")
        };
        assert_eq!(b.reference_lines, vec![ReferenceLine { y: 33.3, label: "chance".into() }]);
        let line = r#"{"kind": "line", "title": "t", "x": [1], "series": [], "reference_lines": [{"y": 1, "z": 2}]}"#;
        assert!(serde_json::from_str::<ChartSpec>(line).unwrap_err().to_string().contains('z'));
        b.y_range = Some([30.0, 50.0]);
        assert!(err_of(ChartSpec::GroupedBars(b.clone())).contains("y_range [30, 50] must include 0"));
        b.y_range = Some([-10.0, -1.0]);
        assert!(err_of(ChartSpec::GroupedBars(b.clone())).contains("must include 0"));
        b.y_range = Some([0.0, 50.0]);
        assert!(ChartSpec::GroupedBars(b).validate().is_ok());
    }

    #[test]
    fn validation_covers_bars_grids_schematics_and_panels() {
        let specs = gallery::specs();
        let get = |k: &str| specs.iter().find(|(s, _)| *s == k).unwrap().1.clone();

        let ChartSpec::GroupedBars(mut b) = get("grouped_bars") else { unreachable!() };
        b.series[1].reference = Some(vec![None]);
        assert!(err_of(ChartSpec::GroupedBars(b.clone())).contains("series 'Sep Emb' reference has 1 values"));
        b.series[1].reference = None;
        b.value_format = "{:z}".into();
        assert!(err_of(ChartSpec::GroupedBars(b)).contains("format string"));

        let ChartSpec::HeatmapTable(mut h) = get("heatmap_table") else { unreachable!() };
        h.values[2].pop();
        assert!(err_of(ChartSpec::HeatmapTable(h)).contains("values[2] has 4 values but cols has 5"));

        let ChartSpec::AlphaLayerHeatmap(mut a) = get("alpha_layer_heatmap") else { unreachable!() };
        a.alphas.pop();
        assert!(err_of(ChartSpec::AlphaLayerHeatmap(a)).contains("but alphas has 5"));

        let ChartSpec::Schematic(mut s) = get("schematic") else { unreachable!() };
        s.panels[2].layers_shared.push(true);
        assert!(err_of(ChartSpec::Schematic(s.clone())).contains("panel 'Sep L1-3' has 5 layers"));
        s.languages.pop();
        assert!(err_of(ChartSpec::Schematic(s)).contains("2 columns"));

        let ChartSpec::Panels(mut p) = get("panels") else { unreachable!() };
        p.charts.push(get("panels"));
        assert!(err_of(ChartSpec::Panels(p.clone())).contains("is itself a panels chart"));
        p.charts.pop();
        p.charts.push(ChartSpec::Line(line(vec![None])));
        assert!(err_of(ChartSpec::Panels(p)).starts_with("chart 'Fig 5'"));
    }
}
