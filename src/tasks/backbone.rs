//! What a task head reads: the hidden states of a batch, from a fine-tuned encoder or from fresh Transformer layers
//! stacked on a frozen layer of pretrained encoders (the contextual-alignment transfer of Wu, Conneau et al. 2020,
//! §5.1.2 and Figure 5).
//!
//! - [`Backbone::Encoder`]: a pretrained encoder fine-tuned with the head (its freezing plan applied); the head reads
//!   the last layer. This is every task's usual setting.
//! - [`Backbone::Stacked`]: `depth` fresh Transformer layers (initialised from the seed, the shape of the pretrained
//!   layers) on top of layer `i` of frozen encoders — "task-specific layers on top of the i-th English layer: four
//!   Transformer layers and a task-specific layer … keep the first i pretrained layers frozen" (§5.1.2). Each language
//!   reads its own frozen encoder, optionally followed by a linear map `W` into the English space:
//!   ```text
//!   h⁰ = W · Enc_lang^{≤ i}(x)          (no dropout, no gradients; W = I when the language has no map)
//!   h^{k} = Layer_k(h^{k−1}),  k = 1..depth    → the head
//!   ```
//!   With one bilingual encoder for every language and no maps this is the study's biMLM line of Figure 5; with the
//!   English monolingual encoder for English and each language's monolingual encoder mapped by Procrustes
//!   ([`crate::tasks::contextual_map`]) it is the "MLM align" line.
//!
//! [`TaskModel`] bundles a backbone with the variable store that trains and the provenance of the models read.
use std::collections::BTreeMap;

use tch::{nn::VarStore, Device, Tensor};

use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::layer::Layer;
use crate::model::load::LoadedModel;
use crate::model::{MlmModel, ModelConfig, ModelTokenizer, SharingPlan};
use crate::nn::packing::Packing;
use crate::tasks::common::{model_languages, ModelInfo, StackInfo, StackInputInfo, TRAIN_LANG};
use crate::tasks::finetune::{apply_freeze, check_device, check_fit, layer_index, mix, FreezePlan, FreezeReport};

/// Parameter-name prefix of the fresh layers of a [`LayerStack`].
pub const STACK: &str = "stack";
/// Seed purpose of the fresh layers' initialisation.
const STACK_INIT: u64 = 15;

/// The study's fresh layers (4) over its 8-layer models, scaled with depth: `max(1, round(4 · layers / 8))`.
pub fn default_stack_depth(model_layers: usize) -> usize {
    ((4 * model_layers + 4) / 8).max(1)
}

/// How one language enters a [`LayerStack`]: which frozen encoder reads it, and the map into English space.
#[derive(Debug)]
pub struct StackInput {
    /// Index into the stack's frozen encoders.
    pub source: usize,
    /// `W` `[d, d]` (rows are vectors: `h ↦ h Wᵀ`), or `None` for the identity.
    pub map: Option<Tensor>,
    /// Provenance of the map (pairs it was fit on, cosines).
    pub map_info: Option<serde_json::Value>,
}

/// Fresh Transformer layers over layer `layer` of frozen pretrained encoders (see the module docs).
#[derive(Debug)]
pub struct LayerStack {
    /// The frozen layer `i` the stack reads (0 = the embedding output).
    pub layer: usize,
    /// The fresh, trained layers (under `stack.{k}` of the task's store).
    pub layers: Vec<Layer>,
    sources: Vec<LoadedModel>,
    inputs: BTreeMap<String, StackInput>,
    config: ModelConfig,
}

impl LayerStack {
    /// The frozen parameters the stack reads: each encoder's embeddings and layers below `layer` (tensors, values).
    fn frozen_params(&self) -> (usize, usize) {
        let read = |name: &str| {
            let rest = name.strip_prefix("bert.").unwrap_or("");
            rest.starts_with("embeddings.") || layer_index(rest).is_some_and(|k| k < self.layer)
        };
        let vars = self.sources.iter().flat_map(|s| s.vs.variables().into_iter());
        vars.filter(|(name, _)| read(name)).fold((0, 0), |(t, n), (_, v)| (t + 1, n + v.numel()))
    }
}

