//! Checks on the chart and table specs a script hands to `results::chart` / `results::table`, so a malformed spec
//! fails at the script line that made it rather than at rendering time.
use serde_json::Value;

use crate::error::{Error, Result};

/// A chart spec must be a map with a `kind`.
pub fn check_chart(v: &Value) -> Result<()> {
    match v.get("kind").and_then(Value::as_str) {
        Some(_) => Ok(()),
        None => Err(Error::Invalid("results::chart: expected a map with a `kind` (e.g. \"Line\")".into())),
    }
}

/// A table spec must be a map with `columns` and `rows`.
pub fn check_table(v: &Value) -> Result<()> {
    if v.get("columns").and_then(Value::as_array).is_some() && v.get("rows").and_then(Value::as_array).is_some() {
        Ok(())
    } else {
        Err(Error::Invalid("results::table: expected a map with `columns` and `rows` arrays".into()))
    }
}
