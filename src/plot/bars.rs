//! Grouped bar charts: one group per category, one bar per series, optional error bars, optional value
//! labels, optional reference markers (e.g. the paper's reported value for that bar) drawn as diamonds, and
//! dashed reference lines (e.g. a chance level). The y axis always includes 0, where the bars start.
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::draw::{self, Area, Key, LegendEntry};
use super::format::NumberFormat;
use super::palette;
use super::spec::{BarSeries, GroupedBars};
use crate::error::Result;

/// Fraction of a group's width covered by its bars.
const GROUP_FILL: f64 = 0.8;

/// Centre x of bar `s` (of `n_series`) in group `g`, and the bar's width, in data units.
fn bar_x(g: usize, s: usize, n_series: usize) -> (f64, f64) {
    let w = GROUP_FILL / n_series as f64;
    (g as f64 - GROUP_FILL / 2.0 + (s as f64 + 0.5) * w, w)
}

/// The y range: the spec's `y_range` (validation makes it include 0), else from 0 (or below the most negative
/// value) to above the highest bar, error bar, reference marker and reference line.
fn y_bounds(c: &GroupedBars) -> (f64, f64) {
    if let Some([lo, hi]) = c.y_range {
        return (lo.min(0.0), hi.max(0.0));
    }
    let all = c.series.iter().flat_map(|s| {
        let tops = s.values.iter().enumerate().filter_map(|(g, v)| {
            v.map(|v| match whisker(s, g, v) {
                Some((lo, hi)) => [lo.min(v), hi.max(v)],
                None => [v, v],
            })
        });
        tops.flatten().chain(s.reference.iter().flatten().flatten().copied()).collect::<Vec<_>>()
    });
    let lines = c.reference_lines.iter().map(|l| l.y);
    let (lo, hi) = draw::padded_range(all.chain(lines).chain([0.0]), 0.0);
    let span = hi - lo;
    let top_pad = if c.value_labels { 0.14 } else { 0.08 };
    (if lo < 0.0 { lo - 0.05 * span } else { 0.0 }, hi + top_pad * span)
}

/// The whisker of bar `g` of `s` with value `v`: `v ± errors[g]`, or `intervals[g]`; none when neither is given.
fn whisker(s: &BarSeries, g: usize, v: f64) -> Option<(f64, f64)> {
    if let Some(e) = s.errors.as_ref().and_then(|e| e[g]) {
        return Some((v - e, v + e));
    }
    s.intervals.as_ref().and_then(|iv| iv[g]).map(|[lo, hi]| (lo, hi))
}

