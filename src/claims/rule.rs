//! The verdict rule: the one place where scores with intervals become `supported`, `contradicted` or
//! `inconclusive` (DESIGN.md "Claims").
//!
//! A claim is a conjunction of checks. A check compares a score with another score or with a number:
//! - `a > b`: supported when `low(a) > high(b)`, contradicted when `high(a) < low(b)`, otherwise inconclusive
//!   (the 95 % intervals overlap). `a < b` is the mirror image. A number has a zero-width interval.
//!   Non-overlap of two 95 % intervals is a conservative test (about p < 0.006 for independent estimates with
//!   equal, normal errors).
//! - `a ≈ c` (`c` a number, e.g. a chance level: "drops to random") with a `tolerance` `t`: an equivalence test
//!   on the margin `[c − t, c + t]` (the claim as tested is "a lies within t of c"): supported when the whole
//!   interval of `a` lies inside the margin, contradicted when it lies wholly outside it, inconclusive otherwise (a
//!   wide interval that merely holds `c` shows nothing). Without a tolerance, equality cannot be shown: contradicted
//!   when `c` lies outside the interval, inconclusive otherwise.
//! - A check is inconclusive whatever the numbers when a score it reads has no interval (one seed of a statistic
//!   without per-item form), or when both sides of a comparison of scores sit at their chance level (each
//!   interval holds the metric's chance level): nothing was learned that the claim could be about. The same
//!   holds for a paired difference ([`super::score::ScoreSpec::difference`]) whose two sides both sit at chance
//!   (a side that is itself a difference sits at chance when both of its sides do).
//! - Two models on the same test items are best compared as `difference > 0`, where `difference` is their paired
//!   difference score: the check is then the interval of one bootstrapped difference against 0 (a test at about
//!   p < 0.05), not the non-overlap of two intervals.
//!
//! A claim is contradicted when any check is, supported when every check is, and inconclusive otherwise. A claim
//! about "several" or "most" of its cases sets `at_least: k` of its n checks: supported when k or more are
//! supported, contradicted when more than n − k are contradicted (k can no longer be reached), else inconclusive.
//!
//! **Several checks.** "Every check holds" needs each check at its own 95 % level (an intersection–union test: no
//! correction is due, Berger 1982). "Some check fails" is a union of n chances to err, so a check of a claim of n
//! checks is contradicted only at the Bonferroni level 0.05 / n: its 95 % intervals, widened about their estimates
//! by z₁₋₀.₀₂₅/ₙ / z₀.₉₇₅ (a normal approximation; [`bonferroni_widening`]), must lie apart in the opposite
//! order. A check apart the other way at 95 % but not at that level is inconclusive, and says so. "At least k of
//! n hold" is a union of intersections: with k − 1 checks true and the other n − k + 1 false it errs when any one of
//! those n − k + 1 is supported, so each check of such a claim is supported only at the level 0.05 / (n − k + 1)
//! (its intervals widened alike; 95 % when k = n, the conjunction). The widening is
//! normal rather than a percentile of the resamples because a record keeps each score's 95 % interval, not its
//! resamples, and because 1,000 resamples cannot place the tail it would need: 0.025 / 27 = 0.09 % a side for
//! 27 checks is the first of the 1,000, a quantile with no resolution.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::score::Score;
use crate::error::{Error, Result};

/// The outcome of a check or a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Supported,
    Contradicted,
    Inconclusive,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Supported => "supported",
            Verdict::Contradicted => "contradicted",
            Verdict::Inconclusive => "inconclusive",
        })
    }
}

/// The right-hand side of a check: another score (by key) or a number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Operand {
    Value(f64),
    Key(String),
}

/// One comparison of a claim, e.g. `{ left: "Bilingual/en-fr/avg", op: ">", right: "Monolingual/en-fr/avg" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// A score key of the record.
    pub left: String,
    /// `>`, `<` or `≈` (also written `~`).
    pub op: String,
    pub right: Operand,
    /// For `≈`: the largest distance from the number that still counts as equal (see the module docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// What the check is about, e.g. `en-fr`; defaults to the comparison itself.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
}

