//! NLI on frozen representations: one classifier, trained on English, on top of either static word vectors or a
//! pre-trained encoder's hidden states, neither of which trains (Liu et al. 2020, §3.1.2: XNLI with the same
//! downstream model on GloVe, word2vec and BERT; here [`crate::tasks::frozen_nli::transfer`] runs it zero-shot on XNLI).
//!
//! **Classifier** (the same for every representation): the sentence encoder of InferSent (Conneau et al. 2017),
//! used for the XNLI baselines on aligned word vectors (Conneau et al. 2018, §4.2), reading frozen token features.
//! Premise and hypothesis are encoded separately by the same encoder (a BERT never attends across the pair, so the
//! classifier is the only thing that compares the two sides, as it is for static vectors):
//! ```text
//! x_t     = γ Σ_l softmax(w)_l · LN(h_{l,t})            frozen features of token t at layer l (a static model
//!                                                       has one layer); LN without parameters; w, γ learned
//! →h_t, ←h_t = forward / backward LSTM over x_1..x_n   ([`crate::nn::lstm`], each direction `lstm_hidden` wide; the backward one
//!                                                       reads each sentence reversed within its own length)
//! u       = max_t [→h_t ; ←h_t]                         BiLSTM-max over the sentence's tokens
//! f       = [u ; v ; |u − v| ; u ⊙ v]                  u: premise, v: hypothesis
//! logits  = W₂ · dropout(ReLU(W₁ · dropout(f) + b₁)) + b₂,   3 classes (entailment, neutral, contradiction)
//! ```
//! The tokens are the model's subword tokens of each sentence without `[CLS]` / `[SEP]`; an encoder still reads
//! `[CLS] sentence [SEP]` and its features at the sentence's positions are kept. The learned layer weights
//! `softmax(w)` are ELMo's scalar mix (Peters et al. 2018), so no layer has to be chosen for an encoder; the
//! parameter-free layer normalisation puts static vectors and hidden states on one scale.
//!
//! **Training**: cross-entropy, Adam at a fixed rate, the gradient clipped to a global norm, dropout seeded per
//! step, best state by English dev accuracy at the end of each epoch ([`crate::tasks::finetune::train_with_selection`]).
//! Presets ([`FrozenNliConfig::at`]): `paper` InferSent's widths (2 × 2048 LSTM, 512 MLP) on all of MNLI for
//! 5 epochs; `cpu` 2 × 128 and 256 on 20,000 pairs for 3 epochs; `smoke` 2 × 16 and 32 on 300 pairs, 1 epoch.
pub mod transfer;
use serde::{Deserialize, Serialize};
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::{LoadedModel, ModelTokenizer};
use crate::nn::batch::padded;
use crate::nn::dropout::dropout;
use crate::nn::lstm::Lstm;
use crate::scale::Scale;
use crate::tasks::finetune::HEAD_INIT;
use crate::tasks::finetune::{
    accuracy, mix, predict_classes, train_with_selection, EpochPlan, LrSchedule, OptimSettings, TrainOutcome,
};

/// Number of NLI classes (see [`crate::tasks::nli::CLASS_NAMES`]).
pub const CLASSES: usize = crate::tasks::nli::CLASSES;

/// Settings of a frozen-representation NLI run (see the module docs for the presets; the default is `cpu`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrozenNliConfig {
    /// Width of each LSTM direction.
    pub lstm_hidden: usize,
    /// Width of the MLP's hidden layer.
    pub mlp_hidden: usize,
    /// Dropout on the pair features and the MLP's hidden layer.
    pub dropout: f64,
    /// Adam's fixed learning rate.
    pub lr: f64,
    /// Pairs per optimiser step.
    pub batch_size: usize,
    pub epochs: usize,
    /// Cap on the English training pairs (after the dev hold-out); `None` = all.
    pub max_train: Option<usize>,
    /// English dev pairs held out of MNLI with the seed, for model selection.
    pub dev_size: usize,
    /// Cap on the XNLI dev pairs evaluated per language (the first ones, the same rows in every language).
    pub max_eval: Option<usize>,
    /// Longest sentence in tokens, `[CLS]` and `[SEP]` included (also capped by an encoder's positions).
    pub max_len: usize,
    /// Maximum global gradient norm.
    pub clip_norm: f64,
    /// Padded tokens per side of an evaluation batch.
    pub eval_batch_tokens: usize,
    pub seed: u64,
}

