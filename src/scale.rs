//! The scales of DESIGN.md, one type: `smoke` (tiny models and samples, seconds: for tests), `cpu` (the reference
//! runs on two CPU cores, the default) and `paper` (the studies' architecture, for GPUs). Parsed once where a command
//! or script starts (`--scale`, clap's [`clap::ValueEnum`]) and handed down as a [`Scale`]; every config takes its
//! numbers for a scale from one function (`ModelConfig::at`, `Pretraining::at`, `NerConfig::at`, …), so a scale's
//! settings are written in one place each.
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A scale of DESIGN.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Tiny models and samples, for tests: seconds, and the numbers mean nothing.
    Smoke,
    /// The reference runs on two CPU cores.
    Cpu,
    /// The studies' architecture (8 layers, 768 wide), for GPUs.
    Paper,
}

impl Scale {
    /// Every scale, smallest first.
    pub const ALL: [Scale; 3] = [Scale::Smoke, Scale::Cpu, Scale::Paper];

    /// `smoke`, `cpu` or `paper` (the name scripts see as `SCALE`).
    pub fn name(self) -> &'static str {
        match self {
            Scale::Smoke => "smoke",
            Scale::Cpu => "cpu",
            Scale::Paper => "paper",
        }
    }
}

impl std::fmt::Display for Scale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Scale {
    type Err = Error;
    fn from_str(s: &str) -> Result<Scale> {
        Scale::ALL.into_iter().find(|x| x.name() == s).ok_or_else(|| {
            let known: Vec<&str> = Scale::ALL.iter().map(|x| x.name()).collect();
            Error::Invalid(format!("unknown scale '{s}'; known: {}", known.join(", ")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known() {
        for s in Scale::ALL {
            assert_eq!(s.name().parse::<Scale>().unwrap(), s);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
        }
        let e = "huge".parse::<Scale>().unwrap_err().to_string();
        assert!(e.contains("unknown scale 'huge'; known: smoke, cpu, paper"), "{e}");
    }
}