/// A check evaluated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckOutcome {
    pub verdict: Verdict,
    /// `Bilingual/en-fr/avg 0.31 [0.29, 0.33] > Monolingual/en-fr/avg 0.20 [0.18, 0.22]`.
    pub ours: String,
    /// Why, when not supported (`intervals overlap`, `both at chance`, `no interval`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// A claim of a paper as a script declares it, with its evaluation once the scores are known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Unique within the figure, e.g. `order`.
    pub id: String,
    /// Where the paper makes it, e.g. `Emerging §5.2`.
    pub source: String,
    /// The paper's own words.
    pub quote: String,
    /// The predicate in words, as this project tests it.
    pub statement: String,
    /// The paper's numbers behind the claim (empty where the paper shows it only in a plot).
    #[serde(default)]
    pub paper: String,
    pub checks: Vec<Check>,
    /// How many checks must hold ("several languages", "most languages"); all of them when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<usize>,
    /// Filled by [`evaluate`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<CheckOutcome>,
}

fn digits_for(x: f64) -> usize {
    if x.abs() >= 10.0 {
        1
    } else {
        3
    }
}

/// `x` with three significant digits (33.3, 0.100, 0.0225).
fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let d = (2 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.d$}")
}

fn show(key: &str, s: &Score) -> String {
    let chance = s.chance.map(|c| format!(" (chance {})", sig3(c))).unwrap_or_default();
    format!("{key} {}{chance}", s.display(digits_for(s.estimate)))
}

/// The standard normal quantile Φ⁻¹(p), 0 < p < 1 (Acklam's rational approximation, relative error below
/// 1.2e-9; the tails by the same method's second form).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// How much a 95 % interval is widened to judge a check at the Bonferroni level for `n` chances to err: the ratio
/// of the normal quantiles z₁₋₀.₀₂₅/ₙ / z₀.₉₇₅ (1 for one check, 1.31 for 5, 1.59 for 27). A contradiction of one of
/// a claim's n checks is judged at n; a support of one of "at least k of n" at n − k + 1 (see the module docs).
pub fn bonferroni_widening(n: usize) -> f64 {
    normal_quantile(1.0 - 0.025 / n.max(1) as f64) / normal_quantile(0.975)
}

/// Evaluates one check against `scores`, alone (see [`check_among`]).
pub fn check(c: &Check, scores: &BTreeMap<String, Score>) -> Result<CheckOutcome> {
    check_among(c, scores, 1, 1)
}

