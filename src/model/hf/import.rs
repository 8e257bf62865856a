//! Importing a Hugging Face encoder folder: `config.json` ([`super::config`]), the weights
//! ([`super::weights`]: `model.safetensors`, shards with their index, or `pytorch_model.bin`), tensor names
//! ([`super::names`]); the tokenizer is read separately ([`crate::model::tokenizer::load_hf_tokenizer_with`]).
//!
//! Any layout of [`super::arch`] loads. The encoder always; the masked-LM head when the checkpoint has one (its
//! class is `…ForMaskedLM` / `BertForPreTraining`, or its tensors include the head). A model read without a head
//! still is an [`MlmModel`], but only the encoder's parameters are in its `VarStore`: the head is built outside it
//! and filled with NaN, so nothing can save, export or fine-tune it, and anything that would decode with it
//! must check [`HfImport::has_mlm_head`] (as [`crate::model::LoadedModel::require_mlm_head`] does) — were one
//! to forget, it would compute NaN, never plausible numbers.
//!
//! Every tensor of the checkpoint must land in exactly one variable of the same shape, or be ignored by a rule
//! of [`super::names`]; every variable must be filled. Otherwise the error groups the problems — unexpected,
//! missing (under the checkpoint's names) and mis-shaped tensors — each with its count, its module groups and
//! the first few names.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use tch::{nn::VarStore, Device, Kind, Tensor};

use super::arch::{Arch, Layout};
use super::config::read_hf_config;
use super::names::{ImportName, Mapper};
use super::weights::{find_weights, WeightFiles};
use crate::error::{Error, Result};
use crate::model::{Encoder, MlmHead, MlmModel, ModelConfig};

/// A model read from a HF folder.
#[derive(Debug)]
pub struct HfImport {
    pub vs: VarStore,
    pub model: MlmModel,
    pub config: ModelConfig,
    pub arch: Arch,
    /// The class it was read as: `architectures[0]` of `config.json`, else one named after the layout.
    pub class: String,
    pub layout: Layout,
    /// Whether the masked-LM head was read (else `vs` holds the encoder only; see the module docs).
    pub has_mlm_head: bool,
    /// The files that were read.
    pub weights: WeightFiles,
    /// What was skipped or inferred, for the user.
    pub notes: Vec<String>,
}

/// Imports the HF encoder in `dir` onto `device` (weights only; the tokenizer is read separately).
pub fn import_hf(dir: &Path, device: Device) -> Result<HfImport> {
    let hf = read_hf_config(&dir.join("config.json"))?;
    let weights = find_weights(dir)?;
    let tensors = weights.read()?;
    let mapper = Mapper::new(hf.arch, tensors.iter().map(|(n, _)| n.as_str()), hf.model.tie_output, hf.position_offset);
    let plan = Plan::new(&mapper, tensors);
    let has_mlm_head = plan.has_head() || hf.layout.is_some_and(Layout::has_mlm_head);
    let inferred = plan.layout(hf.arch, has_mlm_head);
    // The class decides, unless the tensors hold a masked-LM head its layout has no place for.
    let declared = hf.layout.filter(|l| l.has_mlm_head() == has_mlm_head);
    let layout = declared.unwrap_or(inferred);
    let class = match (&hf.class, declared) {
        (Some(c), Some(_)) => c.clone(),
        _ => class_name(hf.arch, layout),
    };
    let mut notes = Vec::new();
    if let (Some(c), None) = (&hf.class, declared) {
        let why =
            if hf.layout.is_some() { "whose layout has no masked-LM head" } else { "which crossling does not know" };
        notes.push(format!(
            "config.json names the class {c}, {why}; its tensors read as a {class} ({})",
            layout.describe()
        ));
    }
    let (vs, model) = build_model(&hf.model, device, has_mlm_head)?;
    let what = format!("a {class} ({}) of its config.json", layout.describe());
    notes.extend(plan.assign(&vs, &mapper, weights.display_path(), &what)?);
    if !has_mlm_head {
        notes.push(format!(
            "{class} has no masked-LM head: the encoder is read; MDS token translation, which decodes with the head, \
             needs a …ForMaskedLM checkpoint"
        ));
    }
    Ok(HfImport { vs, model, config: hf.model, arch: hf.arch, class, layout, has_mlm_head, weights, notes })
}