impl Default for FrozenNliConfig {
    fn default() -> Self {
        FrozenNliConfig {
            lstm_hidden: 128,
            mlp_hidden: 256,
            dropout: 0.1,
            lr: 1e-3,
            batch_size: 64,
            epochs: 3,
            max_train: Some(20_000),
            dev_size: 2_000,
            max_eval: None,
            max_len: 128,
            clip_norm: 5.0,
            eval_batch_tokens: 8_192,
            seed: 0,
        }
    }
}

impl FrozenNliConfig {
    /// The preset of a scale (see the module docs).
    pub fn at(scale: Scale) -> Self {
        let cpu = FrozenNliConfig::default();
        match scale {
            Scale::Smoke => FrozenNliConfig {
                lstm_hidden: 16,
                mlp_hidden: 32,
                epochs: 1,
                batch_size: 16,
                max_train: Some(300),
                dev_size: 100,
                max_eval: Some(100),
                max_len: 64,
                ..cpu
            },
            Scale::Cpu => cpu,
            Scale::Paper => FrozenNliConfig { lstm_hidden: 2048, mlp_hidden: 512, epochs: 5, max_train: None, ..cpu },
        }
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Invalid(format!("frozen NLI config: {what}")));
        if self.lstm_hidden == 0 || self.mlp_hidden == 0 {
            return bad("lstm_hidden and mlp_hidden must be positive");
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return bad("dropout must be in [0, 1)");
        }
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return bad("lr must be positive");
        }
        if self.batch_size == 0 || self.epochs == 0 || self.dev_size == 0 {
            return bad("batch_size, epochs and dev_size must be positive");
        }
        if self.max_len < 3 {
            return bad("max_len must be at least 3 ([CLS], one token, [SEP])");
        }
        if self.clip_norm.is_nan() || self.clip_norm <= 0.0 || self.eval_batch_tokens == 0 {
            return bad("clip_norm and eval_batch_tokens must be positive");
        }
        Ok(())
    }
}

/// What the classifier reads: static vectors looked up by the model tokenizer's ids, or a frozen encoder.
// A run holds one, so the variants' size difference costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Frozen {
    Static {
        /// Row `i` is the vector of token id `i` (zeros when the static model has none). `[vocab, d]`
        table: Tensor,
        /// Whether token id `i` has a vector.
        covered: Vec<bool>,
        tokenizer: ModelTokenizer,
    },
    Contextual(LoadedModel),
}

impl Frozen {
    /// Static vectors of the tokens of `tokenizer`: each id's token string is looked up in `vectors`.
    pub fn from_static(vectors: &crate::wordvec::WordVectors, tokenizer: ModelTokenizer, device: Device) -> Self {
        let (vocab, dim) = (tokenizer.vocab_size(), vectors.dim());
        let mut data = vec![0f32; vocab * dim];
        let mut covered = vec![false; vocab];
        for (id, row) in data.chunks_mut(dim).enumerate() {
            if let Some(v) = tokenizer.id_to_token(id as u32).and_then(|t| vectors.get(&t)) {
                row.copy_from_slice(v);
                covered[id] = true;
            }
        }
        let table = Tensor::from_slice(&data).view([vocab as i64, dim as i64]).to_device(device);
        Frozen::Static { table, covered, tokenizer }
    }

    pub fn tokenizer(&self) -> &ModelTokenizer {
        match self {
            Frozen::Static { tokenizer, .. } => tokenizer,
            Frozen::Contextual(m) => &m.tokenizer,
        }
    }

    /// Feature layers: 1 for static vectors, `L + 1` for an encoder (the embedding output and every layer).
    pub fn layers(&self) -> usize {
        match self {
            Frozen::Static { .. } => 1,
            Frozen::Contextual(m) => m.config.layers + 1,
        }
    }

