//! Number format strings for printed values (heat-map cells, bar labels, table cells).
//!
//! Grammar: `prefix{spec}suffix` with exactly one placeholder, where `spec` is one of
//! - `` (empty) or `:` — Rust's shortest `Display` of the f64,
//! - `:.N` — fixed with N decimals (`{:.2}` → `0.57`),
//! - `:.Ne` — scientific with N decimals (`{:.1e}` → `5.7e-1`),
//! - `:.N%` — the value × 100, fixed with N decimals, followed by `%` (`{:.1%}` → `57.0%`).
//!
//! `{{` and `}}` outside the placeholder are literal braces.
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Display,
    Fixed(usize),
    Sci(usize),
    Percent(usize),
}

/// A parsed format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberFormat {
    prefix: String,
    style: Style,
    suffix: String,
}

impl NumberFormat {
    /// Parses `prefix{spec}suffix`; `Error::Invalid` when there is not exactly one placeholder or the spec is
    /// not one of the forms in the module documentation.
    pub fn parse(fmt: &str) -> Result<Self> {
        let bad = |why: &str| Error::Invalid(format!("format string '{fmt}': {why}; expected e.g. '{{:.2}}'"));
        let mut prefix = String::new();
        let mut suffix = String::new();
        let mut spec: Option<String> = None;
        let mut chars = fmt.chars().peekable();
        while let Some(c) = chars.next() {
            let out = if spec.is_some() { &mut suffix } else { &mut prefix };
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    out.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    out.push('}');
                }
                '{' => {
                    if spec.is_some() {
                        return Err(bad("more than one placeholder"));
                    }
                    let mut s = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => s.push(c),
                            None => return Err(bad("unclosed '{'")),
                        }
                    }
                    spec = Some(s);
                }
                '}' => return Err(bad("unmatched '}'")),
                c => out.push(c),
            }
        }
        let spec = spec.ok_or_else(|| bad("no placeholder"))?;
        let style = match spec.as_str() {
            "" | ":" => Style::Display,
            s => {
                let digits = s.strip_prefix(":.").ok_or_else(|| bad("unsupported spec"))?;
                let (digits, kind) = match digits.chars().last() {
                    Some('e') => (&digits[..digits.len() - 1], 'e'),
                    Some('%') => (&digits[..digits.len() - 1], '%'),
                    _ => (digits, 'f'),
                };
                let n: usize = digits.parse().map_err(|_| bad("precision is not a number"))?;
                if n > 12 {
                    return Err(bad("precision above 12"));
                }
                match kind {
                    'e' => Style::Sci(n),
                    '%' => Style::Percent(n),
                    _ => Style::Fixed(n),
                }
            }
        };
        Ok(NumberFormat { prefix, style, suffix })
    }

    /// Formats one value.
    pub fn format(&self, v: f64) -> String {
        let body = match self.style {
            Style::Display => format!("{v}"),
            Style::Fixed(n) => format!("{v:.n$}"),
            Style::Sci(n) => format!("{v:.n$e}"),
            Style::Percent(n) => format!("{:.n$}%", v * 100.0),
        };
        format!("{}{}{}", self.prefix, body, self.suffix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_each_style() {
        let f = |s: &str, v: f64| NumberFormat::parse(s).unwrap().format(v);
        assert_eq!(f("{:.2}", 0.5678), "0.57");
        assert_eq!(f("{:.0}", 12.5), "12");
        assert_eq!(f("{}", 0.25), "0.25");
        assert_eq!(f("{:.1e}", 0.000123), "1.2e-4");
        assert_eq!(f("{:.1%}", 0.5678), "56.8%");
        assert_eq!(f("acc {:.1} pts", 64.25), "acc 64.2 pts");
        assert_eq!(f("{{{:.1}}}", 2.0), "{2.0}");
    }

    #[test]
    fn rejects_bad_formats() {
        for s in ["", "{:.2", "{:x}", "{:.a}", "{}{}", "}", "{:.40}"] {
            assert!(NumberFormat::parse(s).is_err(), "{s} should be rejected");
        }
    }
}