/// The class name of a layout (`RobertaModel`, `DistilBertForMaskedLM`, …) for a checkpoint without one.
fn class_name(arch: Arch, layout: Layout) -> String {
    let p = arch.class_prefix();
    match layout {
        Layout::Encoder => format!("{p}Model"),
        Layout::MaskedLm => format!("{p}ForMaskedLM"),
        Layout::PreTraining => format!("{p}ForPreTraining"),
        Layout::Task => format!("{p} task model"),
    }
}

/// A model of `cfg` on `device`: encoder and head in the `VarStore`, or, without `with_head`, the encoder only
/// (the head outside it, NaN; see the module docs).
pub fn build_model(cfg: &ModelConfig, device: Device, with_head: bool) -> Result<(VarStore, MlmModel)> {
    let vs = VarStore::new(device);
    if with_head {
        let model = MlmModel::new(&vs.root(), cfg)?;
        return Ok((vs, model));
    }
    let _rng = crate::device::torch_rng_lock(); // initialisation draws from libtorch's global generator
    let encoder = Encoder::new(&(vs.root() / "bert"), cfg)?;
    let mut outside = VarStore::new(device);
    let head = MlmHead::new(&(outside.root() / "cls" / "predictions"), cfg)?;
    outside.freeze();
    tch::no_grad(|| {
        for (_, mut v) in outside.variables() {
            let _ = v.fill_(f64::NAN);
        }
    });
    Ok((vs, MlmModel { encoder, head }))
}

/// The checkpoint's tensors sorted by what becomes of them.
struct Plan {
    /// (HF name, crossling name, rows to drop, tensor).
    loads: Vec<(String, String, usize, Tensor)>,
    /// Ignored tensors: (part, why) → names.
    ignored: BTreeMap<(String, &'static str), Vec<String>>,
    /// The decoder bias of an old checkpoint, when it has no other output bias.
    tied_bias: Option<(String, Tensor)>,
    unknown: Vec<(String, Vec<i64>)>,
}

impl Plan {
    fn new(mapper: &Mapper, tensors: Vec<(String, Tensor)>) -> Plan {
        let mut plan = Plan { loads: Vec::new(), ignored: BTreeMap::new(), tied_bias: None, unknown: Vec::new() };
        for (hf, t) in tensors {
            match mapper.import(&hf) {
                ImportName::Load { name, skip_rows } => plan.loads.push((hf, name, skip_rows, t)),
                ImportName::Ignore { part, why } => plan.ignored.entry((part, why)).or_default().push(hf),
                ImportName::Alias => {}
                ImportName::TiedBias => plan.tied_bias = Some((hf, t)),
                ImportName::Unknown => plan.unknown.push((hf, t.size())),
            }
        }
        if plan.loads.iter().any(|(_, n, _, _)| n == "cls.predictions.bias") {
            plan.tied_bias = None;
        }
        if let Some((hf, t)) = plan.tied_bias.take() {
            plan.loads.push((hf, "cls.predictions.bias".into(), 0, t));
        }
        plan
    }

    /// Whether any tensor belongs to the masked-LM head.
    fn has_head(&self) -> bool {
        self.loads.iter().any(|(_, n, _, _)| n.starts_with("cls.predictions."))
    }

    /// The layout the tensors show: a head, a pre-training or task head that is ignored, or neither.
    fn layout(&self, arch: Arch, has_head: bool) -> Layout {
        let task = self.ignored.keys().any(|(part, _)| !part.ends_with("pooler"));
        match (has_head, task) {
            (true, true) if arch == Arch::Bert => Layout::PreTraining,
            (true, _) => Layout::MaskedLm,
            (false, true) => Layout::Task,
            (false, false) => Layout::Encoder,
        }
    }