    pub fn dim(&self) -> usize {
        match self {
            Frozen::Static { table, .. } => table.size()[1] as usize,
            Frozen::Contextual(m) => m.config.hidden,
        }
    }

    /// The longest input the representation takes, if it has a limit.
    pub fn max_positions(&self) -> Option<usize> {
        match self {
            Frozen::Static { .. } => None,
            Frozen::Contextual(m) => Some(m.config.max_positions),
        }
    }

    pub fn device(&self) -> Device {
        match self {
            Frozen::Static { table, .. } => table.device(),
            Frozen::Contextual(m) => m.device(),
        }
    }

    /// Frozen features of a padded batch of `[CLS] sentence [SEP]` rows at the sentences' positions (no gradients).
    ///
    /// # Shapes
    /// `ids`, `mask`: `[batch, seq]` → `[layers, batch, seq − 2, d]`; row `b` holds its `len_b − 2` tokens first.
    pub fn features(&self, ids: &Tensor, mask: &Tensor, lang: &str) -> Result<Tensor> {
        let seq = ids.size()[1];
        if seq < 3 {
            return Err(Error::Invalid(format!("frozen features: rows of {seq} ids cannot hold [CLS] x [SEP]")));
        }
        let all = tch::no_grad(|| -> Result<Tensor> {
            Ok(match self {
                Frozen::Static { table, .. } => {
                    table.index_select(0, &ids.flatten(0, 1)).view([1, ids.size()[0], seq, -1])
                }
                Frozen::Contextual(m) => {
                    Tensor::stack(&m.hidden_states(ids, Some(mask), lang)?.hidden_states, 0).to_kind(Kind::Float)
                }
            })
        })?;
        Ok(all.narrow(2, 1, seq - 2))
    }
}

/// One pair: `[CLS] … [SEP]` ids of each side and the class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairItem {
    pub premise: Vec<i64>,
    pub hypothesis: Vec<i64>,
    pub label: usize,
}

/// The classifier of the module docs.
#[derive(Debug)]
pub struct PairClassifier {
    /// Scalar-mix logits `w` `[layers]` and scale `γ` `[1]`.
    pub mix_logits: Tensor,
    pub mix_scale: Tensor,
    forward_lstm: Lstm,
    backward_lstm: Lstm,
    hidden: nn::Linear,
    out: nn::Linear,
    dropout: f64,
}

impl PairClassifier {
    /// A classifier under `p` for `layers` feature layers of width `dim`.
    pub fn new(p: &nn::Path, layers: usize, dim: usize, cfg: &FrozenNliConfig) -> Self {
        let h = cfg.lstm_hidden as i64;
        PairClassifier {
            mix_logits: p.zeros("mix_logits", &[layers as i64]),
            mix_scale: p.ones("mix_scale", &[1]),
            forward_lstm: Lstm::new(&(p / "lstm_fwd"), dim as i64, h),
            backward_lstm: Lstm::new(&(p / "lstm_bwd"), dim as i64, h),
            hidden: nn::linear(p / "mlp", 8 * h, cfg.mlp_hidden as i64, Default::default()),
            out: nn::linear(p / "out", cfg.mlp_hidden as i64, CLASSES as i64, Default::default()),
            dropout: cfg.dropout,
        }
    }

    /// The learned layer weights `softmax(w)`.
    pub fn layer_weights(&self) -> Vec<f64> {
        let w = tch::no_grad(|| self.mix_logits.softmax(0, Kind::Float).to_device(Device::Cpu));
        Vec::<f64>::try_from(w.to_kind(Kind::Double)).unwrap_or_default()
    }

