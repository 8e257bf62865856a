//! Figures and tables from result records: serde chart specs ([`spec`]) rendered to PNG and SVG with
//! `plotters` ([`render`]), and tables rendered to Markdown and CSV ([`table`]). A figure's JSON record holds
//! its spec, so `crossling plot ID` re-renders it without recomputing; a footer of a few lines from the record
//! (scale, models, seeds, substitutions; [`footer`]) goes under every chart. Text uses a font compiled into the
//! binary ([`fonts`]), so rendering works on a headless machine with no fonts installed.
mod bars;
mod draw;
pub mod fonts;
pub mod footer;
pub mod format;
#[cfg(test)]
mod gallery;
mod heatmap;
mod line;
pub mod palette;
pub mod render;
mod schematic;
pub mod spec;
pub mod table;

pub use render::{render, render_rgb, render_svg};
pub use spec::{
    AlphaLayerHeatmap, BarSeries, Best, ChartSpec, ColorScale, GroupedBars, HeatmapTable, LegendPosition, LineChart,
    LineSeries, Panels, ReferenceLine, Schematic, SchematicLink, SchematicPanel, XAxis,
};
pub use table::{Cell, Table};
