//! Drawing helpers shared by the chart kinds: text in the bundled font, titles, legends placed outside the
//! plotting area, and conversion of plotters' errors. Sizes are pixels; every label is at least
//! [`MIN_TEXT`] px high so PNGs stay legible.
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;

use super::fonts::FAMILY;
use crate::error::{Error, Result};

/// A drawing area in pixel coordinates.
pub type Area<DB> = DrawingArea<DB, Shift>;

/// Smallest text size used anywhere (px).
pub const MIN_TEXT: f64 = 14.0;
/// Title text size (px).
pub const TITLE: f64 = 26.0;
/// Axis tick label size (px).
pub const TICK: f64 = 17.0;
/// Axis description and legend text size (px).
pub const LABEL: f64 = 19.0;

/// Converts a plotters error into the library error, naming the chart.
pub fn plot_err<E: std::fmt::Display>(chart: &str) -> impl Fn(E) -> Error + '_ {
    move |e| Error::Invalid(format!("chart '{chart}': drawing failed: {e}"))
}

/// The regular font at `size` px.
pub fn font(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::Name(FAMILY), size, FontStyle::Normal)
}

/// The bold font at `size` px.
pub fn bold(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::Name(FAMILY), size, FontStyle::Bold)
}

/// Width and height of `text` in `f` (px); a rough estimate if the font cannot measure it.
pub fn text_size(f: &FontDesc, text: &str) -> (u32, u32) {
    f.box_size(text).unwrap_or(((text.chars().count() as f64 * f.get_size() * 0.6) as u32, f.get_size() as u32))
}

/// Draws `text` with its anchor `(h, v)` at pixel `pos` of `area`.
pub fn text<DB: DrawingBackend>(
    area: &Area<DB>,
    s: &str,
    pos: (i32, i32),
    f: FontDesc,
    color: RGBColor,
    anchor: (HPos, VPos),
    chart: &str,
) -> Result<()> {
    let style = f.color(&color).pos(Pos::new(anchor.0, anchor.1));
    area.draw_text(s, &style, pos).map_err(plot_err(chart))
}

/// Draws `text` rotated to read bottom-to-top, centred on `pos`.
pub fn vertical_text<DB: DrawingBackend>(
    area: &Area<DB>,
    s: &str,
    pos: (i32, i32),
    f: FontDesc,
    chart: &str,
) -> Result<()> {
    let style = f.transform(FontTransform::Rotate270).color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text(s, &style, pos).map_err(plot_err(chart))
}

/// Draws a bold centred title at the top of `area` and returns the area below it.
pub fn title<DB: DrawingBackend>(area: &Area<DB>, s: &str, chart: &str) -> Result<Area<DB>> {
    let (w, _) = area.dim_in_pixel();
    let f = fit_font(bold(TITLE), s, w.saturating_sub(20));
    let h = f.get_size() as i32 + 24;
    text(area, s, (w as i32 / 2, 12), f, BLACK, (HPos::Center, VPos::Top), chart)?;
    Ok(area.split_vertically(h).1)
}

/// `f`, shrunk (not below [`MIN_TEXT`]) until `s` fits in `width` px.
pub fn fit_font(f: FontDesc<'static>, s: &str, width: u32) -> FontDesc<'static> {
    let mut size = f.get_size();
    while size > MIN_TEXT && text_size(&f.resize(size), s).0 > width {
        size -= 1.0;
    }
    f.resize(size.max(MIN_TEXT))
}

/// How a legend entry's key is drawn.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    Line { dashed: bool },
    Box,
    Diamond,
}

/// One legend entry.
#[derive(Debug, Clone)]
pub struct LegendEntry {
    pub name: String,
    pub color: RGBColor,
    pub key: Key,
}

const KEY_W: i32 = 36;
const ENTRY_GAP: i32 = 28;

fn entry_width(e: &LegendEntry) -> i32 {
    KEY_W + 8 + text_size(&font(LABEL), &e.name).0 as i32
}

/// Rows of entry indices for a legend laid out left to right within `width` px.
fn legend_rows(entries: &[LegendEntry], width: u32) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = vec![];
    let mut used = 0;
    for (i, e) in entries.iter().enumerate() {
        let w = entry_width(e);
        match rows.last_mut() {
            Some(row) if used + ENTRY_GAP + w <= width as i32 => {
                row.push(i);
                used += ENTRY_GAP + w;
            }
            _ => {
                rows.push(vec![i]);
                used = w;
            }
        }
    }
    rows
}

const ROW_H: i32 = 30;

/// Height (px) a bottom legend needs within `width`.
pub fn bottom_legend_height(entries: &[LegendEntry], width: u32) -> u32 {
    if entries.is_empty() {
        return 0;
    }
    (legend_rows(entries, width.saturating_sub(40)).len() as i32 * ROW_H + 16) as u32
}

