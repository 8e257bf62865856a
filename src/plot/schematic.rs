//! Architecture schematics after Wu, Conneau et al. (2020), Figs. 1–2: for each model configuration a stack
//! of boxes (embeddings at the bottom, transformer layers 1..L, softmax on top) over two language columns. A
//! shared part is one box spanning both columns, a language-specific part one box per column. An optional
//! arrow between the columns at one level marks Fig. 2's probe: a linear map W between the same layer of two
//! monolingual models.
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{self, Area, Key, LegendEntry};
use super::spec::{Schematic, SchematicPanel};
use crate::error::Result;

const SHARED_FILL: RGBColor = RGBColor(204, 226, 242);
const SHARED_EDGE: RGBColor = RGBColor(0, 114, 178);
const SEPARATE_FILL: RGBColor = RGBColor(253, 228, 190);
const SEPARATE_EDGE: RGBColor = RGBColor(213, 94, 0);

/// `(label, short label, shared)` of each level, bottom to top.
fn levels(p: &SchematicPanel) -> Vec<(String, String, bool)> {
    let mut out = vec![("Embeddings".to_string(), "Emb".to_string(), p.embeddings_shared)];
    for (i, s) in p.layers_shared.iter().enumerate() {
        out.push((format!("Layer {}", i + 1), format!("L{}", i + 1), *s));
    }
    out.push(("Softmax".to_string(), "Soft".to_string(), p.softmax_shared));
    out
}

/// A size that fits `c`'s panels side by side.
pub fn natural_size(c: &Schematic) -> (u32, u32) {
    let n_levels = c.panels.first().map_or(2, |p| p.layers_shared.len() + 2) as u32;
    let w = (c.panels.len() as u32 * 300 + 60).max(700);
    let h = 70 + n_levels * 52 + 150;
    (w.min(10_000), h.min(10_000))
}

fn boxed<DB: DrawingBackend>(
    area: &Area<DB>,
    rect: [(i32, i32); 2],
    labels: (&str, &str),
    shared: bool,
    chart: &str,
) -> Result<()> {
    let err = draw::plot_err(chart);
    let (fill, edge) = if shared { (SHARED_FILL, SHARED_EDGE) } else { (SEPARATE_FILL, SEPARATE_EDGE) };
    area.draw(&Rectangle::new(rect, fill.filled())).map_err(&err)?;
    area.draw(&Rectangle::new(rect, edge.stroke_width(2))).map_err(&err)?;
    let (bw, bh) = (rect[1].0 - rect[0].0, rect[1].1 - rect[0].1);
    let size = (bh as f64 * 0.55).clamp(draw::MIN_TEXT, 18.0);
    let f = draw::font(size);
    let s = if draw::text_size(&f, labels.0).0 as i32 <= bw - 8 { labels.0 } else { labels.1 };
    let centre = (rect[0].0 + bw / 2, rect[0].1 + bh / 2);
    draw::text(area, s, centre, f, BLACK, (HPos::Center, VPos::Center), chart)
}

fn arrow<DB: DrawingBackend>(area: &Area<DB>, from: (i32, i32), to: (i32, i32), chart: &str) -> Result<()> {
    let err = draw::plot_err(chart);
    area.draw(&PathElement::new(vec![from, (to.0 - 10, to.1)], BLACK.stroke_width(2))).map_err(&err)?;
    let head = vec![(to.0, to.1), (to.0 - 12, to.1 - 6), (to.0 - 12, to.1 + 6)];
    area.draw(&Polygon::new(head, BLACK.filled())).map_err(&err)
}

fn draw_panel<DB: DrawingBackend>(area: &Area<DB>, c: &Schematic, p: &SchematicPanel) -> Result<()> {
    let t = c.title.as_str();
    let err = draw::plot_err(t);
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let caption = draw::fit_font(draw::bold(draw::LABEL), &p.title, w as u32 - 8);
    draw::text(area, &p.title, (w / 2, h - 6), caption, BLACK, (HPos::Center, VPos::Bottom), t)?;
    let stack_x0 = (w as f64 * 0.08) as i32;
    let stack_w = (w as f64 * 0.84) as i32;
    let gap = if p.link.is_some() { (stack_w as f64 * 0.36) as i32 } else { (stack_w as f64 * 0.08) as i32 };
    let col_w = (stack_w - gap) / 2;
    let cols = [(stack_x0, stack_x0 + col_w), (stack_x0 + col_w + gap, stack_x0 + stack_w)];
    let bottom = h - 70;
    let lv = levels(p);
    let level_h = ((bottom - 8) / lv.len() as i32).max(4);
    let box_h = (level_h as f64 * 0.72) as i32;
    let level_rect = |k: usize, col: Option<usize>| {
        let y1 = bottom - level_h * k as i32 - (level_h - box_h) / 2;
        let (x0, x1) = match col {
            Some(i) => cols[i],
            None => (cols[0].0, cols[1].1),
        };
        [(x0, y1 - box_h), (x1, y1)]
    };
    for (k, (label, short, shared)) in lv.iter().enumerate() {
        if k > 0 {
            for col in cols {
                let x = (col.0 + col.1) / 2;
                let (top_prev, bottom_this) = (level_rect(k - 1, Some(0))[0].1, level_rect(k, Some(0))[1].1);
                area.draw(&PathElement::new(vec![(x, top_prev), (x, bottom_this)], RGBColor(90, 90, 90)))
                    .map_err(&err)?;
            }
        }
        if *shared {
            boxed(area, level_rect(k, None), (label, short), true, t)?;
        } else {
            for i in 0..2 {
                boxed(area, level_rect(k, Some(i)), (label, short), false, t)?;
            }
        }
    }
    for (i, lang) in c.languages.iter().enumerate() {
        let x = (cols[i].0 + cols[i].1) / 2;
        draw::text(area, lang, (x, bottom + 6), draw::font(draw::LABEL), BLACK, (HPos::Center, VPos::Top), t)?;
    }
    if let Some(link) = &p.link {
        let r = level_rect(link.level, Some(0));
        let y = (r[0].1 + r[1].1) / 2;
        arrow(area, (cols[0].1 + 4, y), (cols[1].0 - 4, y), t)?;
        let f = draw::fit_font(draw::font(draw::LABEL), &link.label, (gap + col_w) as u32);
        let mid = (cols[0].1 + cols[1].0) / 2;
        draw::text(area, &link.label, (mid, r[0].1 - 4), f, BLACK, (HPos::Center, VPos::Bottom), t)?;
    }
    Ok(())
}

/// Draws `c` into `area`.
pub fn draw<DB: DrawingBackend>(area: &Area<DB>, c: &Schematic) -> Result<()> {
    let t = c.title.as_str();
    let area = draw::title(area, t, t)?;
    let any = |shared: bool| {
        c.panels
            .iter()
            .any(|p| p.embeddings_shared == shared || p.softmax_shared == shared || p.layers_shared.contains(&shared))
    };
    let mut entries = vec![];
    if any(true) {
        entries.push(LegendEntry { name: "shared by both languages".into(), color: SHARED_EDGE, key: Key::Box });
    }
    if any(false) {
        entries.push(LegendEntry { name: "language-specific".into(), color: SEPARATE_EDGE, key: Key::Box });
    }
    let area = draw::with_legend(&area, &entries, super::spec::LegendPosition::Bottom, t)?;
    for (panel_area, p) in area.split_evenly((1, c.panels.len())).iter().zip(&c.panels) {
        draw_panel(panel_area, c, p)?;
    }
    Ok(())
}
