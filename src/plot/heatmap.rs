//! Heat maps with numbers: a rows × columns grid whose cells are coloured by value (linear map of
//! `[min, max]` onto a colour scale) with the value printed in a contrasting colour; blank cells for missing
//! values; an optional colour bar and an outlined "best" cell. Used for the cross-lingual transfer tables and
//! for Liu et al.'s (2020) α × layer grids of the mean-difference shift (Figs. 7–8).
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{self, Area};
use super::format::NumberFormat;
use super::palette;
use super::spec::{AlphaLayerHeatmap, Best, ColorScale, HeatmapTable};
use crate::error::Result;

/// Everything a grid needs, whichever spec it came from.
pub struct Grid<'a> {
    pub title: &'a str,
    pub row_label: &'a str,
    pub col_label: &'a str,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub values: &'a [Vec<Option<f64>>],
    pub format: NumberFormat,
    pub show_numbers: bool,
    pub color: ColorScale,
    pub range: Option<[f64; 2]>,
    pub colorbar: bool,
    pub colorbar_label: &'a str,
    pub best: Best,
}

impl<'a> Grid<'a> {
    pub fn from_table(c: &'a HeatmapTable) -> Result<Self> {
        Ok(Grid {
            title: &c.title,
            row_label: &c.row_label,
            col_label: &c.col_label,
            rows: c.rows.clone(),
            cols: c.cols.clone(),
            values: &c.values,
            format: NumberFormat::parse(&c.format)?,
            show_numbers: true,
            color: c.color,
            range: c.range,
            colorbar: c.colorbar,
            colorbar_label: "",
            best: Best::None,
        })
    }

    pub fn from_alpha(c: &'a AlphaLayerHeatmap) -> Result<Self> {
        Ok(Grid {
            title: &c.title,
            row_label: "α",
            col_label: "layer",
            rows: c.alphas.iter().map(|a| draw::tick_label(*a)).collect(),
            cols: c.layers.clone(),
            values: &c.values,
            format: NumberFormat::parse(&c.format)?,
            show_numbers: c.show_numbers,
            color: c.color,
            range: c.range,
            colorbar: true,
            colorbar_label: &c.value_label,
            best: c.best,
        })
    }

    fn value_range(&self) -> (f64, f64) {
        match self.range {
            Some([lo, hi]) => (lo, hi),
            None => draw::padded_range(self.values.iter().flatten().flatten().copied(), 0.0),
        }
    }

    fn best_cell(&self) -> Option<(usize, usize)> {
        let sign = match self.best {
            Best::Max => 1.0,
            Best::Min => -1.0,
            Best::None => return None,
        };
        let mut best: Option<(usize, usize, f64)> = None;
        for (r, row) in self.values.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                if let Some(v) = v {
                    if best.is_none_or(|b| sign * v > sign * b.2) {
                        best = Some((r, c, *v));
                    }
                }
            }
        }
        best.map(|b| (b.0, b.1))
    }

    /// The widest printed number (px) at `size`.
    fn widest_number(&self, size: f64) -> u32 {
        let f = draw::font(size);
        self.values
            .iter()
            .flatten()
            .flatten()
            .map(|v| draw::text_size(&f, &self.format.format(*v)).0)
            .max()
            .unwrap_or(0)
    }

    /// A size at which every cell's number fits at a comfortable text size.
    pub fn natural_size(&self) -> (u32, u32) {
        let tick = draw::font(draw::TICK);
        let row_w = self.rows.iter().map(|r| draw::text_size(&tick, r).0).max().unwrap_or(0) + 40;
        let col_w = self.cols.iter().map(|c| draw::text_size(&tick, c).0).max().unwrap_or(0) + 16;
        let cell_w = (self.widest_number(18.0) + 24).max(col_w).max(64);
        let cell_h = 46;
        let bar = if self.colorbar { 150 } else { 0 };
        let title_w = draw::text_size(&draw::bold(draw::TITLE), self.title).0 + 40;
        let w = (row_w + self.cols.len() as u32 * cell_w + bar + 40).max(title_w).max(600);
        let h = 70 + 70 + self.rows.len() as u32 * cell_h + 30;
        (w.min(10_000), h.clamp(300, 10_000))
    }
}