    /// BiLSTM-max sentence vectors.
    ///
    /// # Shapes
    /// `features`: `[layers, batch, seq, d]`, `lens`: one length ≥ 1 per row (≤ seq) → `[batch, 2 · lstm_hidden]`
    pub fn encode(&self, features: &Tensor, lens: &[i64]) -> Tensor {
        let (layers, d) = (features.size()[0], features.size()[3]);
        let (batch, seq) = (features.size()[1], features.size()[2]);
        let device = features.device();
        let normed = features.layer_norm([d], None::<Tensor>, None::<Tensor>, 1e-5, false);
        let weights = self.mix_logits.softmax(0, Kind::Float).view([layers, 1, 1, 1]);
        let x = (normed * weights).sum_dim_intlist(0, false, Kind::Float) * &self.mix_scale; // [batch, seq, d]
                                                                                             // Row b reversed within its own length: t ↦ len_b − 1 − t for t < len_b (padding stays put).
        let mut rev = Vec::with_capacity((batch * seq) as usize);
        for &n in lens {
            rev.extend((0..seq).map(|t| if t < n { n - 1 - t } else { t }));
        }
        let rev = Tensor::from_slice(&rev).view([batch, seq, 1]).to_device(device);
        let fwd = self.forward_lstm.forward(&x);
        let bwd_rev = self.backward_lstm.forward(&x.gather(1, &rev.expand([batch, seq, d], false), false));
        let h = bwd_rev.size()[2];
        let bwd = bwd_rev.gather(1, &rev.expand([batch, seq, h], false), false);
        let both = Tensor::cat(&[fwd, bwd], 2); // [batch, seq, 2h]
        let positions = Tensor::arange(seq, (Kind::Int64, device)).view([1, seq]);
        let lens_t = Tensor::from_slice(lens).view([batch, 1]).to_device(device);
        let pad = positions.ge_tensor(&lens_t).unsqueeze(2); // [batch, seq, 1]
        both.masked_fill(&pad, f64::NEG_INFINITY).amax([1], false)
    }

    /// Class logits of premise and hypothesis vectors.
    ///
    /// # Shapes
    /// `u`, `v`: `[batch, 2 · lstm_hidden]` → `[batch, 3]`
    pub fn logits(&self, u: &Tensor, v: &Tensor, train: bool) -> Tensor {
        let f = Tensor::cat(&[u, v, &(u - v).abs(), &(u * v)], 1);
        let hidden = self.hidden.forward(&dropout(&f, self.dropout, train)).relu();
        self.out.forward(&dropout(&hidden, self.dropout, train))
    }
}

/// A frozen representation with a classifier, ready to train.
pub struct FrozenNli {
    pub frozen: Frozen,
    pub vs: nn::VarStore,
    pub classifier: PairClassifier,
    pub compute: Compute,
    pad: i64,
}

/// A padded side of a batch: ids, mask and the sentence lengths (specials excluded).
fn side(rows: &[&[i64]], pad: i64, device: Device) -> (Tensor, Tensor, Vec<i64>) {
    let (ids, mask, _) = padded(rows, pad, device);
    let lens = rows.iter().map(|r| r.len() as i64 - 2).collect();
    (ids, mask, lens)
}

impl FrozenNli {
    /// A classifier initialised from the config's seed, on `compute.device` (the representation's device).
    pub fn new(frozen: Frozen, compute: Compute, cfg: &FrozenNliConfig) -> Result<Self> {
        cfg.validate()?;
        if frozen.device() != compute.device {
            return Err(Error::Invalid(format!(
                "frozen NLI: the representation is on {:?} but the run computes on {:?}",
                frozen.device(),
                compute.device
            )));
        }
        let pad = frozen.tokenizer().specials().pad as i64;
        let vs = nn::VarStore::new(compute.device);
        let classifier = {
            let _rng = crate::device::torch_rng_lock();
            tch::manual_seed(mix(cfg.seed, HEAD_INIT, 0) as i64);
            PairClassifier::new(&vs.root(), frozen.layers(), frozen.dim(), cfg)
        };
        Ok(FrozenNli { frozen, vs, classifier, compute, pad })
    }