/// Evaluates one check of a claim of `n` checks of which at least `k` must hold (`k = n` for a conjunction) against
/// `scores` (see the module docs: supported at 95 % for a conjunction, at the level 0.05 / (n − k + 1) otherwise;
/// contradicted only at the Bonferroni level for `n` checks).
pub fn check_among(c: &Check, scores: &BTreeMap<String, Score>, n: usize, k: usize) -> Result<CheckOutcome> {
    let get = |k: &str| {
        scores.get(k).ok_or_else(|| Error::Invalid(format!("claim check names score '{k}', which the record lacks")))
    };
    let side = |d: &str, k: &str| {
        scores
            .get(k)
            .ok_or_else(|| Error::Invalid(format!("difference '{d}' is of score '{k}', which the record lacks")))
    };
    let a = get(&c.left)?;
    let op = match c.op.as_str() {
        ">" | "<" => c.op.clone(),
        "≈" | "~" => "≈".to_string(),
        other => return Err(Error::Invalid(format!("claim check operator '{other}' (expected >, < or ≈)"))),
    };
    let (b_low, b_high, b_text, b_score) = match &c.right {
        Operand::Value(v) => (*v, *v, sig3(*v), None),
        Operand::Key(k) => {
            let b = get(k)?;
            (b.low, b.high, show(k, b), Some(b))
        }
    };
    if op == "≈" && b_score.is_some() {
        return Err(Error::Invalid(format!("claim check '{} ≈ …' needs a number on the right", c.left)));
    }
    let mut ours = format!("{} {op} {b_text}", show(&c.left, a));
    if let Some([l, r]) = &a.difference_of {
        let (sl, sr) = (side(&c.left, l)?, side(&c.left, r)?);
        ours +=
            &format!(" ({} {}, {} {})", l, sl.display(digits_for(sl.estimate)), r, sr.display(digits_for(sr.estimate)));
    }
    let out = |verdict, reason: &str| CheckOutcome { verdict, ours: ours.clone(), reason: reason.to_string() };
    if !a.has_interval() || b_score.is_some_and(|b| !b.has_interval()) {
        return Ok(out(Verdict::Inconclusive, "no interval (one seed of a statistic without per-item form)"));
    }
    if let Some(b) = b_score {
        if a.at_chance() && b.at_chance() {
            return Ok(out(Verdict::Inconclusive, "both at chance"));
        }
    }
    // A paired difference of two models that both sit at chance says nothing either, whatever its interval.
    let right_key = match &c.right {
        Operand::Key(k) => k.as_str(),
        Operand::Value(_) => "",
    };
    for (key, s) in [(c.left.as_str(), Some(a)), (right_key, b_score)] {
        let Some(s) = s else { continue };
        if let Some([l, r]) = &s.difference_of {
            if sits_at_chance(key, side(key, l)?, scores)? && sits_at_chance(key, side(key, r)?, scores)? {
                return Ok(out(Verdict::Inconclusive, &format!("both sides of the difference at chance ({l}, {r})")));
            }
        }
    }
    // The intervals each verdict is judged on, widened about their estimates: a contradiction for the claim's n
    // checks, a support for the n − k + 1 checks any one of which could make "at least k" hold falsely (both equal
    // to the 95 % ones at n = k = 1; the support ones at k = n).
    let widened = |f: f64| {
        let widen = move |s: &Score| (s.estimate - f * (s.estimate - s.low), s.estimate + f * (s.high - s.estimate));
        (widen(a), b_score.map(widen).unwrap_or((b_low, b_high)))
    };
    let ((wa_low, wa_high), (wb_low, wb_high)) = widened(bonferroni_widening(n));
    let support_n = n.saturating_sub(k) + 1;
    let ((sa_low, sa_high), (sb_low, sb_high)) = widened(bonferroni_widening(support_n));
    let bonferroni = if n > 1 { format!(" at the Bonferroni level for {n} checks") } else { String::new() };
    let opposite = format!("the opposite order, intervals apart{bonferroni}");
    let opposite_95 = format!("the opposite order at 95 %, not at the Bonferroni level for {n} checks");
    let claimed_95 = format!(
        "the claimed order at 95 %, not at the level 0.05 / {support_n} that each of at least {k} of {n} checks needs"
    );
    Ok(match op.as_str() {
        ">" if sa_low > sb_high => out(Verdict::Supported, ""),
        ">" if wa_high < wb_low => out(Verdict::Contradicted, &opposite),
        ">" if a.high < b_low => out(Verdict::Inconclusive, &opposite_95),
        ">" if a.low > b_high => out(Verdict::Inconclusive, &claimed_95),
        "<" if sa_high < sb_low => out(Verdict::Supported, ""),
        "<" if wa_low > wb_high => out(Verdict::Contradicted, &opposite),
        "<" if a.low > b_high => out(Verdict::Inconclusive, &opposite_95),
        "<" if a.high < b_low => out(Verdict::Inconclusive, &claimed_95),
        "≈" => match c.tolerance {
            Some(t) if sa_low >= b_low - t && sa_high <= b_low + t => out(Verdict::Supported, ""),
            Some(t) if wa_high < b_low - t || wa_low > b_low + t => {
                out(Verdict::Contradicted, &format!("the interval lies beyond ± {} of the value{bonferroni}", sig3(t)))
            }
            Some(t) => out(Verdict::Inconclusive, &format!("the interval reaches beyond ± {} of the value", sig3(t))),
            None if !(wa_low <= b_low && b_low <= wa_high) => {
                out(Verdict::Contradicted, &format!("the value lies outside the interval{bonferroni}"))
            }
            None => out(Verdict::Inconclusive, "the interval holds the value; equality needs a tolerance to be shown"),
        },
        _ if b_score.is_none() => out(Verdict::Inconclusive, &format!("the interval holds {b_text}")),
        _ => out(Verdict::Inconclusive, "intervals overlap"),
    })
}