/// Width (px) a right-hand legend needs.
pub fn right_legend_width(entries: &[LegendEntry]) -> u32 {
    entries.iter().map(entry_width).max().unwrap_or(0) as u32 + 30
}

fn draw_key<DB: DrawingBackend>(area: &Area<DB>, e: &LegendEntry, x: i32, y: i32, chart: &str) -> Result<()> {
    let err = plot_err(chart);
    match e.key {
        Key::Line { dashed } => {
            let style = e.color.stroke_width(3);
            if dashed {
                for k in 0..3 {
                    let x0 = x + k * 13;
                    area.draw(&PathElement::new(vec![(x0, y), (x0 + 8, y)], style)).map_err(&err)?;
                }
            } else {
                area.draw(&PathElement::new(vec![(x, y), (x + KEY_W, y)], style)).map_err(&err)?;
            }
        }
        Key::Box => {
            area.draw(&Rectangle::new([(x + 6, y - 9), (x + KEY_W - 6, y + 9)], e.color.filled())).map_err(&err)?;
        }
        Key::Diamond => diamond(area, (x + KEY_W / 2, y), 8, e.color, chart)?,
    }
    Ok(())
}

/// A filled diamond with a white outline centred at `c` with half-diagonal `r` px.
pub fn diamond<DB: DrawingBackend>(area: &Area<DB>, c: (i32, i32), r: i32, color: RGBColor, chart: &str) -> Result<()> {
    let err = plot_err(chart);
    let outer = vec![(c.0, c.1 - r - 2), (c.0 + r + 2, c.1), (c.0, c.1 + r + 2), (c.0 - r - 2, c.1)];
    let inner = vec![(c.0, c.1 - r), (c.0 + r, c.1), (c.0, c.1 + r), (c.0 - r, c.1)];
    area.draw(&Polygon::new(outer, WHITE.filled())).map_err(&err)?;
    area.draw(&Polygon::new(inner, color.filled())).map_err(&err)
}

/// Draws a legend in centred rows filling `area` (from [`bottom_legend_height`]).
pub fn draw_bottom_legend<DB: DrawingBackend>(area: &Area<DB>, entries: &[LegendEntry], chart: &str) -> Result<()> {
    let (w, _) = area.dim_in_pixel();
    for (r, row) in legend_rows(entries, w.saturating_sub(40)).iter().enumerate() {
        let total: i32 =
            row.iter().map(|&i| entry_width(&entries[i])).sum::<i32>() + ENTRY_GAP * (row.len() as i32 - 1);
        let mut x = (w as i32 - total) / 2;
        let y = 8 + r as i32 * ROW_H + ROW_H / 2;
        for &i in row {
            let e = &entries[i];
            draw_key(area, e, x, y, chart)?;
            text(area, &e.name, (x + KEY_W + 8, y), font(LABEL), BLACK, (HPos::Left, VPos::Center), chart)?;
            x += entry_width(e) + ENTRY_GAP;
        }
    }
    Ok(())
}

/// Draws a legend as one column at the top of `area` (from [`right_legend_width`]).
pub fn draw_right_legend<DB: DrawingBackend>(area: &Area<DB>, entries: &[LegendEntry], chart: &str) -> Result<()> {
    for (i, e) in entries.iter().enumerate() {
        let y = 40 + i as i32 * ROW_H;
        draw_key(area, e, 8, y, chart)?;
        text(area, &e.name, (8 + KEY_W + 8, y), font(LABEL), BLACK, (HPos::Left, VPos::Center), chart)?;
    }
    Ok(())
}

/// Splits off the legend's area (bottom or right) and draws the legend; returns the rest.
pub fn with_legend<DB: DrawingBackend>(
    area: &Area<DB>,
    entries: &[LegendEntry],
    pos: super::spec::LegendPosition,
    chart: &str,
) -> Result<Area<DB>> {
    use super::spec::LegendPosition;
    let (w, h) = area.dim_in_pixel();
    match pos {
        LegendPosition::None => Ok(area.clone()),
        LegendPosition::Bottom => {
            let lh = bottom_legend_height(entries, w);
            let (rest, legend) = area.split_vertically(h.saturating_sub(lh));
            draw_bottom_legend(&legend, entries, chart)?;
            Ok(rest)
        }
        LegendPosition::Right => {
            let lw = right_legend_width(entries);
            let (rest, legend) = area.split_horizontally(w.saturating_sub(lw));
            draw_right_legend(&legend, entries, chart)?;
            Ok(rest)
        }
    }
}

/// Colour of reference lines (chance levels) and their labels: dark grey, apart from every series colour.
pub const REFERENCE_GREY: RGBColor = RGBColor(70, 70, 70);

