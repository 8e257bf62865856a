//! Colours: the Okabe–Ito categorical palette (Okabe & Ito 2008, "Color Universal Design"), distinguishable
//! under the common colour-vision deficiencies, and continuous scales for heat maps: viridis (van der Walt &
//! Smith, matplotlib), a white-to-blue ramp and a blue–white–red diverging ramp (ColorBrewer RdBu), each
//! linearly interpolated between anchor colours.
use plotters::style::RGBColor;

use super::spec::ColorScale;

/// Series colours in order of use (Okabe–Ito, reordered so the first ones contrast most on white; yellow,
/// which is faint on white, comes last). Series beyond 8 reuse the palette.
pub const SERIES: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// The colour of series `i`.
pub fn series(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 45, 123),
    (59, 82, 139),
    (44, 114, 142),
    (33, 145, 140),
    (40, 174, 128),
    (94, 201, 98),
    (173, 220, 48),
    (253, 231, 37),
];
const BLUES: [(u8, u8, u8); 5] = [(247, 251, 255), (198, 219, 239), (107, 174, 214), (33, 113, 181), (8, 48, 107)];
const RED_BLUE: [(u8, u8, u8); 7] =
    [(33, 102, 172), (103, 169, 207), (209, 229, 240), (247, 247, 247), (253, 219, 199), (239, 138, 98), (178, 24, 43)];

/// The colour of `t ∈ [0, 1]` (clamped) on `scale`.
pub fn scale(scale: ColorScale, t: f64) -> RGBColor {
    let anchors: &[(u8, u8, u8)] = match scale {
        ColorScale::Viridis => &VIRIDIS,
        ColorScale::Blues => &BLUES,
        ColorScale::RedBlue => &RED_BLUE,
    };
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let pos = t * (anchors.len() - 1) as f64;
    let i = (pos.floor() as usize).min(anchors.len() - 2);
    let f = pos - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (anchors[i], anchors[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Black or white, whichever reads better on `bg` (by relative luminance, ITU-R BT.709 weights).
pub fn text_on(bg: RGBColor) -> RGBColor {
    let lum = 0.2126 * bg.0 as f64 + 0.7152 * bg.1 as f64 + 0.0722 * bg.2 as f64;
    if lum > 140.0 {
        RGBColor(0, 0, 0)
    } else {
        RGBColor(255, 255, 255)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_hits_its_anchors_and_clamps() {
        assert_eq!(scale(ColorScale::Viridis, 0.0), RGBColor(68, 1, 84));
        assert_eq!(scale(ColorScale::Viridis, 1.0), RGBColor(253, 231, 37));
        assert_eq!(scale(ColorScale::Viridis, 7.0), RGBColor(253, 231, 37));
        assert_eq!(scale(ColorScale::RedBlue, 0.5), RGBColor(247, 247, 247));
        assert_eq!(scale(ColorScale::Blues, f64::NAN), RGBColor(247, 251, 255));
    }

    #[test]
    fn text_contrasts_with_background() {
        assert_eq!(text_on(RGBColor(68, 1, 84)), RGBColor(255, 255, 255));
        assert_eq!(text_on(RGBColor(253, 231, 37)), RGBColor(0, 0, 0));
    }
}
