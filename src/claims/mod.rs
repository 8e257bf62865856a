//! Claims and verdicts (DESIGN.md "Claims"): each figure script declares the claims of the paper behind it as
//! predicates over its scores; every score carries a 95 % interval; one rule turns them into a verdict.
//!
//! - [`score`]: a score with its interval (bootstrap over test items, Student t over seeds) and how seeds combine.
//! - [`rule`]: the verdict rule (supported / contradicted / inconclusive) and claim evaluation.
pub mod rule;
pub mod score;

pub use rule::{Check, Claim, Operand, Verdict};
pub use score::{Score, ScoreSpec};