/// True when `s` holds its chance level, or is a paired difference whose two sides both do (a gain of one model
/// pair minus another's, every model at chance, shows nothing either). `of` names the check's score for errors.
/// A chain of differences longer than the record's scores loops back on itself (a hand-edited record): an error.
fn sits_at_chance(of: &str, s: &Score, scores: &BTreeMap<String, Score>) -> Result<bool> {
    sits_at_chance_within(of, s, scores, scores.len())
}

fn sits_at_chance_within(of: &str, s: &Score, scores: &BTreeMap<String, Score>, depth: usize) -> Result<bool> {
    if s.at_chance() {
        return Ok(true);
    }
    let Some([l, r]) = &s.difference_of else { return Ok(false) };
    if depth == 0 {
        return Err(Error::Invalid(format!(
            "difference '{of}' rests, through its sides, on itself (the loop passes through '{l}' − '{r}')"
        )));
    }
    let side = |k: &str| {
        scores
            .get(k)
            .ok_or_else(|| Error::Invalid(format!("difference '{of}' rests on score '{k}', which the record lacks")))
    };
    Ok(sits_at_chance_within(of, side(l)?, scores, depth - 1)?
        && sits_at_chance_within(of, side(r)?, scores, depth - 1)?)
}

/// The verdict of a conjunction of check outcomes.
pub fn conjunction(outcomes: &[CheckOutcome]) -> Verdict {
    if outcomes.iter().any(|o| o.verdict == Verdict::Contradicted) {
        Verdict::Contradicted
    } else if !outcomes.is_empty() && outcomes.iter().all(|o| o.verdict == Verdict::Supported) {
        Verdict::Supported
    } else {
        Verdict::Inconclusive
    }
}

/// The verdict of "at least `k` of these outcomes hold" (see the module docs).
pub fn at_least(outcomes: &[CheckOutcome], k: usize) -> Verdict {
    let supported = outcomes.iter().filter(|o| o.verdict == Verdict::Supported).count();
    let contradicted = outcomes.iter().filter(|o| o.verdict == Verdict::Contradicted).count();
    if supported >= k {
        Verdict::Supported
    } else if contradicted > outcomes.len().saturating_sub(k) {
        Verdict::Contradicted
    } else {
        Verdict::Inconclusive
    }
}

