//! Embedding normalization, applied as an ordered list of steps (rows are vectors, `[n, d]`):
//! - `Center`: subtract the column mean (the mean vector);
//! - `UnitLength`: divide each row by its L2 norm (zero rows are left at zero);
//! - `IterativeNormalization { rounds }`: Zhang, Lapata, Wei & Zhou (2019), "Girls and Boys are Different? …
//!   Iterative Normalization" (ACL) — repeat *unit length, then centre* `rounds` times (default 5), which drives
//!   the embeddings towards both unit norm and zero mean, the two conditions under which orthogonal Procrustes is
//!   well posed. Wu, Conneau et al. (2020) apply it before aligning monolingual models.
//!
//! [`apply`] returns the [`Residual`] after the last step: `max |‖xᵢ‖ − 1|` and `max |mean_j|`, computed in f64.
//! A list serialises as e.g. `[{"step":"center"},{"step":"iterative_normalization","rounds":5}]`, and parses from
//! the CLI spelling `center,unit,iter` (`iter:N` for N rounds).
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use tch::{Kind, Tensor};

fn default_rounds() -> usize {
    5
}

/// One normalization step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case", deny_unknown_fields)]
pub enum NormStep {
    Center,
    UnitLength,
    IterativeNormalization {
        #[serde(default = "default_rounds")]
        rounds: usize,
    },
}

/// An ordered list of steps.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Normalization(pub Vec<NormStep>);

/// How far the result is from unit norm and zero mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Residual {
    /// `max_i |‖xᵢ‖ − 1|`.
    pub max_norm_error: f64,
    /// `max_j |mean_j|` over dimensions.
    pub max_abs_mean: f64,
}

impl FromStr for NormStep {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        match s {
            "center" | "centre" => Ok(NormStep::Center),
            "unit" | "unit_length" => Ok(NormStep::UnitLength),
            "iter" | "iterative" => Ok(NormStep::IterativeNormalization { rounds: default_rounds() }),
            _ => match s.split_once(':') {
                Some(("iter" | "iterative", n)) => match n.parse::<usize>() {
                    Ok(rounds) if rounds > 0 => Ok(NormStep::IterativeNormalization { rounds }),
                    _ => Err(Error::Invalid(format!("normalization step '{s}': rounds must be a positive integer"))),
                },
                _ => Err(Error::Invalid(format!(
                    "unknown normalization step '{s}'; expected center, unit, iter or iter:N"
                ))),
            },
        }
    }
}

impl FromStr for Normalization {
    type Err = Error;
    /// `center,unit,iter:5`; the empty string and `none` are the empty list.
    fn from_str(s: &str) -> Result<Self> {
        if s.trim().is_empty() || s.trim() == "none" {
            return Ok(Normalization::default());
        }
        s.split(',').map(NormStep::from_str).collect::<Result<Vec<_>>>().map(Normalization)
    }
}

/// Subtract the column mean (computed in f64).
/// # Shapes
/// `x` [n, d] → [n, d], same kind.
pub fn center(x: &Tensor) -> Tensor {
    let mean = x.mean_dim(0, true, Kind::Double);
    (x.to_kind(Kind::Double) - mean).to_kind(x.kind())
}

/// Divide each row by its L2 norm (computed in f64); zero rows stay zero.
/// # Shapes
/// `x` [n, d] → [n, d], same kind.
pub fn unit_length(x: &Tensor) -> Tensor {
    let x64 = x.to_kind(Kind::Double);
    let norm = x64.square().sum_dim_intlist(1, true, Kind::Double).sqrt().clamp_min(f64::MIN_POSITIVE);
    (x64 / norm).to_kind(x.kind())
}

/// The distance from unit norm and zero mean.
/// # Shapes
/// `x` [n, d].
pub fn residual(x: &Tensor) -> Result<Residual> {
    let x64 = x.to_kind(Kind::Double);
    let norms = x64.square().sum_dim_intlist(1, false, Kind::Double).sqrt();
    let max_norm_error = super::to_vec_f64(&(norms - 1.0).abs().max())?[0];
    let max_abs_mean = super::to_vec_f64(&x64.mean_dim(0, false, Kind::Double).abs().max())?[0];
    Ok(Residual { max_norm_error, max_abs_mean })
}

/// Apply the steps in order; returns the normalized matrix and its residual.
/// # Shapes
/// `x` [n, d] → [n, d], same kind.
pub fn apply(x: &Tensor, steps: &Normalization) -> Result<(Tensor, Residual)> {
    let mut out = super::matrix_float(x, "normalize input")?;
    for step in &steps.0 {
        out = match *step {
            NormStep::Center => center(&out),
            NormStep::UnitLength => unit_length(&out),
            NormStep::IterativeNormalization { rounds } => {
                for _ in 0..rounds {
                    out = center(&unit_length(&out));
                }
                out
            }
        };
    }
    let r = residual(&out)?;
    Ok((out, r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Device;

    #[test]
    fn iterative_normalization_reaches_unit_norm_and_zero_mean() {
        let x = {
            let _g = crate::device::torch_rng_lock();
            tch::manual_seed(3);
            // Anisotropic, off-centre embeddings, like real word vectors.
            Tensor::randn([500, 20], (Kind::Float, Device::Cpu))
                * Tensor::linspace(0.2, 3.0, 20, (Kind::Float, Device::Cpu))
                + 1.5
        };
        let before = residual(&x).unwrap();
        assert!(before.max_norm_error > 1.0 && before.max_abs_mean > 1.0, "{before:?}");
        let (one, r1) = apply(&x, &"iter:1".parse().unwrap()).unwrap();
        let (_, r5) = apply(&x, &Normalization(vec![NormStep::IterativeNormalization { rounds: 5 }])).unwrap();
        let (_, r20) = apply(&x, &"iter:20".parse().unwrap()).unwrap();
        assert_eq!(one.kind(), Kind::Float);
        assert!(r5.max_norm_error < r1.max_norm_error, "{r1:?} {r5:?}");
        assert!(r20.max_norm_error < 1e-4 && r20.max_abs_mean < 1e-6, "{r20:?}");
    }

    #[test]
    fn single_steps_and_parsing() {
        let x = Tensor::from_slice(&[3.0f64, 4.0, 0.0, 0.0, 1.0, 0.0]).reshape([3, 2]);
        let (u, _) = apply(&x, &"unit".parse().unwrap()).unwrap();
        assert_eq!(super::super::to_vec_f64(&u).unwrap(), [0.6, 0.8, 0.0, 0.0, 1.0, 0.0]);
        let (c, r) = apply(&x, &"center".parse().unwrap()).unwrap();
        assert!(r.max_abs_mean < 1e-15);
        assert!((c.double_value(&[0, 0]) - 5.0 / 3.0).abs() < 1e-12);
        let n: Normalization = "center,unit,iter:3".parse().unwrap();
        assert_eq!(n.0, [NormStep::Center, NormStep::UnitLength, NormStep::IterativeNormalization { rounds: 3 }]);
        assert!("center,spin".parse::<Normalization>().unwrap_err().to_string().contains("spin"));
        assert!("iter:0".parse::<Normalization>().is_err());
        let json = serde_json::to_string(&n).unwrap();
        assert_eq!(serde_json::from_str::<Normalization>(&json).unwrap(), n);
        let d: Normalization = serde_json::from_str(r#"[{"step":"iterative_normalization"}]"#).unwrap();
        assert_eq!(d.0, [NormStep::IterativeNormalization { rounds: 5 }]);
        assert!(serde_json::from_str::<Normalization>(r#"[{"step":"iterative_normalization","round":5}]"#).is_err());
    }
}