/// Draws `c` into `area`.
pub fn draw<DB: DrawingBackend>(area: &Area<DB>, c: &GroupedBars) -> Result<()> {
    let t = c.title.as_str();
    let err = draw::plot_err(t);
    let fmt = NumberFormat::parse(&c.value_format)?;
    let area = draw::title(area, t, t)?;
    let mut entries: Vec<LegendEntry> = c
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| LegendEntry { name: s.name.clone(), color: palette::series(i), key: Key::Box })
        .collect();
    let has_reference = c.series.iter().any(|s| s.reference.as_ref().is_some_and(|r| r.iter().any(Option::is_some)));
    if has_reference {
        entries.push(LegendEntry { name: c.reference_label.clone(), color: BLACK, key: Key::Diamond });
    }
    let area = draw::with_legend(&area, &entries, c.legend, t)?;

    let n_groups = c.groups.len();
    let n_series = c.series.len();
    let (y0, y1) = y_bounds(c);

    let tick = draw::font(draw::TICK);
    let (w, _) = area.dim_in_pixel();
    let y_label_w = [y0, y1].iter().map(|v| draw::text_size(&tick, &draw::tick_label(*v)).0).max().unwrap_or(40);
    let y_area = y_label_w + 24 + if c.y_label.is_empty() { 0 } else { 34 };
    let group_px = w.saturating_sub(y_area + 60) as f64 / n_groups as f64;
    let widest = c.groups.iter().map(|g| draw::text_size(&tick, g).0).max().unwrap_or(0);
    let rotate = widest as f64 > group_px * 0.95;
    let x_area = if rotate { widest + 20 } else { 36 } + if c.x_label.is_empty() { 0 } else { 30 };

    let mut chart = ChartBuilder::on(&area)
        .margin_left(12)
        .margin_right(24)
        .margin_top(8)
        .margin_bottom(8)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(-0.5..n_groups as f64 - 0.5, y0..y1)
        .map_err(&err)?;
    let x_fmt = |v: &f64| {
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n_groups {
            c.groups[i as usize].clone()
        } else {
            String::new()
        }
    };
    let y_fmt = |v: &f64| draw::tick_label(*v);
    // Rotated group labels are drawn below (plotters centres a rotated tick label on its tick, so half of it would
    // sit above the axis, under the bars); the mesh then draws none.
    let x_style = tick.clone().into_text_style(&area);
    let no_label = |_: &f64| String::new();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n_groups)
        .y_labels(8)
        .x_label_formatter(if rotate { &no_label } else { &x_fmt })
        .y_label_formatter(&y_fmt)
        .x_label_style(x_style)
        .y_label_style(tick.clone())
        .x_desc(c.x_label.as_str())
        .axis_desc_style(draw::font(draw::LABEL))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(&err)?;
    draw::y_desc(&area, &chart.plotting_area().strip_coord_spec(), &c.y_label, t)?;
    if rotate {
        let style = tick
            .transform(plotters::style::FontTransform::Rotate90)
            .into_text_style(&area)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let origin = area.get_base_pixel();
        for (g, label) in c.groups.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(g as f64, y0));
            let at = (x - origin.0, y - origin.1 + 6);
            area.draw(&Text::new(label.clone(), at, style.clone())).map_err(&err)?;
        }
    }

    let base = 0f64.clamp(y0, y1);
    for (s, series) in c.series.iter().enumerate() {
        let color = palette::series(s);
        let bars = series.values.iter().enumerate().filter_map(|(g, v)| {
            let (cx, bw) = bar_x(g, s, n_series);
            v.map(|v| Rectangle::new([(cx - bw * 0.46, base), (cx + bw * 0.46, v.clamp(y0, y1))], color.filled()))
        });
        chart.draw_series(bars).map_err(&err)?;
    }

    // Value labels and reference diamonds in pixel space, on the plotting area.
    let plot = chart.plotting_area().strip_coord_spec();
    let base_px = plot.get_base_pixel();
    let px = |x: f64, y: f64| {
        let (a, b) = chart.backend_coord(&(x, y));
        (a - base_px.0, b - base_px.1)
    };
    draw::reference_lines(&plot, &c.reference_lines, (y0, y1), |y| px(0.0, y).1, t)?;
    let bar_px = (px(bar_x(0, 0, n_series).1, y0).0 - px(0.0, y0).0).abs();
    let radius = (bar_px / 4).clamp(5, 9);
    for (s, series) in c.series.iter().enumerate() {
        for g in 0..n_groups {
            let Some(v) = series.values[g] else { continue };
            let (cx, _) = bar_x(g, s, n_series);
            let r = series.reference.as_ref().and_then(|r| r[g]);
            let (x, y_bar) = px(cx, v.clamp(y0, y1));
            let mut top = y_bar;
            if let Some((w_lo, w_hi)) = whisker(series, g, v) {
                let (_, lo) = px(cx, w_lo.clamp(y0, y1));
                let (_, hi) = px(cx, w_hi.clamp(y0, y1));
                let cap = (bar_px / 5).clamp(3, 8);
                let style = BLACK.stroke_width(2);
                for path in
                    [vec![(x, lo), (x, hi)], vec![(x - cap, lo), (x + cap, lo)], vec![(x - cap, hi), (x + cap, hi)]]
                {
                    plot.draw(&PathElement::new(path, style)).map_err(&err)?;
                }
                top = top.min(hi);
            }
            if let Some(r) = r {
                let (_, y_ref) = px(cx, r.clamp(y0, y1));
                draw::diamond(&plot, (x, y_ref), radius, BLACK, t)?;
                top = top.min(y_ref - radius - 2);
            }
            if c.value_labels {
                let label = fmt.format(v);
                let f = draw::font(draw::MIN_TEXT + 1.0);
                let (tw, _) = draw::text_size(&f, &label);
                if tw as i32 <= bar_px + 6 {
                    draw::text(&plot, &label, (x, top - 4), f, BLACK, (HPos::Center, VPos::Bottom), t)?;
                } else {
                    draw::vertical_text(&plot, &label, (x, top - 6 - tw as i32 / 2), f, t)?;
                }
            }
        }
        // A reference without a bar still gets its marker.
        if let Some(reference) = &series.reference {
            for (g, r) in reference.iter().enumerate() {
                if let (Some(r), None) = (r, series.values[g]) {
                    draw::diamond(&plot, px(bar_x(g, s, n_series).0, r.clamp(y0, y1)), radius, BLACK, t)?;
                }
            }
        }
    }
    draw::reference_labels(&plot, &c.reference_lines, (y0, y1), |y| px(0.0, y).1, t)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{bar_x, y_bounds};
    use crate::plot::{BarSeries, ChartSpec, GroupedBars, LegendPosition, ReferenceLine};

    fn bars(values: Vec<Option<f64>>, reference: Option<Vec<Option<f64>>>) -> GroupedBars {
        GroupedBars {
            title: "XNLI zero-shot".into(),
            x_label: String::new(),
            y_label: "accuracy (%)".into(),
            groups: vec!["fr".into(), "de".into()],
            series: vec![BarSeries { name: "ours".into(), values, errors: None, intervals: None, reference }],
            value_labels: false,
            value_format: "{:.1}".into(),
            reference_label: "paper".into(),
            y_range: None,
            reference_lines: vec![],
            legend: LegendPosition::Bottom,
            size: Some([600, 400]),
        }
    }

    #[test]
    fn the_axis_starts_at_zero_whatever_the_values() {
        // Accuracies far above 0 (the case where an axis from the minimum would exaggerate differences).
        let c = bars(vec![Some(61.0), Some(64.0)], None);
        let (lo, hi) = y_bounds(&c);
        assert_eq!(lo, 0.0);
        assert!(hi > 64.0);
        let (lo, hi) = y_bounds(&bars(vec![Some(-5.0), Some(-2.0)], None));
        assert!(lo < -5.0 && (0.0..1.0).contains(&hi), "{lo}..{hi}");
        let mut c = bars(vec![Some(61.0), Some(64.0)], Some(vec![Some(80.0), None]));
        c.reference_lines = vec![ReferenceLine { y: 90.0, label: "ceiling".into() }];
        let (lo, hi) = y_bounds(&c);
        assert!(lo == 0.0 && hi > 90.0, "markers and reference lines must be inside the range: {lo}..{hi}");
        c.y_range = Some([0.0, 100.0]);
        assert_eq!(y_bounds(&c), (0.0, 100.0));
    }

    #[test]
    fn interval_whiskers_are_inside_the_range_and_validated() {
        let mut c = bars(vec![Some(61.0), Some(64.0)], None);
        c.series[0].intervals = Some(vec![Some([58.0, 75.0]), None]);
        let (lo, hi) = y_bounds(&c);
        assert!(lo == 0.0 && hi > 75.0, "the whisker's top must be inside the range: {lo}..{hi}");
        let spec = |c: &GroupedBars| ChartSpec::GroupedBars(c.clone()).validate();
        assert!(spec(&c).is_ok());
        c.series[0].intervals = Some(vec![Some([66.0, 60.0]), None]);
        assert!(spec(&c).unwrap_err().to_string().contains("low is above its high"));
        c.series[0].intervals = Some(vec![Some([58.0, 75.0])]);
        assert!(spec(&c).unwrap_err().to_string().contains("intervals"));
        c.series[0].intervals = Some(vec![Some([58.0, 75.0]), None]);
        c.series[0].errors = Some(vec![Some(1.0), None]);
        assert!(spec(&c).unwrap_err().to_string().contains("both errors and intervals"));
        c.series[0].errors = None;
        c.series[0].intervals = Some(vec![Some([58.0, f64::NAN]), None]);
        assert!(spec(&c).is_err(), "a non-finite bound is refused");
    }

    #[test]
    fn paper_markers_get_a_legend_entry_and_chance_lines_their_label() {
        let mut c = bars(vec![Some(41.0), Some(44.0)], Some(vec![Some(70.2), Some(68.1)]));
        c.reference_lines = vec![ReferenceLine { y: 100.0 / 3.0, label: "chance".into() }];
        let svg = crate::plot::render_svg(&ChartSpec::GroupedBars(c.clone()), &[]).unwrap();
        assert!(svg.contains("\npaper\n"), "no legend entry for the paper's markers");
        assert!(svg.contains("\nchance\n"), "no label on the chance line");
        // Each marker is a black diamond inside a white one: 2 bars + the legend key = 3 black polygons.
        let polygons = svg.matches("<polygon").count();
        assert_eq!(polygons, 6, "diamonds missing or extra");
        assert!(svg.matches("stroke=\"#464646\"").count() > 10, "chance line not dashed across the plot");
        c.series[0].reference = None;
        c.reference_lines.clear();
        let svg = crate::plot::render_svg(&ChartSpec::GroupedBars(c), &[]).unwrap();
        assert!(!svg.contains("\npaper\n") && !svg.contains("\nchance\n"));
        assert_eq!(svg.matches("<polygon").count(), 0);
    }

    #[test]
    fn bars_tile_the_group_symmetrically() {
        let (first, w) = bar_x(2, 0, 4);
        let (last, _) = bar_x(2, 3, 4);
        assert!((w - 0.2).abs() < 1e-12);
        assert!((first - (2.0 - 0.3)).abs() < 1e-12 && (last - (2.0 + 0.3)).abs() < 1e-12);
    }
}