    /// Copies the tensors into the variables of `vs`; returns notes on ignored tensors, or the grouped error.
    fn assign(self, vs: &VarStore, mapper: &Mapper, file: &Path, what: &str) -> Result<Vec<String>> {
        let vars: HashMap<String, Tensor> = vs.variables();
        let mut problems = Problems::default();
        let mut filled = BTreeSet::new();
        let _guard = tch::no_grad_guard();
        for (hf, target, skip, t) in self.loads {
            let Some(var) = vars.get(&target) else {
                problems.unexpected.push((hf, t.size()));
                continue;
            };
            let rows = t.size().first().copied().unwrap_or(0);
            let want_hf = {
                let mut s = var.size();
                s[0] += skip as i64;
                s
            };
            if t.size() != want_hf {
                problems.misshaped.push((hf, t.size(), want_hf));
                filled.insert(target); // reported as mis-shaped, not also as missing
                continue;
            }
            let t = if skip > 0 { t.narrow(0, skip as i64, rows - skip as i64) } else { t };
            let mut var = var.shallow_clone();
            var.copy_(&t.to_kind(Kind::Float).to_device(var.device()));
            filled.insert(target);
        }
        problems.unexpected.extend(self.unknown);
        problems.missing =
            vars.iter().filter(|(n, _)| !filled.contains(*n)).map(|(n, v)| (mapper.hf_name(n), v.size())).collect();
        if !problems.is_empty() {
            return Err(Error::format_file(file, format!("the tensors do not fit {what}:\n{}", problems.report())));
        }
        Ok(self
            .ignored
            .into_iter()
            .map(|((part, why), names)| format!("ignored {} tensor(s) {part}.* ({why})", names.len()))
            .collect())
    }
}

/// Tensors that do not fit.
#[derive(Debug, Default)]
struct Problems {
    unexpected: Vec<(String, Vec<i64>)>,
    /// Under the checkpoint's names.
    missing: Vec<(String, Vec<i64>)>,
    /// (name, shape, expected shape).
    misshaped: Vec<(String, Vec<i64>, Vec<i64>)>,
}

/// Names shown per kind of problem.
const SHOWN: usize = 3;
/// Module groups shown per kind of problem.
const GROUPS: usize = 5;

impl Problems {
    fn is_empty(&self) -> bool {
        self.unexpected.is_empty() && self.missing.is_empty() && self.misshaped.is_empty()
    }