/// The reference lines whose y lies inside the axis range `(y0, y1)` (either order).
fn visible(
    lines: &[super::spec::ReferenceLine],
    (y0, y1): (f64, f64),
) -> impl Iterator<Item = &super::spec::ReferenceLine> {
    lines.iter().filter(move |l| l.y >= y0.min(y1) && l.y <= y0.max(y1))
}

/// Draws each of `lines` across `plot` (the plotting area, pixel coordinates) as a dashed dark-grey horizontal line
/// at pixel row `y_px(line.y)`. Lines outside the y range `(y0, y1)` are not drawn. Their labels are drawn
/// separately ([`reference_labels`]), after the data, so that no marker covers them.
pub fn reference_lines<DB: DrawingBackend>(
    plot: &Area<DB>,
    lines: &[super::spec::ReferenceLine],
    (y0, y1): (f64, f64),
    y_px: impl Fn(f64) -> i32,
    chart: &str,
) -> Result<()> {
    let err = plot_err(chart);
    let (w, _) = plot.dim_in_pixel();
    let style = REFERENCE_GREY.stroke_width(2);
    for l in visible(lines, (y0, y1)) {
        let y = y_px(l.y);
        let mut x = 0;
        while x < w as i32 {
            let end = (x + 10).min(w as i32);
            plot.draw(&PathElement::new(vec![(x, y), (end, y)], style)).map_err(&err)?;
            x += 16;
        }
    }
    Ok(())
}

/// Draws the label of each of `lines` (those inside `(y0, y1)`, with a label) right-aligned just above its line
/// (below it when the line is at the top edge) on a white patch, so it stays legible over bars and markers.
pub fn reference_labels<DB: DrawingBackend>(
    plot: &Area<DB>,
    lines: &[super::spec::ReferenceLine],
    (y0, y1): (f64, f64),
    y_px: impl Fn(f64) -> i32,
    chart: &str,
) -> Result<()> {
    let (w, _) = plot.dim_in_pixel();
    for l in visible(lines, (y0, y1)).filter(|l| !l.label.is_empty()) {
        let y = y_px(l.y);
        let f = font(MIN_TEXT + 1.0);
        let (tw, th) = text_size(&f, &l.label);
        let (tw, th) = (tw as i32, th as i32);
        let right = w as i32 - 6;
        let above = y - th - 6 >= 0;
        let top = if above { y - th - 5 } else { y + 4 };
        let patch = [(right - tw - 3, top), (right + 2, top + th + 2)];
        plot.draw(&Rectangle::new(patch, WHITE.mix(0.85).filled())).map_err(plot_err(chart))?;
        let (at, v) = if above { ((right, y - 4), VPos::Bottom) } else { ((right, y + 5), VPos::Top) };
        text(plot, &l.label, at, f, REFERENCE_GREY, (HPos::Right, v), chart)?;
    }
    Ok(())
}

/// A tick label for a numeric axis: integers without decimals, others with up to 3 significant decimals.
pub fn tick_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// `[min, max]` of the finite values, padded by `pad` × span on each side; around a constant, a span of 1 that
/// does not cross zero (all-zero percentages get `[0, 0.5]`, not a negative axis).
pub fn padded_range(values: impl Iterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 {
        return if lo >= 0.0 { ((lo - 0.5).max(0.0), hi + 0.5) } else { (lo - 0.5, (hi + 0.5).min(0.0)) };
    }
    let span = hi - lo;
    (lo - pad * span, hi + pad * span)
}

/// Draws the y-axis description `s` rotated, near the left edge of `area`, centred on the plotting area
/// `plot` (a sub-area of `area`).
pub fn y_desc<DB: DrawingBackend>(area: &Area<DB>, plot: &Area<DB>, s: &str, chart: &str) -> Result<()> {
    if s.is_empty() {
        return Ok(());
    }
    let (_, ay) = area.get_base_pixel();
    let (_, py) = plot.get_base_pixel();
    let (_, ph) = plot.dim_in_pixel();
    let f = fit_font(font(LABEL), s, ph);
    vertical_text(area, s, (6 + LABEL as i32 / 2, py - ay + ph as i32 / 2), f, chart)
}

#[cfg(test)]
mod tests {
    use super::padded_range;

    #[test]
    fn padded_range_pads_and_keeps_constants_on_their_side_of_zero() {
        assert_eq!(padded_range([1.0, 3.0].into_iter(), 0.5), (0.0, 4.0));
        assert_eq!(padded_range([0.0, 0.0].into_iter(), 0.1), (0.0, 0.5));
        assert_eq!(padded_range([2.0].into_iter(), 0.1), (1.5, 2.5));
        assert_eq!(padded_range([-0.2].into_iter(), 0.1), (-0.7, 0.0));
        assert_eq!(padded_range([f64::NAN].into_iter(), 0.1), (0.0, 1.0));
    }
}