/// What turns a batch of subword ids into the hidden states a task head reads (see the module docs).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per fine-tuning run, never in a collection
pub enum Backbone {
    /// A pretrained encoder fine-tuned with the head.
    Encoder { model: MlmModel, tokenizer: ModelTokenizer },
    /// Fresh layers over a frozen layer of pretrained encoders.
    Stacked(LayerStack),
}

impl Backbone {
    /// The shape of the encoder (for a stack: of its fresh layers, which copy the first frozen encoder's).
    pub fn config(&self) -> &ModelConfig {
        match self {
            Backbone::Encoder { model, .. } => model.config(),
            Backbone::Stacked(s) => &s.config,
        }
    }

    /// The tokenizer that encodes language `lang`.
    pub fn tokenizer(&self, lang: &str) -> Result<&ModelTokenizer> {
        match self {
            Backbone::Encoder { tokenizer, .. } => Ok(tokenizer),
            Backbone::Stacked(s) => Ok(&s.sources[input(s, lang)?.source].tokenizer),
        }
    }

    /// The longest input any language's encoder reads.
    pub fn max_positions(&self) -> usize {
        match self {
            Backbone::Encoder { model, .. } => model.config().max_positions,
            Backbone::Stacked(s) => s.sources.iter().map(|m| m.config.max_positions).min().unwrap_or(0),
        }
    }

    /// The padding id of every language (an error when the encoders of a stack disagree).
    pub fn pad(&self) -> Result<i64> {
        match self {
            Backbone::Encoder { tokenizer, .. } => Ok(tokenizer.specials().pad as i64),
            Backbone::Stacked(s) => {
                let pads: Vec<u32> = s.sources.iter().map(|m| m.tokenizer.specials().pad).collect();
                match pads.windows(2).find(|w| w[0] != w[1]) {
                    Some(w) => Err(Error::Invalid(format!("the stacked encoders pad with different ids ({w:?})"))),
                    None => Ok(pads[0] as i64),
                }
            }
        }
    }

    /// The hidden states the head reads for a batch of language `lang`; `train` turns dropout on (never in the
    /// frozen part of a stack).
    ///
    /// # Shapes
    /// `ids`: `[batch, seq]` i64, `mask`: `[batch, seq]` → `[batch, seq, hidden]`
    pub fn hidden(&self, ids: &Tensor, mask: &Tensor, lang: &str, train: bool) -> Result<Tensor> {
        match self {
            Backbone::Encoder { model, .. } => {
                Ok(model.encoder.forward(ids, Some(mask), lang, train)?.last().shallow_clone())
            }
            Backbone::Stacked(s) => {
                let inp = input(s, lang)?;
                let frozen = &s.sources[inp.source].model.encoder;
                let bottom = tch::no_grad(|| frozen.forward_until(ids, Some(mask), lang, s.layer, false))?;
                let mut x = match &inp.map {
                    Some(w) => bottom.matmul(&w.to_kind(bottom.kind()).tr()), // [batch, seq, hidden]
                    None => bottom,
                };
                let packing = Packing::of(Some(mask));
                for layer in &s.layers {
                    x = layer.forward_packed(&x, Some(mask), packing.as_ref(), train);
                }
                Ok(x)
            }
        }
    }

