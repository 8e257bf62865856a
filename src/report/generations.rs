//! Which generation of the `cpu` presets made a record's models (issue 69: a record's footer and its rows in
//! REPRODUCTION.md name the presets that made it, so a record older than today's presets says so).
//!
//! A generation is told apart by what a trained model's config records (`provenance.models.NAME.config.train`):
//! the architecture (layers × hidden), the masked share, pre-LN or post-LN blocks, dropout, and the step budget — a
//! pair's or a monolingual model's steps, or three times them for Liu's multilingual model
//! (`scripts/lib/common.rhai`, `multilingual_steps`). The history of the generations is in CHANGELOG.md
//! (*Generations of the `cpu` presets*); the current one is [`crate::train::presets::Pretraining::at`]`(Cpu)`, which a
//! test keeps equal to the first entry here: changing the presets fails it until a generation is added.
use serde_json::Value;

/// One generation of the `cpu` presets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Generation {
    /// Its name in CHANGELOG.md.
    pub name: &'static str,
    /// When it was the presets.
    pub period: &'static str,
    pub layers: u64,
    pub hidden: u64,
    pub mask_prob: f64,
    pub pre_ln: bool,
    pub dropout: f64,
    /// A pair's (and a monolingual model's) pre-training steps; the multilingual model trains three times as many.
    pub pair_steps: u64,
}

/// Every generation, the current first.
pub const GENERATIONS: [Generation; 3] = [
    Generation {
        name: "mask40",
        period: "since 2026-12-01",
        layers: 4,
        hidden: 128,
        mask_prob: 0.4,
        pre_ln: true,
        dropout: 0.0,
        pair_steps: 6_000,
    },
    Generation {
        name: "preln",
        period: "2026-11-29 to 2026-11-30",
        layers: 4,
        hidden: 128,
        mask_prob: 0.15,
        pre_ln: true,
        dropout: 0.0,
        pair_steps: 10_000,
    },
    Generation {
        name: "post-LN",
        period: "until 2026-11-28",
        layers: 4,
        hidden: 128,
        mask_prob: 0.15,
        pre_ln: false,
        dropout: 0.1,
        pair_steps: 1_500,
    },
];

/// The generation whose presets made the trained model of provenance entry `m`; `None` for a model that is not a
/// `cpu` preset's (another scale, a regime candidate, a random encoder, a given checkpoint).
pub fn of_model(m: &Value) -> Option<&'static Generation> {
    let train = m.pointer("/config/train")?;
    let u = |p: &str| train.pointer(p).and_then(Value::as_u64);
    let f = |p: &str| train.pointer(p).and_then(Value::as_f64);
    let (layers, hidden, steps) = (u("/model/layers")?, u("/model/hidden")?, u("/steps")?);
    // Configs written before a field existed hold its default: BERT's 15 % masking, post-LN blocks.
    let mask_prob = f("/masking/mask_prob").unwrap_or(0.15);
    let pre_ln = train.pointer("/model/pre_ln").and_then(Value::as_bool).unwrap_or(false);
    let dropout = f("/model/dropout")?;
    GENERATIONS.iter().find(|g| {
        (g.layers, g.hidden, g.pre_ln) == (layers, hidden, pre_ln)
            && (g.mask_prob - mask_prob).abs() < 1e-9
            && (g.dropout - dropout).abs() < 1e-9
            && (steps == g.pair_steps || steps == 3 * g.pair_steps)
    })
}

/// The generations that made a record's trained models, in [`GENERATIONS`] order, each once.
pub fn of_models<'a>(models: impl IntoIterator<Item = &'a Value>) -> Vec<&'static Generation> {
    let found: Vec<&'static Generation> = models.into_iter().filter_map(of_model).collect();
    GENERATIONS.iter().filter(|g| found.iter().any(|f| f == g)).collect()
}

/// How a record's footer and REPRODUCTION.md name the generations: `cpu presets: mask40 (current)` or
/// `cpu presets: post-LN, until 2026-11-28 (older than the current mask40)`; `None` when no model is a preset's.
pub fn note<'a>(models: impl IntoIterator<Item = &'a Value>) -> Option<String> {
    let gens = of_models(models);
    if gens.is_empty() {
        return None;
    }
    let current = &GENERATIONS[0];
    let named: Vec<String> = gens
        .iter()
        .map(|g| {
            if *g == current {
                format!("{} (current)", g.name)
            } else {
                format!("{}, {} (older than the current {})", g.name, g.period, current.name)
            }
        })
        .collect();
    Some(format!("cpu presets: {}", named.join(" and ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scale::Scale;
    use crate::train::presets::Pretraining;
    use serde_json::json;

    fn model(mask: Option<f64>, pre_ln: bool, dropout: f64, steps: u64) -> Value {
        let mut m = json!({ "config": { "train": { "steps": steps,
            "model": { "layers": 4, "hidden": 128, "dropout": dropout } } } });
        if pre_ln {
            m["config"]["train"]["model"]["pre_ln"] = json!(true);
        }
        if let Some(p) = mask {
            m["config"]["train"]["masking"] = json!({ "mask_prob": p });
        }
        m
    }

    /// The first generation is today's presets: a change of the presets fails here until a generation is added.
    #[test]
    fn the_first_generation_is_the_current_cpu_presets() {
        let p = Pretraining::at(Scale::Cpu);
        let g = &GENERATIONS[0];
        assert_eq!((g.layers, g.hidden, g.pre_ln, g.pair_steps), (p.layers as u64, p.hidden as u64, p.pre_ln, p.steps));
        assert_eq!((g.mask_prob, g.dropout), (p.mask_prob, p.dropout));
    }

    #[test]
    fn models_are_told_apart_by_masking_blocks_dropout_and_steps() {
        assert_eq!(of_model(&model(Some(0.4), true, 0.0, 6_000)).map(|g| g.name), Some("mask40"));
        assert_eq!(of_model(&model(Some(0.4), true, 0.0, 18_000)).map(|g| g.name), Some("mask40"));
        assert_eq!(of_model(&model(Some(0.15), true, 0.0, 10_000)).map(|g| g.name), Some("preln"));
        // A config without masking or pre_ln (written before they existed) is BERT's 15 %, post-LN.
        assert_eq!(of_model(&model(None, false, 0.1, 4_500)).map(|g| g.name), Some("post-LN"));
        // A regime candidate (post-LN at 10,000 steps, 60 % masked) and a given checkpoint are no generation.
        assert_eq!(of_model(&model(Some(0.15), false, 0.1, 10_000)), None);
        assert_eq!(of_model(&model(Some(0.6), true, 0.0, 3_000)), None);
        assert_eq!(of_model(&json!({ "given": "/models/mbert" })), None);
    }

    #[test]
    fn the_note_names_each_generation_and_marks_older_ones() {
        let current = model(Some(0.4), true, 0.0, 6_000);
        let old = model(Some(0.15), false, 0.1, 1_500);
        assert_eq!(note([&current]).unwrap(), "cpu presets: mask40 (current)");
        assert_eq!(
            note([&old, &current, &old]).unwrap(),
            "cpu presets: mask40 (current) and post-LN, until 2026-11-28 (older than the current mask40)"
        );
        assert_eq!(note([&json!({ "random_like": "x" })]), None);
    }
}