/// Draws `g` into `area`.
pub fn draw<DB: DrawingBackend>(area: &Area<DB>, g: &Grid) -> Result<()> {
    let t = g.title;
    let err = draw::plot_err(t);
    let area = draw::title(area, t, t)?;
    let (w, h) = area.dim_in_pixel();
    let tick = draw::font(draw::TICK);
    let label = draw::font(draw::LABEL);
    let (n_r, n_c) = (g.rows.len() as i32, g.cols.len() as i32);

    let row_w = g.rows.iter().map(|r| draw::text_size(&tick, r).0).max().unwrap_or(0) as i32 + 24;
    let row_w = row_w.max(draw::text_size(&label, g.row_label).0 as i32 + 12);
    let bar_w = if g.colorbar { 150 } else { 0 };
    let grid_w = (w as i32 - row_w - bar_w - 20).max(n_c);
    let cell_w = grid_w / n_c;
    let col_widest = g.cols.iter().map(|c| draw::text_size(&tick, c).0).max().unwrap_or(0) as i32;
    let rotate_cols = col_widest > cell_w - 6;
    let top = if g.col_label.is_empty() { 0 } else { 30 } + if rotate_cols { col_widest + 16 } else { 32 };
    let cell_h = ((h as i32 - top - 16) / n_r).max(1);
    let (x0, y0) = (row_w, top);

    // Column caption and labels.
    if !g.col_label.is_empty() {
        let cx = x0 + cell_w * n_c / 2;
        draw::text(&area, g.col_label, (cx, 2), label.clone(), BLACK, (HPos::Center, VPos::Top), t)?;
    }
    for (c, name) in g.cols.iter().enumerate() {
        let cx = x0 + cell_w * c as i32 + cell_w / 2;
        if rotate_cols {
            let tw = draw::text_size(&tick, name).0 as i32;
            draw::vertical_text(&area, name, (cx, y0 - 8 - tw / 2), tick.clone(), t)?;
        } else {
            draw::text(&area, name, (cx, y0 - 8), tick.clone(), BLACK, (HPos::Center, VPos::Bottom), t)?;
        }
    }
    if !g.row_label.is_empty() {
        draw::text(&area, g.row_label, (row_w / 2, y0 - 8), label.clone(), BLACK, (HPos::Center, VPos::Bottom), t)?;
    }
    for (r, name) in g.rows.iter().enumerate() {
        let cy = y0 + cell_h * r as i32 + cell_h / 2;
        draw::text(&area, name, (row_w - 12, cy), tick.clone(), BLACK, (HPos::Right, VPos::Center), t)?;
    }

    // Cells.
    let (lo, hi) = g.value_range();
    let span = if hi > lo { hi - lo } else { 1.0 };
    let number_size = {
        let mut s = (cell_h as f64 * 0.42).clamp(draw::MIN_TEXT, 20.0);
        while s > draw::MIN_TEXT && g.widest_number(s) as i32 > cell_w - 16 {
            s -= 1.0;
        }
        s
    };
    for (r, row) in g.values.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            let (cx, cy) = (x0 + cell_w * c as i32, y0 + cell_h * r as i32);
            let rect = [(cx, cy), (cx + cell_w, cy + cell_h)];
            match v {
                Some(v) => {
                    let bg = palette::scale(g.color, (v - lo) / span);
                    area.draw(&Rectangle::new(rect, bg.filled())).map_err(&err)?;
                    if g.show_numbers {
                        let s = g.format.format(*v);
                        let pos = (cx + cell_w / 2, cy + cell_h / 2);
                        let f = draw::font(number_size);
                        draw::text(&area, &s, pos, f, palette::text_on(bg), (HPos::Center, VPos::Center), t)?;
                    }
                }
                None => area.draw(&Rectangle::new(rect, WHITE.filled())).map_err(&err)?,
            }
            area.draw(&Rectangle::new(rect, RGBColor(255, 255, 255).stroke_width(1))).map_err(&err)?;
        }
    }
    area.draw(&Rectangle::new([(x0, y0), (x0 + cell_w * n_c, y0 + cell_h * n_r)], RGBColor(120, 120, 120)))
        .map_err(&err)?;
    if let Some((r, c)) = g.best_cell() {
        let (cx, cy) = (x0 + cell_w * c as i32, y0 + cell_h * r as i32);
        area.draw(&Rectangle::new([(cx + 1, cy + 1), (cx + cell_w - 1, cy + cell_h - 1)], RED.stroke_width(4)))
            .map_err(&err)?;
    }

    if g.colorbar {
        let bx = x0 + cell_w * n_c + 30;
        let (by0, by1) = (y0, y0 + cell_h * n_r);
        let steps = (by1 - by0).max(1);
        for k in 0..steps {
            let frac = 1.0 - k as f64 / steps as f64;
            let color = palette::scale(g.color, frac);
            area.draw(&Rectangle::new([(bx, by0 + k), (bx + 24, by0 + k + 1)], color.filled())).map_err(&err)?;
        }
        area.draw(&Rectangle::new([(bx, by0), (bx + 24, by1)], RGBColor(120, 120, 120))).map_err(&err)?;
        let n_ticks = if steps > 160 { 5 } else { 3 };
        let mut label_x = bx + 34;
        for k in 0..n_ticks {
            let frac = k as f64 / (n_ticks - 1) as f64;
            let y = by1 - (frac * (by1 - by0) as f64).round() as i32;
            area.draw(&PathElement::new(vec![(bx + 24, y), (bx + 30, y)], BLACK)).map_err(&err)?;
            let s = g.format.format(lo + frac * (hi - lo));
            draw::text(&area, &s, (bx + 34, y), tick.clone(), BLACK, (HPos::Left, VPos::Center), t)?;
            label_x = label_x.max(bx + 34 + draw::text_size(&tick, &s).0 as i32);
        }
        if !g.colorbar_label.is_empty() {
            let f = draw::fit_font(label.clone(), g.colorbar_label, (by1 - by0).max(0) as u32);
            draw::vertical_text(&area, g.colorbar_label, (label_x + 20, (by0 + by1) / 2), f, t)?;
        }
    }
    Ok(())
}