    /// Sets which variables of `vs` train under `plan` (the head's `head_prefixes` always do) and checks the devices.
    /// A stack trains its fresh layers and the head; its encoders stay frozen, so `plan` must freeze nothing more.
    pub fn freeze(
        &self,
        vs: &VarStore,
        plan: &FreezePlan,
        head_prefixes: &[&str],
        compute: &Compute,
    ) -> Result<FreezeReport> {
        match self {
            Backbone::Encoder { model, .. } => {
                check_fit(plan.layers, model.config().layers, vs, compute)?;
                apply_freeze(vs, plan, head_prefixes)
            }
            Backbone::Stacked(s) => {
                if *plan != FreezePlan::default() {
                    return Err(Error::Invalid(format!(
                        "a stack on frozen layer {} already freezes the pretrained encoders: freeze_layers and \
                         freeze_embeddings must stay unset",
                        s.layer
                    )));
                }
                check_device(vs, compute)?;
                if let Some(m) = s.sources.iter().find(|m| m.vs.device() != compute.device) {
                    return Err(Error::Invalid(format!(
                        "model {} lives on {:?} but fine-tuning was asked to run on {:?}",
                        m.source.path.display(),
                        m.vs.device(),
                        compute.device
                    )));
                }
                let stack = format!("{STACK}.");
                let mut prefixes: Vec<&str> = head_prefixes.to_vec();
                prefixes.push(&stack);
                let mut report = apply_freeze(vs, plan, &prefixes)?;
                let (tensors, params) = s.frozen_params();
                report.frozen_tensors += tensors;
                report.frozen_params += params;
                Ok(report)
            }
        }
    }
}

fn input<'a>(s: &'a LayerStack, lang: &str) -> Result<&'a StackInput> {
    s.inputs.get(lang).ok_or_else(|| {
        let known: Vec<&str> = s.inputs.keys().map(String::as_str).collect();
        Error::Invalid(format!("the stack reads no language '{lang}' (it reads {})", known.join(", ")))
    })
}

/// Checks that layer `layer` of `m` exists (0 = embeddings).
pub fn check_layer(m: &LoadedModel, layer: usize) -> Result<()> {
    if layer > m.config.layers {
        return Err(Error::Invalid(format!(
            "layer {layer} does not exist in the {}-layer model {}",
            m.config.layers,
            m.source.path.display()
        )));
    }
    Ok(())
}

/// Checks that `m` reads language `lang`.
pub fn check_reads(m: &LoadedModel, lang: &str) -> Result<()> {
    match model_languages(m) {
        Some(known) if !known.iter().any(|k| k == lang) => Err(Error::Invalid(format!(
            "model {} has no language '{lang}' (its languages: {})",
            m.source.path.display(),
            known.join(", ")
        ))),
        _ => Ok(()),
    }
}

/// A backbone with the variables that train and the provenance of the models it reads.
#[derive(Debug)]
pub struct TaskModel {
    pub backbone: Backbone,
    /// The encoder's own store (the head is added to it), or a stack's fresh store.
    pub vs: VarStore,
    pub info: ModelInfo,
    pub notes: Vec<String>,
}

impl From<LoadedModel> for TaskModel {
    fn from(loaded: LoadedModel) -> Self {
        let info = ModelInfo::of(&loaded);
        let LoadedModel { model, vs, tokenizer, notes, .. } = loaded;
        TaskModel { backbone: Backbone::Encoder { model, tokenizer }, vs, info, notes }
    }
}

