//! Rendering a [`ChartSpec`] to `STEM.png` and `STEM.svg`, with an optional footer (lines of text under the
//! chart, [`super::footer`]). Each file is written to a temporary sibling and renamed into place, so a reader never
//! sees a half-written figure. Sizes: the spec's `size`, else 1200 × 800 for curves and bars, a content-derived
//! size for heat maps and schematics, and `columns × rows` panels of `panel_size` (default 800 × 600) plus a title
//! band for [`Panels`](super::spec::Panels); the footer's band is added below that size, never taken from it.
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::draw::{self, Area};
use super::heatmap::Grid;
use super::spec::ChartSpec;
use super::{bars, fonts, footer, heatmap, line, schematic};
use crate::error::{Error, Result};

/// Height of the overall title band of a panel grid (px).
const PANELS_TITLE_H: u32 = 56;

/// The pixel size `spec` renders at.
pub fn size_of(spec: &ChartSpec) -> Result<(u32, u32)> {
    Ok(match spec {
        ChartSpec::Line(c) => c.size.map_or((1200, 800), |s| (s[0], s[1])),
        ChartSpec::GroupedBars(c) => c.size.map_or((1200, 800), |s| (s[0], s[1])),
        ChartSpec::HeatmapTable(c) => match c.size {
            Some(s) => (s[0], s[1]),
            None => Grid::from_table(c)?.natural_size(),
        },
        ChartSpec::AlphaLayerHeatmap(c) => match c.size {
            Some(s) => (s[0], s[1]),
            None => Grid::from_alpha(c)?.natural_size(),
        },
        ChartSpec::Schematic(c) => c.size.map_or_else(|| schematic::natural_size(c), |s| (s[0], s[1])),
        ChartSpec::Panels(p) => {
            let [pw, ph] = match p.panel_size {
                Some(s) => s,
                None => panel_default(&p.charts)?,
            };
            let rows = p.charts.len().div_ceil(p.columns) as u32;
            let cols = p.columns.min(p.charts.len()) as u32;
            (pw * cols, ph * rows + PANELS_TITLE_H)
        }
    })
}

/// The pixel size of the whole image: the chart ([`size_of`]) and below it the band of `footer` (0 px when empty).
/// Call after [`fonts::ensure_registered`], so that the wrapping measures the real font.
pub fn size_with_footer(spec: &ChartSpec, footer: &[String]) -> Result<(u32, u32)> {
    let (w, h) = size_of(spec)?;
    Ok((w, h + footer::height(footer, w)))
}

/// Draws `spec` into the top of `root` (its [`size_of`] height) and `footer` into the band below it.
fn draw_with_footer<DB: DrawingBackend>(root: &Area<DB>, spec: &ChartSpec, footer_lines: &[String]) -> Result<()> {
    let (_, h) = size_of(spec)?;
    let (chart, band) = root.split_vertically(h);
    draw_chart(&chart, spec)?;
    footer::draw(&band, footer_lines, spec.title())
}

/// Default panel size of a grid: 800 × 600, enlarged to the largest size a heat map or schematic needs, or a
/// chart's own `size`.
fn panel_default(charts: &[ChartSpec]) -> Result<[u32; 2]> {
    let mut size = [800, 600];
    for c in charts {
        let own = match c {
            ChartSpec::Line(l) => l.size,
            ChartSpec::GroupedBars(b) => b.size,
            _ => None,
        };
        let (w, h) = match (c, own) {
            (_, Some([w, h])) => (w, h),
            (ChartSpec::Line(_) | ChartSpec::GroupedBars(_), None) => (800, 600),
            _ => size_of(c)?,
        };
        size = [size[0].max(w), size[1].max(h)];
    }
    Ok(size)
}

/// Draws `spec` (already validated) onto `area`, which it fills with white first.
pub fn draw_chart<DB: DrawingBackend>(area: &Area<DB>, spec: &ChartSpec) -> Result<()> {
    area.fill(&WHITE).map_err(draw::plot_err(spec.title()))?;
    match spec {
        ChartSpec::Line(c) => line::draw(area, c),
        ChartSpec::GroupedBars(c) => bars::draw(area, c),
        ChartSpec::HeatmapTable(c) => heatmap::draw(area, &Grid::from_table(c)?),
        ChartSpec::AlphaLayerHeatmap(c) => heatmap::draw(area, &Grid::from_alpha(c)?),
        ChartSpec::Schematic(c) => schematic::draw(area, c),
        ChartSpec::Panels(p) => {
            let t = p.title.as_str();
            let (w, _) = area.dim_in_pixel();
            let (head, body) = area.split_vertically(PANELS_TITLE_H);
            let f = draw::fit_font(draw::bold(draw::TITLE + 2.0), t, w.saturating_sub(20));
            let style = (plotters::style::text_anchor::HPos::Center, plotters::style::text_anchor::VPos::Center);
            draw::text(&head, t, (w as i32 / 2, PANELS_TITLE_H as i32 / 2), f, BLACK, style, t)?;
            let rows = p.charts.len().div_ceil(p.columns);
            let cols = p.columns.min(p.charts.len());
            for (cell, chart) in body.split_evenly((rows, cols)).iter().zip(&p.charts) {
                draw_chart(cell, chart)?;
            }
            Ok(())
        }
    }
}