    /// Class logits of a batch of pairs of language `lang`.
    ///
    /// # Shapes
    /// → `[pairs, 3]`
    pub fn logits(&self, pairs: &[&PairItem], lang: &str, train: bool) -> Result<Tensor> {
        let device = self.compute.device;
        let mut sides = Vec::with_capacity(2);
        for rows in [
            pairs.iter().map(|p| p.premise.as_slice()).collect::<Vec<_>>(),
            pairs.iter().map(|p| p.hypothesis.as_slice()).collect::<Vec<_>>(),
        ] {
            if let Some(r) = rows.iter().find(|r| r.len() < 3) {
                return Err(Error::Invalid(format!("frozen NLI: a sentence of {} ids has no token", r.len())));
            }
            let (ids, mask, lens) = side(&rows, self.pad, device);
            let features = self.frozen.features(&ids, &mask, lang)?;
            sides.push(self.classifier.encode(&features, &lens));
        }
        Ok(self.classifier.logits(&sides[0], &sides[1], train))
    }

    /// Predicted classes in input order (no dropout, no gradients); batches by the longer side's length.
    pub fn predict(&self, items: &[PairItem], lang: &str, batch_tokens: usize) -> Result<Vec<usize>> {
        let lens: Vec<usize> = items.iter().map(|it| it.premise.len().max(it.hypothesis.len())).collect();
        predict_classes(&lens, batch_tokens, |batch| {
            let pairs: Vec<&PairItem> = batch.iter().map(|&i| &items[i]).collect();
            self.compute.forward(|| self.logits(&pairs, lang, false))
        })
    }

    pub fn accuracy(&self, items: &[PairItem], lang: &str, batch_tokens: usize) -> Result<f64> {
        let pred = self.predict(items, lang, batch_tokens)?;
        let gold: Vec<usize> = items.iter().map(|it| it.label).collect();
        Ok(accuracy(&pred, &gold))
    }

    /// Whether each item is classified correctly (the accuracy is the share of `true`).
    pub fn hits(&self, items: &[PairItem], lang: &str, batch_tokens: usize) -> Result<Vec<bool>> {
        let pred = self.predict(items, lang, batch_tokens)?;
        Ok(pred.iter().zip(items).map(|(&p, it)| p == it.label).collect())
    }

