//! Checks on the chart and table specs a script hands to `results::chart` / `results::table`, so a malformed spec
//! fails at the script line that made it rather than at rendering time: the value must deserialize into a
//! [`crate::plot::ChartSpec`] (tagged by `kind`: `line`, `grouped_bars`, `heatmap_table`, `alpha_layer_heatmap`,
//! `schematic`, `panels`; unknown keys rejected) or a [`crate::plot::Table`], and pass its `validate`.
use serde_json::Value;

use crate::error::{Error, Result};
use crate::plot::{ChartSpec, Table};

/// Parses and validates a chart spec.
pub fn check_chart(v: &Value) -> Result<ChartSpec> {
    let spec: ChartSpec = serde_json::from_value(v.clone()).map_err(|e| {
        Error::Invalid(format!(
            "results::chart: {e} (a chart is a map with `kind`: line | grouped_bars | heatmap_table | \
             alpha_layer_heatmap | schematic | panels, and that kind's fields)"
        ))
    })?;
    spec.validate()?;
    Ok(spec)
}

/// Parses and validates a table spec (`title`, `columns`, `rows` of cells, optional `notes`).
pub fn check_table(v: &Value) -> Result<Table> {
    let table: Table = serde_json::from_value(v.clone())
        .map_err(|e| Error::Invalid(format!("results::table: {e} (a table is a map with title, columns, rows)")))?;
    table.validate()?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn specs_are_checked_against_the_plot_types() {
        let ok = json!({"kind": "line", "title": "t", "x": [0.0, 1.0], "series": [{"name": "a", "y": [0.1, 0.2]}]});
        assert!(check_chart(&ok).is_ok());
        let short = json!({"kind": "line", "title": "t", "x": [0.0, 1.0], "series": [{"name": "a", "y": [0.1]}]});
        assert!(check_chart(&short).is_err());
        let unknown = json!({"kind": "line", "title": "t", "x": [0.0], "series": [], "colour": 1});
        assert!(check_chart(&unknown).unwrap_err().to_string().contains("colour"));
        assert!(check_chart(&json!({"title": "t"})).is_err());
        let table = json!({"title": "t", "columns": ["a", "b"], "rows": [["x", {"value": 1.0, "format": "{:.1}"}]]});
        assert!(check_table(&table).is_ok());
        assert!(check_table(&json!({"title": "t", "columns": ["a"], "rows": [["x", "y"]]})).is_err());
    }
}