/// Evaluates every claim of a record in place.
pub fn evaluate(claims: &mut [Claim], scores: &BTreeMap<String, Score>) -> Result<()> {
    for claim in claims.iter_mut() {
        if claim.checks.is_empty() {
            return Err(Error::Invalid(format!("claim '{}' has no checks", claim.id)));
        }
        let outcomes = claim
            .checks
            .iter()
            .map(|c| {
                let n = claim.checks.len();
                check_among(c, scores, n, claim.at_least.unwrap_or(n).clamp(1, n)).map(|mut o| {
                    if !c.label.is_empty() {
                        o.ours = format!("{}: {}", c.label, o.ours);
                    }
                    o
                })
            })
            .collect::<Result<Vec<_>>>()
            .map_err(|e| Error::Invalid(format!("claim '{}': {e}", claim.id)))?;
        claim.verdict = Some(match claim.at_least {
            None => conjunction(&outcomes),
            Some(k) if k == 0 || k > outcomes.len() => {
                return Err(Error::Invalid(format!(
                    "claim '{}': at_least {k} of {} checks (expected 1 to {})",
                    claim.id,
                    outcomes.len(),
                    outcomes.len()
                )))
            }
            Some(k) => at_least(&outcomes, k),
        });
        claim.outcomes = outcomes;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::score::{IntervalKind, SeedScore};
    use super::*;

    fn score(estimate: f64, low: f64, high: f64, chance: Option<f64>) -> Score {
        Score {
            estimate,
            low,
            high,
            interval: IntervalKind::Bootstrap,
            items: 100,
            chance,
            sd: None,
            per_seed: vec![SeedScore { seed: 0, estimate, low, high }],
            range: None,
            difference_of: None,
        }
    }

    fn scores() -> BTreeMap<String, Score> {
        BTreeMap::from([
            ("high".into(), score(0.6, 0.55, 0.65, None)),
            ("mid".into(), score(0.5, 0.45, 0.56, None)),
            ("low".into(), score(0.3, 0.25, 0.35, None)),
            ("chance_a".into(), score(33.5, 32.0, 35.0, Some(33.3))),
            ("chance_b".into(), score(34.5, 33.0, 36.0, Some(33.3))),
            ("cka".into(), Score { interval: IntervalKind::None, ..score(0.4, 0.4, 0.4, None) }),
            ("high−low".into(), paired(0.3, 0.2, 0.4, ["high", "low"])),
            ("chance_b−chance_a".into(), paired(1.0, 0.5, 1.5, ["chance_b", "chance_a"])),
        ])
    }

    fn paired(estimate: f64, low: f64, high: f64, of: [&str; 2]) -> Score {
        Score { difference_of: Some([of[0].into(), of[1].into()]), ..score(estimate, low, high, None) }
    }

    fn run(left: &str, op: &str, right: Operand) -> Verdict {
        run_tol(left, op, right, None)
    }

    fn run_tol(left: &str, op: &str, right: Operand, tolerance: Option<f64>) -> Verdict {
        let c = Check { left: left.into(), op: op.into(), right, tolerance, label: String::new() };
        check(&c, &scores()).unwrap().verdict
    }

    #[test]
    fn each_outcome_of_the_rule() {
        let k = |s: &str| Operand::Key(s.into());
        assert_eq!(run("high", ">", k("low")), Verdict::Supported);
        assert_eq!(run("low", ">", k("high")), Verdict::Contradicted);
        assert_eq!(run("high", ">", k("mid")), Verdict::Inconclusive, "0.55 < 0.56: overlap");
        assert_eq!(run("low", "<", k("high")), Verdict::Supported);
        assert_eq!(run("high", "<", k("low")), Verdict::Contradicted);
        assert_eq!(run("chance_b", ">", k("chance_a")), Verdict::Inconclusive, "both at chance");
        assert_eq!(run("chance_a", "≈", Operand::Value(33.3)), Verdict::Inconclusive, "no tolerance");
        assert_eq!(
            run_tol("chance_a", "≈", Operand::Value(33.3), Some(2.0)),
            Verdict::Supported,
            "[32, 35] in 33.3 ± 2"
        );
        assert_eq!(run_tol("chance_a", "≈", Operand::Value(33.3), Some(1.0)), Verdict::Inconclusive, "35 > 34.3");
        // The margin decides, not whether the interval holds the value: [0.55, 0.65] lies within 0.52 ± 0.2 although
        // it leaves 0.52 out; [0.25, 0.35] lies wholly beyond 0 ± 0.1.
        assert_eq!(run_tol("high", "≈", Operand::Value(0.52), Some(0.2)), Verdict::Supported);
        assert_eq!(run_tol("low", "≈", Operand::Value(0.0), Some(0.1)), Verdict::Contradicted);
        assert_eq!(run_tol("low", "≈", Operand::Value(0.2), Some(0.1)), Verdict::Inconclusive, "0.35 > 0.3 ≥ 0.25");
        assert_eq!(run("high", "~", Operand::Value(0.9)), Verdict::Contradicted);
        assert_eq!(run("high", ">", Operand::Value(0.5)), Verdict::Supported);
        assert_eq!(run("cka", ">", k("low")), Verdict::Inconclusive, "no interval");
        assert_eq!(run("high", ">", k("cka")), Verdict::Inconclusive);
        // Paired differences are checked against 0; one of two models that both sit at chance shows nothing.
        assert_eq!(run("high−low", ">", Operand::Value(0.0)), Verdict::Supported);
        assert_eq!(run("high−low", "<", Operand::Value(0.0)), Verdict::Contradicted);
        assert_eq!(run("chance_b−chance_a", ">", Operand::Value(0.0)), Verdict::Inconclusive, "both sides at chance");
        let c = Check {
            left: "chance_b−chance_a".into(),
            op: ">".into(),
            right: Operand::Value(0.0),
            tolerance: None,
            label: String::new(),
        };
        assert!(check(&c, &scores()).unwrap().reason.contains("chance_b, chance_a"));
        // Text: a difference shows both sides; a check against a number says whether the interval holds it.
        let o = check(&Check { left: "high−low".into(), ..c.clone() }, &scores()).unwrap();
        assert!(o.ours.contains("(high 0.600 [0.550, 0.650], low 0.300 [0.250, 0.350])"), "{}", o.ours);
        let o = check(&Check { left: "mid".into(), right: Operand::Value(0.5), ..c.clone() }, &scores()).unwrap();
        assert_eq!(o.reason, "the interval holds 0.500");
        // A difference on the right is guarded too; a difference of a missing score is named.
        let gains = Check { left: "high−low".into(), right: Operand::Key("chance_b−chance_a".into()), ..c.clone() };
        assert!(check(&gains, &scores()).unwrap().reason.contains("at chance"));
        // A difference of two differences whose four scores all sit at chance shows nothing either; one model off
        // chance is enough for it to count.
        let mut nested = scores();
        nested.insert("chance_a−chance_b".into(), paired(-1.0, -1.5, -0.5, ["chance_a", "chance_b"]));
        nested.insert("gap".into(), paired(2.0, 1.0, 3.0, ["chance_b−chance_a", "chance_a−chance_b"]));
        nested.insert("gap2".into(), paired(2.0, 1.0, 3.0, ["chance_b−chance_a", "high−low"]));
        let gap = Check { left: "gap".into(), ..c.clone() };
        let o = check(&gap, &nested).unwrap();
        assert_eq!(o.verdict, Verdict::Inconclusive);
        assert!(o.reason.contains("at chance"), "{}", o.reason);
        assert_eq!(check(&Check { left: "gap2".into(), ..c.clone() }, &nested).unwrap().verdict, Verdict::Supported);
        // A hand-edited record whose differences loop back on themselves is an error, not a stack overflow.
        let mut looped = nested.clone();
        looped.insert("loop".into(), paired(2.0, 1.0, 3.0, ["loop", "chance_a"]));
        let lp = Check { left: "loop".into(), ..c.clone() };
        let e = check(&lp, &looped).unwrap_err().to_string();
        assert!(e.contains("rests, through its sides, on itself"), "{e}");
        let mut lacking = scores();
        lacking.remove("low");
        let e = check(&Check { left: "high−low".into(), ..c }, &lacking).unwrap_err().to_string();
        assert!(e.contains("difference 'high−low' is of score 'low'"), "{e}");
    }

    #[test]
    fn contradiction_of_one_of_many_checks_needs_the_bonferroni_level() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.001) + 3.090232).abs() < 1e-5);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((bonferroni_widening(1) - 1.0).abs() < 1e-12);
        assert!((bonferroni_widening(27) - 1.5883).abs() < 1e-4, "{}", bonferroni_widening(27));
        // A difference of −0.3 [−0.5, −0.1] against "> 0": apart at 95 %; widened ×1.59 for 27 checks it reaches 0.
        let mut sc = scores();
        sc.insert("gap".into(), paired(-0.3, -0.5, -0.1, ["low", "high"]));
        let c = Check {
            left: "gap".into(),
            op: ">".into(),
            right: Operand::Value(0.0),
            tolerance: None,
            label: String::new(),
        };
        assert_eq!(check_among(&c, &sc, 1, 1).unwrap().verdict, Verdict::Contradicted);
        assert_eq!(check_among(&c, &sc, 5, 5).unwrap().verdict, Verdict::Contradicted, "×1.31: −0.3 + 0.26 < 0");
        let o = check_among(&c, &sc, 27, 27).unwrap();
        assert_eq!(
            (o.verdict, o.reason.as_str()),
            (Verdict::Inconclusive, "the opposite order at 95 %, not at the Bonferroni level for 27 checks")
        );
        // Support of a conjunction is per check at 95 % whatever n.
        let up = Check { op: "<".into(), ..c };
        assert_eq!(check_among(&up, &sc, 27, 27).unwrap().verdict, Verdict::Supported);
        // "At least 1 of 3": any one of three could hold falsely, so each is supported at 0.05 / 3 (×1.22): −0.3 +
        // 0.24 < 0 still; at least 1 of 27 (×1.59: −0.3 + 0.32 > 0) not, and the reason says so.
        assert_eq!(check_among(&up, &sc, 3, 1).unwrap().verdict, Verdict::Supported);
        let o = check_among(&up, &sc, 27, 1).unwrap();
        assert_eq!(
            (o.verdict, o.reason.as_str()),
            (
                Verdict::Inconclusive,
                "the claimed order at 95 %, not at the level 0.05 / 27 that each of at least 1 of 27 checks needs"
            )
        );
        // evaluate() passes the claim's number of checks.
        let mut claims = vec![Claim {
            id: "c".into(),
            source: "s".into(),
            quote: "q".into(),
            statement: "s".into(),
            paper: String::new(),
            checks: vec![Check { op: ">".into(), ..up.clone() }; 27],
            at_least: None,
            verdict: None,
            outcomes: vec![],
        }];
        evaluate(&mut claims, &sc).unwrap();
        assert_eq!(claims[0].verdict, Some(Verdict::Inconclusive));
    }

    #[test]
    fn numbers_show_three_significant_digits() {
        assert_eq!(
            (sig3(33.3), sig3(0.1), sig3(0.022522522), sig3(0.0)),
            ("33.3".into(), "0.100".into(), "0.0225".into(), "0".into())
        );
        assert_eq!(sig3(1234.4), "1234");
    }

    #[test]
    fn bad_checks_are_errors() {
        let c = |left: &str, op: &str, right: Operand| {
            check(&Check { left: left.into(), op: op.into(), right, tolerance: None, label: String::new() }, &scores())
        };
        assert!(c("nope", ">", Operand::Value(1.0)).unwrap_err().to_string().contains("'nope'"));
        assert!(c("high", ">=", Operand::Value(1.0)).unwrap_err().to_string().contains(">="));
        assert!(c("high", "≈", Operand::Key("low".into())).is_err());
    }

    #[test]
    fn claims_are_conjunctions() {
        let mk = |checks: Vec<(&str, &str, &str)>| Claim {
            id: "c".into(),
            source: "§1".into(),
            quote: "q".into(),
            statement: "s".into(),
            paper: String::new(),
            checks: checks
                .into_iter()
                .map(|(l, o, r)| Check {
                    left: l.into(),
                    op: o.into(),
                    right: Operand::Key(r.into()),
                    tolerance: None,
                    label: "x".into(),
                })
                .collect(),
            at_least: None,
            verdict: None,
            outcomes: vec![],
        };
        let mut cs = vec![
            mk(vec![("high", ">", "low"), ("mid", ">", "low")]),
            mk(vec![("high", ">", "low"), ("high", ">", "mid")]),
            mk(vec![("high", ">", "low"), ("low", ">", "mid"), ("high", ">", "mid")]),
        ];
        evaluate(&mut cs, &scores()).unwrap();
        let v: Vec<_> = cs.iter().map(|c| c.verdict.unwrap()).collect();
        assert_eq!(v, [Verdict::Supported, Verdict::Inconclusive, Verdict::Contradicted]);
        assert!(cs[0].outcomes[0].ours.starts_with("x: high 0.600 [0.550, 0.650] > low"));
        let mut empty = vec![mk(vec![])];
        assert!(evaluate(&mut empty, &scores()).is_err());
        // "at least 2 of 3": two supported → supported; one supported, two contradicted → contradicted; one
        // supported, one open → inconclusive; k out of range → error.
        let mut some = vec![
            Claim { at_least: Some(2), ..mk(vec![("high", ">", "low"), ("mid", ">", "low"), ("low", ">", "high")]) },
            Claim { at_least: Some(2), ..mk(vec![("high", ">", "low"), ("low", ">", "mid"), ("low", ">", "high")]) },
            Claim { at_least: Some(2), ..mk(vec![("high", ">", "low"), ("high", ">", "mid"), ("low", ">", "high")]) },
        ];
        evaluate(&mut some, &scores()).unwrap();
        let v: Vec<_> = some.iter().map(|c| c.verdict.unwrap()).collect();
        assert_eq!(v, [Verdict::Supported, Verdict::Contradicted, Verdict::Inconclusive]);
        let mut bad = vec![Claim { at_least: Some(4), ..mk(vec![("high", ">", "low")]) }];
        assert!(evaluate(&mut bad, &scores()).unwrap_err().to_string().contains("at_least 4"));
    }
}