impl TaskModel {
    /// A stack of `depth` fresh layers (seeded by `seed`) on frozen layer `layer` of `sources`; `inputs` names, per
    /// language, the source that reads it and its map. The provenance is the first source's, with the stack's.
    pub fn stacked(
        sources: Vec<LoadedModel>,
        inputs: BTreeMap<String, StackInput>,
        layer: usize,
        depth: usize,
        seed: u64,
    ) -> Result<Self> {
        let first = sources.first().ok_or_else(|| Error::Invalid("a stack needs at least one encoder".into()))?;
        if depth == 0 {
            return Err(Error::Invalid("a stack needs at least one fresh layer".into()));
        }
        let (hidden, device) = (first.config.hidden, first.vs.device());
        for m in &sources {
            check_layer(m, layer)?;
            if m.config.hidden != hidden || m.vs.device() != device {
                return Err(Error::Invalid(format!(
                    "stacked encoders must share width and device: {} is {} wide on {:?}, {} is {hidden} wide on {device:?}",
                    m.source.path.display(),
                    m.config.hidden,
                    m.vs.device(),
                    first.source.path.display()
                )));
            }
        }
        let mut infos = BTreeMap::new();
        for (lang, inp) in &inputs {
            let m =
                sources.get(inp.source).ok_or_else(|| Error::Invalid(format!("{lang}: no encoder {}", inp.source)))?;
            check_reads(m, lang)?;
            if let Some(w) = &inp.map {
                if w.size() != [hidden as i64, hidden as i64] || w.device() != device {
                    return Err(Error::Invalid(format!(
                        "{lang}: the map is {:?} on {:?}, expected [{hidden}, {hidden}] on {device:?}",
                        w.size(),
                        w.device()
                    )));
                }
            }
            let info = StackInputInfo {
                model: m.source.path.display().to_string(),
                weights_sha256: m.source.weights_sha256.clone(),
                map: inp.map_info.clone(),
            };
            infos.insert(lang.clone(), info);
        }
        for m in &sources {
            m.vs.variables().values().for_each(|v| {
                let _ = v.set_requires_grad(false);
            });
        }
        let config = ModelConfig { layers: depth, sharing: SharingPlan::default(), ..first.config.clone() };
        let vs = VarStore::new(device);
        let layers = {
            let _rng = crate::device::torch_rng_lock();
            tch::manual_seed(mix(seed, STACK_INIT, 0) as i64);
            (0..depth).map(|k| Layer::new(&(vs.root() / STACK / k), &config)).collect()
        };
        let mut info = ModelInfo::of(first);
        info.stack = Some(StackInfo { layer, depth, inputs: infos });
        let notes = sources.iter().flat_map(|m| m.notes.iter().cloned()).collect();
        let stack = LayerStack { layer, layers, sources, inputs, config };
        let backbone = Backbone::Stacked(stack);
        backbone.pad()?;
        Ok(TaskModel { backbone, vs, info, notes })
    }

    /// Checks, before any training, that the model reads English and each of `langs`.
    pub fn check_langs(&self, langs: &[String]) -> Result<()> {
        let needed = std::iter::once(TRAIN_LANG).chain(langs.iter().map(String::as_str));
        match &self.backbone {
            Backbone::Encoder { .. } => match &self.info.languages {
                Some(known) => match needed.into_iter().find(|l| !known.iter().any(|k| k == l)) {
                    Some(l) => Err(Error::Invalid(format!(
                        "model {} has no language '{l}' (its languages: {})",
                        self.info.path,
                        known.join(", ")
                    ))),
                    None => Ok(()),
                },
                None => Ok(()),
            },
            Backbone::Stacked(s) => needed.into_iter().try_for_each(|l| input(s, l).map(|_| ())),
        }
    }

