//! Line charts: one curve per series over x (layer indices or category labels), markers at each point,
//! optional shaded bands (e.g. mean ± std over seeds, or a confidence interval), gaps where a value is null, and
//! dashed reference lines (e.g. a chance level) under the curves.
use plotters::prelude::*;

use super::draw::{self, Area, Key, LegendEntry};
use super::palette;
use super::spec::{LineChart, XAxis};
use crate::error::Result;

/// Consecutive runs of points where `f(i)` is defined.
fn runs<T>(n: usize, f: impl Fn(usize) -> Option<T>) -> Vec<Vec<T>> {
    let mut out = vec![];
    let mut cur = vec![];
    for i in 0..n {
        match f(i) {
            Some(p) => cur.push(p),
            None if !cur.is_empty() => out.push(std::mem::take(&mut cur)),
            None => {}
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The y range: the spec's `y_range`, else 0 and every value, band edge and reference line, with 5 % padding on a
/// side that does not end at 0. Score axes start at 0, as bars do: a range fitted to the data alone (liu-fig8's
/// BLEU-1 from 22, issue 69) magnifies differences.
fn y_bounds(c: &LineChart) -> (f64, f64) {
    match c.y_range {
        Some([lo, hi]) => (lo, hi),
        None => {
            let values = c
                .series
                .iter()
                .flat_map(|s| {
                    s.y.iter().chain(s.lower.iter().flatten()).chain(s.upper.iter().flatten()).flatten().copied()
                })
                .chain(c.reference_lines.iter().map(|l| l.y));
            let (lo, hi) = draw::padded_range(values.chain([0.0]), 0.0);
            let span = hi - lo;
            (if lo < 0.0 { lo - 0.05 * span } else { 0.0 }, if hi > 0.0 { hi + 0.05 * span } else { 0.0 })
        }
    }
}

/// Draws `c` into `area`.
pub fn draw<DB: DrawingBackend>(area: &Area<DB>, c: &LineChart) -> Result<()> {
    let t = c.title.as_str();
    let err = draw::plot_err(t);
    let area = draw::title(area, t, t)?;
    let entries: Vec<LegendEntry> = c
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| LegendEntry {
            name: s.name.clone(),
            color: palette::series(i),
            key: Key::Line { dashed: s.dashed },
        })
        .collect();
    let area = draw::with_legend(&area, &entries, c.legend, t)?;

    let n = c.x.len();
    let (x0, x1) = match &c.x {
        XAxis::Labels(_) => (-0.5, n as f64 - 0.5),
        XAxis::Numbers(_) => draw::padded_range((0..n).map(|i| c.x.position(i)), 0.03),
    };
    let (y0, y1) = y_bounds(c);

    let tick = draw::font(draw::TICK);
    let (w, _) = area.dim_in_pixel();
    let y_label_w = [y0, y1, (y0 + y1) / 2.0].iter().map(|v| draw::text_size(&tick, &draw::tick_label(*v)).0).max();
    let y_area = y_label_w.unwrap_or(40) + 24;
    // Category labels: as many as fit side by side.
    let mut x_ticks = n.min(20);
    if let XAxis::Labels(labels) = &c.x {
        let widest = labels.iter().map(|l| draw::text_size(&tick, l).0 + 12).max().unwrap_or(1).max(1);
        let plot_w = w.saturating_sub(y_area + 80);
        x_ticks = ((plot_w / widest) as usize).clamp(1, n);
    }
    let mut chart = ChartBuilder::on(&area)
        .margin_left(12)
        .margin_right(36)
        .margin_top(8)
        .margin_bottom(8)
        .x_label_area_size(if c.x_label.is_empty() { 36 } else { 66 })
        .y_label_area_size(y_area + if c.y_label.is_empty() { 0 } else { 34 })
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(&err)?;
    let x_fmt = |v: &f64| match &c.x {
        XAxis::Labels(labels) => {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        }
        XAxis::Numbers(_) => draw::tick_label(*v),
    };
    let y_fmt = |v: &f64| draw::tick_label(*v);
    chart
        .configure_mesh()
        .x_labels(x_ticks)
        .y_labels(8)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc(c.x_label.as_str())
        .label_style(tick)
        .axis_desc_style(draw::font(draw::LABEL))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(&err)?;
    draw::y_desc(&area, &chart.plotting_area().strip_coord_spec(), &c.y_label, t)?;

    for (i, s) in c.series.iter().enumerate() {
        let color = palette::series(i);
        if let (Some(lo), Some(hi)) = (&s.lower, &s.upper) {
            for run in runs(n, |j| Some((c.x.position(j), lo[j]?, hi[j]?))) {
                let mut poly: Vec<(f64, f64)> = run.iter().map(|p| (p.0, p.2)).collect();
                poly.extend(run.iter().rev().map(|p| (p.0, p.1)));
                chart.draw_series(std::iter::once(Polygon::new(poly, color.mix(0.2).filled()))).map_err(&err)?;
            }
        }
    }
    let plot = chart.plotting_area().strip_coord_spec();
    let base = plot.get_base_pixel();
    let y_px = |y: f64| chart.backend_coord(&(x0, y)).1 - base.1;
    draw::reference_lines(&plot, &c.reference_lines, (y0, y1), y_px, t)?;
    for (i, s) in c.series.iter().enumerate() {
        let color = palette::series(i);
        let style = color.stroke_width(3);
        for run in runs(n, |j| Some((c.x.position(j), s.y[j]?))) {
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(run.clone(), 10, 6, style)).map_err(&err)?;
            } else {
                chart.draw_series(LineSeries::new(run.clone(), style)).map_err(&err)?;
            }
            chart.draw_series(run.iter().map(|&p| Circle::new(p, 5, color.filled()))).map_err(&err)?;
        }
    }
    let y_px = |y: f64| chart.backend_coord(&(x0, y)).1 - base.1;
    draw::reference_labels(&plot, &c.reference_lines, (y0, y1), y_px, t)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{runs, y_bounds};
    use crate::plot::{ChartSpec, LegendPosition, LineChart, LineSeries, ReferenceLine, XAxis};

    fn chart(reference_lines: Vec<ReferenceLine>) -> LineChart {
        LineChart {
            title: "XNLI per layer".into(),
            x_label: "layer".into(),
            y_label: "accuracy (%)".into(),
            x: XAxis::Numbers(vec![0.0, 1.0, 2.0]),
            series: vec![LineSeries {
                name: "ours".into(),
                y: vec![Some(40.0), Some(50.0), Some(45.0)],
                lower: None,
                upper: None,
                dashed: false,
            }],
            y_range: None,
            reference_lines,
            legend: LegendPosition::Bottom,
            size: Some([600, 400]),
        }
    }

    #[test]
    fn reference_lines_widen_the_range_and_are_drawn_dashed_with_their_label() {
        let chance = vec![ReferenceLine { y: 33.3, label: "chance 33.3".into() }];
        let (_, hi) = y_bounds(&chart(vec![]));
        let (_, hi_chance) = y_bounds(&chart(chance.clone()));
        assert!(hi < 55.0 && hi == hi_chance, "{hi} {hi_chance}");
        let mut above = chart(vec![ReferenceLine { y: 80.0, label: "top".into() }]);
        assert!(y_bounds(&above).1 > 80.0, "the reference line must be inside the automatic range");
        above.y_range = Some([20.0, 90.0]);
        assert_eq!(y_bounds(&above), (20.0, 90.0), "an explicit range is kept");
        let svg = crate::plot::render_svg(&ChartSpec::Line(chart(chance.clone())), &[]).unwrap();
        assert!(svg.contains("\nchance 33.3\n"), "label missing");
        // Dashes: many short segments in the reference grey (rgb(70,70,70), stroke width 2).
        let dashes = svg.matches("stroke=\"#464646\"").count();
        assert!(dashes > 20, "only {dashes} reference-grey strokes");
        let without = crate::plot::render_svg(&ChartSpec::Line(chart(vec![])), &[]).unwrap();
        assert_eq!(without.matches("stroke=\"#464646\"").count(), 0);
    }

    #[test]
    fn score_axes_start_at_zero_and_pad_only_away_from_it() {
        // Issue 69: liu-fig8's BLEU-1 axes started at 22, fitted to the data.
        let mut c = chart(vec![]);
        c.series[0].y = vec![Some(22.0), Some(27.0), Some(24.5)];
        let (lo, hi) = y_bounds(&c);
        assert_eq!(lo, 0.0, "a score axis starts at 0");
        assert!(hi > 27.0 && hi < 30.0, "{hi}");
        c.series[0].y = vec![Some(-2.0), Some(-1.0), Some(-3.0)];
        let (lo, hi) = y_bounds(&c);
        assert!(lo < -3.0 && hi == 0.0, "{lo}..{hi}: a negative curve ends at 0");
        c.series[0].y = vec![Some(-2.0), Some(4.0), None];
        let (lo, hi) = y_bounds(&c);
        assert!(lo < -2.0 && hi > 4.0, "{lo}..{hi}");
    }

    #[test]
    fn runs_split_at_gaps() {
        let y = [Some(1), None, Some(2), Some(3), None, None];
        assert_eq!(runs(y.len(), |i| y[i]), vec![vec![1], vec![2, 3]]);
    }
}
