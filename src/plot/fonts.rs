//! Fonts for headless rendering: DejaVu Sans (regular and bold, from the `dejavu` crate, Bitstream Vera /
//! public-domain licence) is compiled into the binary and registered with plotters' `ab_glyph` text
//! renderer under the family names `sans-serif`, `serif` and `monospace`, so PNG text renders on a machine
//! with no system fonts and nothing is downloaded at run time.
//!
//! Coverage: Latin, Greek and Cyrillic. DejaVu has no CJK ideographs and no crate of reasonable size ships a
//! CJK font, so Chinese characters in PNGs are drawn as the font's "missing glyph" box (no error). SVG output
//! names the font family and leaves glyph choice to the viewer, where CJK text renders normally.
use std::sync::OnceLock;

use plotters::style::FontStyle;

use crate::error::{Error, Result};

/// The font family every chart uses.
pub const FAMILY: &str = "sans-serif";

static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();

/// Registers the bundled fonts with plotters (once per process; later calls are free).
pub fn ensure_registered() -> Result<()> {
    REGISTERED
        .get_or_init(|| {
            let faces: [(FontStyle, &'static [u8]); 2] =
                [(FontStyle::Normal, dejavu::sans::regular()), (FontStyle::Bold, dejavu::sans::bold())];
            for family in [FAMILY, "serif", "monospace"] {
                for (style, bytes) in faces {
                    plotters::style::register_font(family, style, bytes).map_err(|_| {
                        format!("bundled DejaVu Sans ({family}, {}) is not a valid font", style.as_str())
                    })?;
                }
            }
            Ok(())
        })
        .clone()
        .map_err(Error::Invalid)
}