    /// One line per kind: the count, the module groups with their counts, the first few names.
    fn report(mut self) -> String {
        let mut lines = Vec::new();
        for (kind, list) in [("unexpected", &mut self.unexpected), ("missing", &mut self.missing)] {
            if list.is_empty() {
                continue;
            }
            list.sort();
            let names: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
            let first: Vec<String> = list.iter().take(SHOWN).map(|(n, s)| format!("{n} {s:?}")).collect();
            lines.push(format!(
                "  {kind}: {} — {}; first: {}{}",
                count(list.len()),
                groups(&names),
                first.join(", "),
                if list.len() > SHOWN { ", …" } else { "" }
            ));
        }
        if !self.misshaped.is_empty() {
            self.misshaped.sort();
            let first: Vec<String> = self
                .misshaped
                .iter()
                .take(SHOWN)
                .map(|(n, s, w)| format!("{n} is {s:?}, the model expects {w:?}"))
                .collect();
            lines.push(format!(
                "  wrong shape: {} — {}{}",
                count(self.misshaped.len()),
                first.join("; "),
                if self.misshaped.len() > SHOWN { "; …" } else { "" }
            ));
        }
        lines.join("\n")
    }
}

fn count(n: usize) -> String {
    format!("{n} tensor{}", if n == 1 { "" } else { "s" })
}

/// The module group of a tensor name: up to its first layer index (`encoder.layer.*`), else its first two
/// segments (`cls.predictions.*`), else its first (`classifier.*`).
fn group(name: &str) -> String {
    let segs: Vec<&str> = name.split('.').collect();
    let k = segs
        .iter()
        .position(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or_else(|| 2.min(segs.len().saturating_sub(1)))
        .max(1);
    format!("{}.*", segs[..k.min(segs.len())].join("."))
}

/// `a.* (3), b.* (1), …` over `names`, most numerous first.
fn groups(names: &[&str]) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for n in names {
        *counts.entry(group(n)).or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let more = v.len().saturating_sub(GROUPS);
    let shown: Vec<String> = v.into_iter().take(GROUPS).map(|(g, c)| format!("{g} ({c})")).collect();
    let tail =
        if more > 0 { format!(" and {more} more group{}", if more == 1 { "" } else { "s" }) } else { String::new() };
    format!("{}{tail}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ModelConfig {
        ModelConfig {
            vocab_size: 20,
            hidden: 8,
            layers: 1,
            heads: 2,
            ffn: Some(16),
            max_positions: 10,
            type_vocab_size: 2,
            ..Default::default()
        }
    }

    /// A BertForMaskedLM state dict of `cfg` (crossling's names are its names).
    fn hf_tensors(cfg: &ModelConfig) -> Vec<(String, Tensor)> {
        let vs = VarStore::new(Device::Cpu);
        MlmModel::new(&vs.root(), cfg).unwrap();
        let mut v: Vec<(String, Tensor)> = vs.variables().into_iter().map(|(n, t)| (n, t.detach().copy())).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    fn zeros(shape: &[i64]) -> Tensor {
        Tensor::zeros(shape, (Kind::Float, Device::Cpu))
    }

    fn run(t: Vec<(String, Tensor)>, with_head: bool) -> Result<(VarStore, Vec<String>)> {
        let mapper = Mapper::new(Arch::Bert, t.iter().map(|(n, _)| n.as_str()), true, 0);
        let plan = Plan::new(&mapper, t);
        let (vs, _) = build_model(&cfg(), Device::Cpu, with_head).unwrap();
        let notes = plan.assign(&vs, &mapper, Path::new("w.safetensors"), "a BertForMaskedLM")?;
        Ok((vs, notes))
    }

    #[test]
    fn fills_every_variable_and_notes_ignored_heads() {
        let c = cfg();
        let mut t = hf_tensors(&c);
        for (_, x) in t.iter_mut() {
            *x = x.ones_like() * 0.5;
        }
        t.push(("bert.pooler.dense.weight".into(), zeros(&[8, 8])));
        t.push(("bert.pooler.dense.bias".into(), zeros(&[8])));
        t.push(("cls.seq_relationship.weight".into(), zeros(&[2, 8])));
        t.push(("cls.predictions.decoder.weight".into(), zeros(&[20, 8])));
        let (vs, notes) = run(t, true).unwrap();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("2 tensor(s) bert.pooler.*")), "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("1 tensor(s) cls.seq_relationship.*")), "{notes:?}");
        for (n, v) in vs.variables() {
            assert_eq!(v.mean(Kind::Float).double_value(&[]), 0.5, "{n}");
        }
    }

    #[test]
    fn a_bare_encoder_loads_without_a_head() {
        let t: Vec<(String, Tensor)> = hf_tensors(&cfg())
            .into_iter()
            .filter(|(n, _)| n.starts_with("bert."))
            .map(|(n, x)| (n["bert.".len()..].to_string(), x.ones_like()))
            .collect();
        let mapper = Mapper::new(Arch::Bert, t.iter().map(|(n, _)| n.as_str()), true, 0);
        let plan = Plan::new(&mapper, t);
        assert!(!plan.has_head());
        assert_eq!(plan.layout(Arch::Bert, false), Layout::Encoder);
        let (vs, model) = build_model(&cfg(), Device::Cpu, false).unwrap();
        plan.assign(&vs, &mapper, Path::new("w"), "a BertModel").unwrap();
        assert!(vs.variables().keys().all(|n| n.starts_with("bert.")));
        let h = Tensor::ones([1, 3, 8], (Kind::Float, Device::Cpu));
        assert!(model.logits(&h, "en").unwrap().isnan().all().int64_value(&[]) == 1, "an unread head computes NaN");
    }

    #[test]
    fn mismatches_are_grouped_with_counts_and_first_names() {
        // A BertModel's tensors (no prefix) where a prefixed BertForMaskedLM is expected: everything is wrong.
        let mut t: Vec<(String, Tensor)> = hf_tensors(&cfg())
            .into_iter()
            .map(|(n, x)| (n.strip_prefix("bert.").map_or(n.clone(), |r| format!("bert.x.{r}")), x))
            .collect();
        t.push(("bert.embeddings.word_embeddings.weight".into(), zeros(&[21, 8])));
        t.retain(|(n, _)| n != "cls.predictions.bias");
        let e = run(t, true).unwrap_err().to_string();
        assert!(e.contains("w.safetensors") && e.contains("the tensors do not fit a BertForMaskedLM"), "{e}");
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 4, "{e}");
        assert!(
            lines[1]
                .starts_with("  unexpected: 21 tensors — bert.x.encoder.layer.* (16), bert.x.* (5); first: bert.x.emb"),
            "{e}"
        );
        assert!(lines[1].ends_with(", …"), "{e}");
        assert!(
            lines[2].starts_with(
                "  missing: 21 tensors — bert.encoder.layer.* (16), bert.embeddings.* (4), cls.predictions.* (1)"
            ),
            "{e}"
        );
        assert!(
            lines[3].contains(
                "wrong shape: 1 tensor — bert.embeddings.word_embeddings.weight is [21, 8], the model expects [20, 8]"
            ),
            "{e}"
        );
    }

    #[test]
    fn legacy_layer_norm_names_and_decoder_bias_load() {
        let t: Vec<(String, Tensor)> = hf_tensors(&cfg())
            .into_iter()
            .map(|(n, x)| {
                let n = n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta");
                let n = if n == "cls.predictions.bias" { "cls.predictions.decoder.bias".to_string() } else { n };
                (n, x)
            })
            .collect();
        assert!(run(t, true).unwrap().1.is_empty());
    }

    #[test]
    fn the_tensors_correct_a_class_that_does_not_match() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let c = cfg();
        Tensor::write_safetensors(&hf_tensors(&c), d.join("model.safetensors")).unwrap();
        let mut v = super::super::config::hf_config_json(&c, 0);
        for (class, want) in [
            (
                "BertModel",
                "names the class BertModel, whose layout has no masked-LM head; its tensors read as a \
              BertForMaskedLM (encoder + masked-LM head)",
            ),
            (
                "BertForFancyThings",
                "names the class BertForFancyThings, which crossling does not know; its tensors \
              read as a BertForMaskedLM",
            ),
        ] {
            v["architectures"] = serde_json::json!([class]);
            std::fs::write(d.join("config.json"), v.to_string()).unwrap();
            let imp = import_hf(d, Device::Cpu).unwrap();
            assert!(imp.has_mlm_head && imp.layout == Layout::MaskedLm && imp.class == "BertForMaskedLM");
            assert!(imp.notes.iter().any(|n| n.contains(want)), "{:?}", imp.notes);
        }
    }

    #[test]
    fn groups_and_counts() {
        assert_eq!(group("roberta.encoder.layer.11.output.dense.weight"), "roberta.encoder.layer.*");
        assert_eq!(group("cls.predictions.transform.dense.weight"), "cls.predictions.*");
        assert_eq!(group("classifier.weight"), "classifier.*");
        assert_eq!(group("weight"), "weight.*");
        let names = ["a.1.x", "a.2.x", "b.c.d", "e.f", "g.h", "i.j", "k.l"];
        assert_eq!(groups(&names), "a.* (2), b.c.* (1), e.* (1), g.* (1), i.* (1) and 1 more group");
    }
}
