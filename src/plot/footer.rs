//! The footer under a rendered chart: a few small grey lines (scale, model shape and pre-training tokens, seeds,
//! substitutions; the text comes from the figure's record, [`crate::report::render::footer`]) in a band of its own
//! below the chart, separated from it by a thin rule, so it never overlaps the plot. Lines longer than the image is
//! wide are wrapped at spaces (a word wider than the image is left to overflow rather than cut).
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{self, Area};
use crate::error::Result;

/// Footer text size (px): the smallest text of any chart.
pub const TEXT: f64 = draw::MIN_TEXT;
/// Height of one footer line (px).
const LINE_H: u32 = 19;
/// Space above the first line (below the rule) and below the last (px).
const PAD_TOP: u32 = 9;
const PAD_BOTTOM: u32 = 7;
/// Left and right margin of the text (px).
const MARGIN: u32 = 12;
/// Colour of the footer text: dark grey, legible but quieter than the chart.
const GREY: RGBColor = RGBColor(85, 85, 85);

/// `lines` wrapped at spaces so that each fits in `width` px at the footer's text size.
pub fn wrap(lines: &[String], width: u32) -> Vec<String> {
    let f = draw::font(TEXT);
    let room = width.saturating_sub(2 * MARGIN);
    let mut out = Vec::new();
    for line in lines {
        let mut cur = String::new();
        for word in line.split(' ') {
            let candidate = if cur.is_empty() { word.to_string() } else { format!("{cur} {word}") };
            if !cur.is_empty() && draw::text_size(&f, &candidate).0 > room {
                out.push(std::mem::take(&mut cur));
                cur = word.to_string();
            } else {
                cur = candidate;
            }
        }
        out.push(cur);
    }
    out
}

/// Height (px) of the footer band for `lines` in an image `width` px wide; 0 when there are no lines.
pub fn height(lines: &[String], width: u32) -> u32 {
    if lines.is_empty() {
        return 0;
    }
    PAD_TOP + wrap(lines, width).len() as u32 * LINE_H + PAD_BOTTOM
}

/// Draws `lines` into `area` (the band of [`height`] px below the chart): a thin rule at the top, then the text.
pub fn draw<DB: DrawingBackend>(area: &Area<DB>, lines: &[String], chart: &str) -> Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let (w, _) = area.dim_in_pixel();
    area.fill(&WHITE).map_err(draw::plot_err(chart))?;
    let rule = vec![(MARGIN as i32, 1), ((w - MARGIN.min(w)) as i32, 1)];
    area.draw(&PathElement::new(rule, RGBColor(200, 200, 200).stroke_width(1))).map_err(draw::plot_err(chart))?;
    for (i, line) in wrap(lines, w).iter().enumerate() {
        let y = (PAD_TOP + i as u32 * LINE_H + LINE_H / 2) as i32;
        draw::text(area, line, (MARGIN as i32, y), draw::font(TEXT), GREY, (HPos::Left, VPos::Center), chart)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_at_spaces_and_the_band_grows_with_them() {
        crate::plot::fonts::ensure_registered().unwrap();
        let short = vec!["scale cpu · seed 0".to_string()];
        assert_eq!(wrap(&short, 1200), short);
        assert_eq!(height(&short, 1200), PAD_TOP + LINE_H + PAD_BOTTOM);
        assert_eq!(height(&[], 1200), 0);
        let long = vec![["substitution"; 40].join(" ")];
        let wrapped = wrap(&long, 600);
        assert!(wrapped.len() >= 3, "{wrapped:?}");
        assert_eq!(wrapped.join(" "), long[0], "wrapping must only split at spaces");
        let f = draw::font(TEXT);
        assert!(wrapped.iter().all(|l| draw::text_size(&f, l).0 <= 600 - 2 * MARGIN));
        assert_eq!(height(&long, 600), PAD_TOP + wrapped.len() as u32 * LINE_H + PAD_BOTTOM);
    }
}