    /// The device the trained variables live on.
    pub fn device(&self) -> Device {
        self.vs.device()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::finetune::is_trainable;

    fn loaded(seed: i64, langs: &[&str]) -> LoadedModel {
        crate::tasks::tiny_loaded(seed, langs)
    }

    fn batch() -> (Tensor, Tensor) {
        let ids = Tensor::from_slice(&[2i64, 7, 9, 11, 3, 2, 8, 3, 0, 0]).view([2, 5]);
        let mask = Tensor::from_slice(&[1i64, 1, 1, 1, 1, 1, 1, 1, 0, 0]).view([2, 5]);
        (ids, mask)
    }

    fn rotation(d: i64, seed: i64) -> Tensor {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(seed);
        let (q, _) = Tensor::linalg_qr(&Tensor::randn([d, d], (tch::Kind::Float, Device::Cpu)), "reduced");
        q
    }

    #[test]
    fn a_stack_reads_each_language_through_its_frozen_encoder_and_map() {
        let (en, fr) = (loaded(1, &["en"]), loaded(2, &["fr"]));
        let (ids, mask) = batch();
        let en_bottom = en.model.encoder.forward_until(&ids, Some(&mask), "en", 1, false).unwrap();
        let fr_bottom = fr.model.encoder.forward_until(&ids, Some(&mask), "fr", 1, false).unwrap();
        let w = rotation(32, 5);
        let read = |m: &LoadedModel| -> usize {
            let vars = m.vs.variables().into_iter();
            let read =
                vars.filter(|(k, _)| k.starts_with("bert.embeddings.") || k.starts_with("bert.encoder.layer.0."));
            read.map(|(_, v)| v.numel()).sum()
        };
        let read_params = read(&en) + read(&fr);
        let inputs = BTreeMap::from([
            ("en".to_string(), StackInput { source: 0, map: None, map_info: None }),
            ("fr".to_string(), StackInput { source: 1, map: Some(w.shallow_clone()), map_info: None }),
        ]);
        let tm = TaskModel::stacked(vec![en, fr], inputs, 1, 2, 7).unwrap();
        let Backbone::Stacked(s) = &tm.backbone else { panic!("not a stack") };
        // The fresh layers by hand: en reads its bottom as is, fr through the map.
        let by_hand = |x: Tensor| s.layers.iter().fold(x, |x, l| l.forward(&x, Some(&mask), false));
        for (lang, bottom) in [("en", en_bottom), ("fr", fr_bottom.matmul(&w.tr()))] {
            let got = tm.backbone.hidden(&ids, &mask, lang, false).unwrap();
            assert!((&got - by_hand(bottom)).abs().max().double_value(&[]) < 1e-6, "{lang}");
        }
        let e = tm.backbone.hidden(&ids, &mask, "de", false).unwrap_err().to_string();
        assert!(e.contains("no language 'de' (it reads en, fr)"), "{e}");
        // Only the fresh layers train; the encoders are frozen and counted as such.
        let report = tm.backbone.freeze(&tm.vs, &FreezePlan::default(), &["classifier."], &Compute::cpu()).unwrap();
        assert_eq!(report.trainable_tensors, tm.vs.variables().len());
        // Frozen: the embeddings and layer 0 of both encoders (what layer 1 is computed from), not their layer 1.
        assert_eq!(report.frozen_params, read_params, "{report:?}");
        let e = tm.check_langs(&["de".to_string()]).unwrap_err().to_string();
        assert!(e.contains("no language 'de'"), "{e}");
        tm.check_langs(&["fr".to_string()]).unwrap();
        assert!(tm
            .vs
            .variables()
            .keys()
            .all(|k| k.starts_with("stack.") && is_trainable(k, &FreezePlan::default(), &["stack."])));
        let plan = FreezePlan { layers: 1, ..FreezePlan::default() };
        let e = tm.backbone.freeze(&tm.vs, &plan, &[], &Compute::cpu()).unwrap_err().to_string();
        assert!(e.contains("must stay unset"), "{e}");
        let g = tm.backbone.hidden(&ids, &mask, "fr", true).unwrap().sum(tch::Kind::Float);
        g.backward();
        assert!(s.sources.iter().all(|m| m.vs.variables().values().all(|v| !v.requires_grad())));
        let info = tm.info.stack.as_ref().unwrap();
        assert_eq!((info.layer, info.depth, info.inputs["fr"].weights_sha256.as_str()), (1, 2, "sha-2"));
    }

    #[test]
    fn stacks_refuse_what_they_cannot_read() {
        let one = |l: &str, m: Option<Tensor>| {
            BTreeMap::from([(l.to_string(), StackInput { source: 0, map: m, map_info: None })])
        };
        let e = TaskModel::stacked(vec![loaded(1, &["en"])], one("fr", None), 1, 1, 0).unwrap_err().to_string();
        assert!(e.contains("has no language 'fr'"), "{e}");
        let e = TaskModel::stacked(vec![loaded(1, &["en"])], one("en", None), 3, 1, 0).unwrap_err().to_string();
        assert!(e.contains("layer 3 does not exist in the 2-layer model"), "{e}");
        let bad = Some(Tensor::zeros([4, 4], (tch::Kind::Float, Device::Cpu)));
        let e = TaskModel::stacked(vec![loaded(1, &["en"])], one("en", bad), 1, 1, 0).unwrap_err().to_string();
        assert!(e.contains("expected [32, 32]"), "{e}");
        assert!(TaskModel::stacked(vec![loaded(1, &["en"])], one("en", None), 1, 0, 0).is_err());
        assert_eq!([1, 2, 4, 8, 12].map(default_stack_depth), [1, 1, 2, 4, 6]);
    }
}