    /// Trains on `train` (language `lang`), keeps the state with the best accuracy on `dev`. Holds
    /// [`crate::device::torch_rng_lock`] while it runs.
    pub fn train(
        &mut self,
        train: &[PairItem],
        dev: &[PairItem],
        lang: &str,
        cfg: &FrozenNliConfig,
        progress: bool,
    ) -> Result<TrainOutcome> {
        cfg.validate()?;
        if train.is_empty() || dev.is_empty() {
            return Err(Error::Invalid(format!(
                "frozen NLI needs training and dev pairs (got {} and {})",
                train.len(),
                dev.len()
            )));
        }
        if let Some(it) = train.iter().chain(dev).find(|it| it.label >= CLASSES) {
            return Err(Error::Invalid(format!("frozen NLI: class {} of {CLASSES}", it.label)));
        }
        let _rng = crate::device::torch_rng_lock();
        let settings = OptimSettings {
            lr: cfg.lr,
            schedule: LrSchedule::Fixed,
            warmup_fraction: 0.0,
            clip_norm: cfg.clip_norm,
            total_steps: 0,
            seed: cfg.seed,
            head: None,
        };
        let plan = EpochPlan {
            n_train: train.len(),
            batch_size: cfg.batch_size,
            epochs: cfg.epochs,
            eval_every: 0,
            label: "nli (frozen)",
            progress,
        };
        let device = self.compute.device;
        let this = &*self;
        let loss_of = |chunk: &[usize]| -> Result<Tensor> {
            let pairs: Vec<&PairItem> = chunk.iter().map(|&i| &train[i]).collect();
            let labels: Vec<i64> = pairs.iter().map(|p| p.label as i64).collect();
            let labels = Tensor::from_slice(&labels).to_device(device);
            Ok(this.logits(&pairs, lang, true)?.to_kind(Kind::Float).cross_entropy_for_logits(&labels))
        };
        let dev_score = || this.accuracy(dev, lang, cfg.eval_batch_tokens);
        train_with_selection(&this.vs, this.compute, settings, plan, loss_of, dev_score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::codeswitch::SplitMix64;

    /// A word-level tokenizer over `[PAD] [UNK] [CLS] [SEP] [MASK] a0 … a{n}`.
    fn tokenizer(n: usize) -> (tempfile::TempDir, ModelTokenizer) {
        let mut vocab: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].map(String::from).to_vec();
        vocab.extend((0..n).map(|i| format!("a{i}")));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vocab.txt"), vocab.join("\n")).unwrap();
        let tok = ModelTokenizer::HuggingFace(crate::model::tokenizer::load_hf_tokenizer(dir.path()).unwrap());
        (dir, tok)
    }

    /// Random vectors for tokens a0 … a{n}, except those in `missing`.
    fn vectors(n: usize, dim: usize, missing: &[usize]) -> crate::wordvec::WordVectors {
        let mut rng = SplitMix64::new(3);
        let words: Vec<String> = (0..n).filter(|i| !missing.contains(i)).map(|i| format!("a{i}")).collect();
        let data = (0..words.len() * dim).map(|_| rng.below(1000) as f32 / 500.0 - 1.0).collect();
        crate::wordvec::WordVectors::new(words, dim, data).unwrap()
    }

    /// Entailment when the hypothesis repeats the premise's first token, contradiction when it holds that token's
    /// "opposite" (id + 10), neutral otherwise; random filler tokens elsewhere.
    fn synthetic(n: usize, seed: u64) -> Vec<PairItem> {
        let mut rng = SplitMix64::new(seed);
        let mut token = |lo: i64| 5 + lo + rng.below(10) as i64;
        (0..n)
            .map(|k| {
                let label = k % 3;
                let key = token(0);
                let mut premise = vec![2, key, token(20), token(20), 3];
                let mut hypothesis = match label {
                    0 => vec![2, token(20), key, 3],
                    2 => vec![2, token(20), key + 10, 3],
                    _ => vec![2, token(20), token(20), 3],
                };
                if k % 2 == 0 {
                    premise.insert(2, token(20));
                    hypothesis.insert(1, token(20));
                }
                PairItem { premise, hypothesis, label }
            })
            .collect()
    }

    fn cfg() -> FrozenNliConfig {
        FrozenNliConfig { lstm_hidden: 16, mlp_hidden: 32, batch_size: 16, epochs: 8, seed: 4, ..Default::default() }
    }

    #[test]
    fn static_tables_follow_the_tokenizer_and_mark_gaps() {
        let (_d, tok) = tokenizer(30);
        let v = vectors(30, 4, &[7]);
        let f = Frozen::from_static(&v, tok, Device::Cpu);
        let Frozen::Static { table, covered, .. } = &f else { unreachable!() };
        assert_eq!(table.size(), [35, 4]);
        assert_eq!(covered.iter().filter(|c| **c).count(), 29);
        assert!(!covered[2] && !covered[5 + 7] && covered[5]);
        let row: Vec<f32> = Vec::try_from(table.get(5)).unwrap();
        assert_eq!(row, v.get("a0").unwrap());
        let ids = Tensor::from_slice(&[2i64, 5, 6, 3, 2, 9, 3, 0]).view([2, 4]);
        let feats = f.features(&ids, &ids.ne(0).to_kind(Kind::Int64), "en").unwrap();
        assert_eq!(feats.size(), [1, 2, 2, 4]);
        assert!(feats.get(0).get(0).get(1).equal(&table.get(6)));
    }

    #[test]
    fn the_backward_direction_ignores_padding() {
        let _rng = crate::device::torch_rng_lock();
        let c = cfg();
        let vs = nn::VarStore::new(Device::Cpu);
        let clf = PairClassifier::new(&vs.root(), 2, 4, &c);
        let x = Tensor::randn([2, 1, 3, 4], (Kind::Float, Device::Cpu));
        let alone = clf.encode(&x, &[3]);
        // The same sentence padded with garbage to 6 positions, next to a full row.
        let garbage = Tensor::randn([2, 1, 3, 4], (Kind::Float, Device::Cpu)) * 100.0;
        let padded = Tensor::cat(&[&x, &garbage], 2);
        let other = Tensor::randn([2, 1, 6, 4], (Kind::Float, Device::Cpu));
        let both = clf.encode(&Tensor::cat(&[padded, other], 1), &[3, 6]);
        assert!(both.get(0).allclose(&alone.get(0), 1e-5, 1e-6, false), "{both:?} vs {alone:?}");
    }

    #[test]
    fn the_classifier_learns_a_learnable_task_on_static_vectors() {
        let (_d, tok) = tokenizer(40);
        let v = vectors(40, 8, &[]);
        let mut m = FrozenNli::new(Frozen::from_static(&v, tok, Device::Cpu), Compute::cpu(), &cfg()).unwrap();
        let (train, dev, test) = (synthetic(600, 1), synthetic(90, 2), synthetic(300, 3));
        let before = m.accuracy(&test, "en", 512).unwrap();
        let table_before = match &m.frozen {
            Frozen::Static { table, .. } => table.copy(),
            Frozen::Contextual(_) => unreachable!(),
        };
        let out = m.train(&train, &dev, "en", &cfg(), false).unwrap();
        let after = m.accuracy(&test, "en", 512).unwrap();
        assert!(after > 0.85, "accuracy {before:.3} → {after:.3} (chance 1/3); {out:?}");
        assert_eq!(m.accuracy(&dev, "en", 512).unwrap(), out.best_dev_score);
        let Frozen::Static { table, .. } = &m.frozen else { unreachable!() };
        assert!(table.equal(&table_before), "the static vectors must not train");
        assert_eq!(m.classifier.layer_weights(), [1.0]);
    }

    #[test]
    fn an_encoder_stays_frozen_and_its_layers_are_mixed() {
        let (model, vs) = crate::tasks::tiny_model(40, 16, crate::model::SharingPlan::default(), 5);
        let config = model.config().clone();
        let (_d, tok) = tokenizer(35);
        let source = crate::model::load::ModelSource {
            kind: crate::model::load::ModelKind::Crossling,
            path: std::path::PathBuf::from("tiny"),
            weights_sha256: "tiny".into(),
        };
        let loaded = LoadedModel { model, vs, tokenizer: tok, config, source, notes: Vec::new() };
        let before: Vec<(String, Tensor)> =
            loaded.vs.variables().into_iter().map(|(k, v)| (k, v.detach().copy())).collect();
        let c = FrozenNliConfig { epochs: 2, ..cfg() };
        let mut m = FrozenNli::new(Frozen::Contextual(loaded), Compute::cpu(), &c).unwrap();
        assert_eq!(m.frozen.layers(), 3);
        m.train(&synthetic(96, 1), &synthetic(30, 2), "en", &c, false).unwrap();
        let Frozen::Contextual(after) = &m.frozen else { unreachable!() };
        let after = after.vs.variables();
        for (k, v) in before {
            assert!(v.equal(&after[&k]), "{k} moved");
        }
        let w = m.classifier.layer_weights();
        assert_eq!(w.len(), 3);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-6 && w.iter().any(|x| (x - 1.0 / 3.0).abs() > 1e-4), "{w:?}");
    }

    #[test]
    fn one_seed_gives_one_run_and_configs_validate() {
        let (_d, tok) = tokenizer(40);
        let v = vectors(40, 8, &[]);
        let run = |seed: u64| {
            let c = FrozenNliConfig { seed, epochs: 1, ..cfg() };
            let f = Frozen::from_static(&v, tok.clone(), Device::Cpu);
            let mut m = FrozenNli::new(f, Compute::cpu(), &c).unwrap();
            let out = m.train(&synthetic(64, 6), &synthetic(16, 7), "en", &c, false).unwrap();
            out.loss.curve.iter().map(|p| p.loss).collect::<Vec<_>>()
        };
        crate::tasks::assert_seed_determines_curve(run);
        for s in Scale::ALL {
            FrozenNliConfig::at(s).validate().unwrap();
        }
        let e = FrozenNliConfig { dropout: 1.0, ..cfg() }.validate().unwrap_err().to_string();
        assert!(e.contains("dropout"), "{e}");
        let e = serde_json::from_str::<FrozenNliConfig>(r#"{"hidden": 3}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field"), "{e}");
    }
}