/// Renders `spec` with `footer` lines under it to an RGB buffer (3 bytes per pixel, row-major):
/// `(width, height, pixels)`.
pub fn render_rgb(spec: &ChartSpec, footer: &[String]) -> Result<(u32, u32, Vec<u8>)> {
    spec.validate()?;
    fonts::ensure_registered()?;
    let (w, h) = size_with_footer(spec, footer)?;
    let mut buf = vec![255u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw_with_footer(&root, spec, footer)?;
        root.present().map_err(draw::plot_err(spec.title()))?;
    }
    Ok((w, h, buf))
}

/// Renders `spec` with `footer` lines under it as an SVG document.
pub fn render_svg(spec: &ChartSpec, footer: &[String]) -> Result<String> {
    spec.validate()?;
    fonts::ensure_registered()?;
    let (w, h) = size_with_footer(spec, footer)?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        draw_with_footer(&root, spec, footer)?;
        root.present().map_err(draw::plot_err(spec.title()))?;
    }
    Ok(svg)
}

fn with_suffix(stem: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = stem.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Writes `spec`, with `footer` lines under it, to `out_stem.png` and `out_stem.svg` (creating the parent folder)
/// and returns both paths. `Error::Invalid` for a spec that fails [`ChartSpec::validate`], `Error::Io` for file
/// failures.
pub fn render(spec: &ChartSpec, footer: &[String], out_stem: &Path) -> Result<Vec<PathBuf>> {
    spec.validate()?;
    if let Some(parent) = out_stem.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let pid = std::process::id();
    let png = with_suffix(out_stem, ".png");
    // The PNG encoder picks the format from the extension, so the temporary name must end in `.png`.
    let png_tmp = with_suffix(out_stem, &format!(".tmp-{pid}.png"));
    fonts::ensure_registered()?;
    let (w, h) = size_with_footer(spec, footer)?;
    let drawn = (|| {
        let root = BitMapBackend::new(&png_tmp, (w, h)).into_drawing_area();
        draw_with_footer(&root, spec, footer)?;
        root.present().map_err(|e| Error::io(&png_tmp, std::io::Error::other(e.to_string())))
    })();
    if let Err(e) = drawn {
        let _ = std::fs::remove_file(&png_tmp);
        return Err(e);
    }
    std::fs::rename(&png_tmp, &png).map_err(|e| Error::io(&png, e))?;

    let svg = with_suffix(out_stem, ".svg");
    let svg_tmp = with_suffix(out_stem, &format!(".tmp-{pid}.svg"));
    std::fs::write(&svg_tmp, render_svg(spec, footer)?).map_err(|e| Error::io(&svg_tmp, e))?;
    std::fs::rename(&svg_tmp, &svg).map_err(|e| Error::io(&svg, e))?;
    Ok(vec![png, svg])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::spec::{HeatmapTable, LineChart, LineSeries, XAxis};

    fn titled(title: &str) -> ChartSpec {
        ChartSpec::Line(LineChart {
            title: title.into(),
            x_label: String::new(),
            y_label: String::new(),
            x: XAxis::Numbers(vec![0.0, 1.0]),
            series: vec![LineSeries {
                name: "s".into(),
                y: vec![Some(0.0), Some(1.0)],
                lower: None,
                upper: None,
                dashed: false,
            }],
            y_range: None,
            reference_lines: vec![],
            legend: crate::plot::LegendPosition::None,
            size: Some([400, 300]),
        })
    }

    /// The pixels of the title band (top 44 rows).
    fn title_band(spec: &ChartSpec) -> Vec<u8> {
        let (w, _, px) = render_rgb(spec, &[]).unwrap();
        px[..w as usize * 44 * 3].to_vec()
    }

    fn dark_pixels(band: &[u8]) -> usize {
        band.chunks(3).filter(|p| p.iter().all(|&c| c < 128)).count()
    }

    #[test]
    fn bundled_font_draws_title_text_headless() {
        // Without a registered font plotters' ab_glyph renderer refuses to draw text, so this fails.
        let band = title_band(&titled("Layer-wise alignment"));
        let dark = dark_pixels(&band);
        assert!(dark > 300, "only {dark} dark pixels in the title band: no text drawn");
        assert_eq!(dark_pixels(&title_band(&titled(""))), 0, "an empty title must leave the band blank");
    }

    #[test]
    fn cyrillic_glyphs_are_real_and_cjk_does_not_fail() {
        // Missing glyphs would all be the same box, so two different Cyrillic strings would look alike.
        let (a, b) = (title_band(&titled("ЖЖЖ")), title_band(&titled("ЩЩЩ")));
        assert!(dark_pixels(&a) > 50 && dark_pixels(&b) > 50);
        assert_ne!(a, b, "Cyrillic letters rendered identically: font lacks Cyrillic");
        assert!(dark_pixels(&title_band(&titled("中文 zh"))) > 50);
    }

    #[test]
    fn heatmap_numbers_are_drawn_in_contrasting_colour() {
        let spec = ChartSpec::HeatmapTable(HeatmapTable {
            title: "t".into(),
            row_label: String::new(),
            col_label: String::new(),
            rows: vec!["a".into()],
            cols: vec!["lo".into(), "hi".into()],
            values: vec![vec![Some(0.0), Some(1.0)]],
            format: "{:.2}".into(),
            color: crate::plot::ColorScale::Viridis,
            range: None,
            colorbar: false,
            size: None,
        });
        let (w, h, px) = render_rgb(&spec, &[]).unwrap();
        let count = |rgb: [u8; 3]| px.chunks(3).filter(|p| *p == rgb).count();
        // Dark purple (0.0) cell carries white text, yellow (1.0) cell black text.
        assert!(count([68, 1, 84]) > 1000 && count([253, 231, 37]) > 1000, "{w}×{h}");
        assert!(count([255, 255, 255]) > 0 && count([0, 0, 0]) > 0);
    }

    #[test]
    fn render_writes_both_files_atomically_and_rejects_bad_specs() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("nested/fig.v2");
        let paths = render(&titled("x"), &[], &stem).unwrap();
        assert_eq!(paths, vec![dir.path().join("nested/fig.v2.png"), dir.path().join("nested/fig.v2.svg")]);
        let bad = ChartSpec::Line(LineChart {
            x: XAxis::Numbers(vec![]),
            ..match titled("bad") {
                ChartSpec::Line(c) => c,
                _ => unreachable!(),
            }
        });
        assert!(matches!(render(&bad, &[], &dir.path().join("bad")), Err(Error::Invalid(_))));
        assert!(!dir.path().join("bad.png").exists());
        let names: Vec<_> =
            std::fs::read_dir(dir.path().join("nested")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn footer_goes_in_a_band_below_the_chart_and_into_the_svg() {
        let footer = vec!["scale cpu · seeds 0, 1, 2".to_string(), "2 substitutions: see the caption".to_string()];
        let spec = titled("x");
        let (w, h, px) = render_rgb(&spec, &footer).unwrap();
        let band = footer::height(&footer, w);
        assert!(band > 40, "{band}");
        assert_eq!((w, h), (400, 300 + band));
        // The chart's pixels are those of the chart without a footer; the footer band below them holds text.
        let (_, _, bare) = render_rgb(&spec, &[]).unwrap();
        let chart_bytes = w as usize * 300 * 3;
        assert_eq!(px[..chart_bytes], bare[..], "the footer changed the chart above it");
        let grey = px[chart_bytes..].chunks(3).filter(|p| p[0] < 160 && p[0] == p[1] && p[1] == p[2]).count();
        assert!(grey > 200, "only {grey} dark grey pixels in the footer band: no text drawn");
        let svg = render_svg(&spec, &footer).unwrap();
        assert!(svg.contains("scale cpu · seeds 0, 1, 2") && svg.contains("2 substitutions: see the caption"));
        assert!(svg.contains(&format!("height=\"{}\"", 300 + band)), "{}", &svg[..200]);
    }

    #[test]
    fn sizes_follow_spec_and_panel_grid() {
        assert_eq!(size_of(&titled("x")).unwrap(), (400, 300));
        let p = ChartSpec::Panels(crate::plot::Panels {
            title: "p".into(),
            columns: 2,
            charts: vec![titled("a"), titled("b"), titled("c")],
            panel_size: None,
        });
        assert_eq!(size_of(&p).unwrap(), (1600, 1200 + PANELS_TITLE_H));
    }
}
