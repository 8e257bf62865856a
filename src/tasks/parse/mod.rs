//! Dependency parsing for zero-shot cross-lingual transfer: the graph-based biaffine parser of Dozat & Manning
//! (2017) on the final layer's **first-subword** representations, fine-tuned with the encoder on English and applied
//! unchanged to other languages (Wu, Conneau et al. 2020 §3 and Table 1, following Wu & Dredze 2019).
//!
//! **Inputs.** A sentence of n gold words is `[CLS] w₁… w₂… … [SEP]` ([`crate::tasks::word_inputs`]); `r_i` (i = 1..n) is
//! the final-layer state of word i's first subword and `r_0`, the state of `[CLS]`, stands for the artificial ROOT.
//!
//! **Arcs.** One-layer MLPs (ReLU, dropout p on their output) give each word a dependent view and each candidate
//! head (ROOT and the words) a head view, and a biaffine form scores every arc `j → i`:
//! ```text
//! d_i = dropout(ReLU(W_d r_i + b_d)),  i = 1..n         h_j = dropout(ReLU(W_h r_j + b_h)),  j = 0..n   (size a)
//! s[i, j] = d_iᵀ U h_j + h_jᵀ u                          U: [a, a], u: [a]
//! ```
//! (Dozat & Manning's Eq. 6 — the head bias `h_jᵀ u` is the prior of j being a head; a dependent-only term would
//! shift a whole row and cancel in the softmax, so there is none.) `j = i` and padding are masked out; the loss is the
//! cross-entropy of the gold head over the candidates, `L_arc = −(1/N) Σ_i log softmax_j(s[i, ·])[head_i]`.
//!
//! **Labels.** Two more MLPs (size r) and, for each label l, a bilinear and a linear term at a chosen head `y_i`:
//! ```text
//! s_l[i] = h'_{y_i}ᵀ U_l d'_i + w_lᵀ (h'_{y_i} ⊕ d'_i) + b_l        U: [L, r, r], w: [L, 2r], b: [L]
//! ```
//! (Dozat & Manning's Eq. 7), at the **gold** head during training (`L_lab` = cross-entropy of the gold label) and
//! at the **predicted** head at test time. The training loss is `L_arc + L_lab`, each averaged over its words.
//! Biaffine weights start at zero (every head equally likely), the MLPs with BERT's N(0, 0.02²).
//!
//! **Labels are universal.** The label set is the universal UD relations: the subtype after `:` is stripped
//! (`nsubj:pass` → `nsubj`, `acl:relcl` → `acl`; [`universal_label`]), so the English-trained labeller can match
//! the other treebanks' relations, whose subtypes are language-specific. The vocabulary is built from the English
//! training sentences ([`label_vocabulary`]); an evaluation label outside it can never be predicted, so those words
//! count against LAS (not UAS).
//!
//! **Decoding.** [`Decode::Mst`] (default): the maximum spanning arborescence over `log softmax_j s[i, j]` in which
//! ROOT has exactly one child ([`crate::tasks::parse::decode::mst_heads`], the UD constraint); [`Decode::Greedy`]: each word's
//! best head on its own (may give cycles or several roots). Words dropped by truncation get no prediction and are
//! scored as missed: their predicted head is the word itself, which no gold tree has ([`complete_parse`]).
//!
//! **Scores.** UAS and LAS over the gold words ([`crate::tasks::parse::metrics`]); punctuation (gold UPOS `PUNCT`) is left
//! out by default, [`ParseConfig::include_punct`] scores it too. Model selection: the state with the best English
//! dev LAS (under the same decoding and punctuation policy) is kept.
//!
//! **Fine-tuning.** As for NLI ([`crate::tasks::finetune`]): the encoder and the parser train together with Adam, the
//! language-specific parameters (and optionally the embeddings and bottom layers) frozen, the gradient clipped, here
//! with a linear warm-up over the first 10% of the steps and linear decay (Wu et al. 2020).
//!
//! **Presets** ([`ParseConfig::at`]): `paper` — Dozat & Manning's head sizes (arc MLP 500, label MLP 100,
//! dropout 0.33), Wu et al.'s fine-tuning of the whole encoder at lr 5e-5, batch 32, 3 epochs (the epoch count is
//! this project's choice), all training sentences; `cpu` — heads scaled to the project's 4 × 128 `cpu` models (arc
//! 128, label 64, dropout 0.33), batch 32, 4 epochs over all 5,238 training sentences, English dev capped at 1,000
//! sentences, lr 2e-3; `smoke` — arc 32, label 16, 200 sentences, 1 epoch, 50 dev and 50 test sentences, lr 2e-3.
//!
//! The `cpu` rate is measured, not borrowed from NLI: the parser starts from zero biaffine weights and gets only a
//! few hundred steps, so small rates leave it far from trained. On the en–fr `default` model of `train --scale cpu`,
//! 4 epochs at lr 5e-4 / 1e-3 / 2e-3 / 4e-3 raised English dev LAS and zero-shot French-GSD UAS up to 2e-3, with 4e-3
//! about level; on the English `mono` model, 2 epochs over 3,000 sentences at 2e-4 left the parser far from trained
//! (measured: docs/performance.md, *Measurements behind design choices*). One learning rate serves encoder and head
//! alike unless `head_lr` gives the parser its own ([`crate::tasks::finetune::HeadRate`]), as a pretrained encoder
//! needs: at its fine-tuning rate of 5e-5 a few hundred steps leave a zero-initialised biaffine head untrained.
//!
//! References: T. Dozat, C. D. Manning (2017), *Deep Biaffine Attention for Neural Dependency Parsing*, ICLR;
//! S. Wu, A. Conneau, H. Li, L. Zettlemoyer, V. Stoyanov (2020), *Emerging Cross-lingual Structure in Pretrained
//! Language Models*, ACL; S. Wu, M. Dredze (2019), *Beto, Bentz, Becas*, EMNLP.
pub mod decode;
pub mod metrics;
pub mod transfer;
use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use tch::{nn, nn::Module, nn::VarStore, Device, Kind, Reduction, Tensor};

use crate::device::Compute;
use crate::error::{Error, Result};
use crate::nn::batch::length_batches;
use crate::nn::dropout::dropout;
use crate::scale::Scale;
use crate::tasks::backbone::Backbone;
use crate::tasks::finetune::{mix, train_with_selection, FreezeReport, LrSchedule, TrainOutcome, HEAD_INIT};
use crate::tasks::finetune_config::FinetuneConfig;
use crate::tasks::parse::decode::{greedy_heads, mst_heads};
use crate::tasks::parse::metrics::{attachment_scores, AttachmentEval, AttachmentOptions, Parse};
use crate::tasks::word_inputs::{gather_words, per_item, word_batch, WordBatch, WordItem};

/// Parameter-name prefix of the parser head.
pub const PARSER: &str = "parser";
/// Target index the losses ignore (padding, words whose head was truncated away, unknown labels).
const IGNORE: i64 = -100;
/// Score of a masked arc (self-loop, padding); finite so no `0 · ∞` can appear, far below any real score.
const MASKED: f64 = -1e9;

/// The universal part of a UD relation: everything before the first `:` (`nsubj:pass` → `nsubj`).
pub fn universal_label(deprel: &str) -> &str {
    deprel.split_once(':').map_or(deprel, |(u, _)| u)
}

/// How heads are read off the arc scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decode {
    /// Maximum spanning arborescence with exactly one ROOT child ([`mst_heads`]).
    #[default]
    Mst,
    /// Each word's best head on its own ([`greedy_heads`]; no tree guarantee).
    Greedy,
}

impl Decode {
    /// `mst` or `greedy`.
    pub fn name(self) -> &'static str {
        match self {
            Decode::Mst => "mst",
            Decode::Greedy => "greedy",
        }
    }

    /// Parses `mst` or `greedy`.
    pub fn from_name(name: &str) -> Result<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "mst" => Ok(Decode::Mst),
            "greedy" => Ok(Decode::Greedy),
            other => Err(Error::Invalid(format!("unknown decoding '{other}': expected mst or greedy"))),
        }
    }

    /// Heads from a score matrix `scores[dep][head]` (row and column 0 = ROOT).
    ///
    /// # Shapes
    /// `scores`: `[n + 1][n + 1]` → `[n]`
    pub fn heads(self, scores: &[Vec<f64>]) -> Result<Vec<usize>> {
        match self {
            Decode::Mst => mst_heads(scores),
            Decode::Greedy => greedy_heads(scores),
        }
    }
}

/// Settings of a parsing fine-tuning run (see the module docs for the presets; the default is `cpu`). Its JSON is
/// complete and flat (records, cache keys); partial settings are overrides of a preset, through
/// [`crate::tasks::run::configured`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParseConfig {
    /// Optimiser, schedule, data caps and freezing (`max_train`: a seeded sample of the English training sentences;
    /// `max_eval`: the first test sentences per language; `max_len`: words beyond it are dropped and scored as
    /// missed).
    #[serde(flatten)]
    pub finetune: FinetuneConfig,
    /// Cap on the English dev sentences used for model selection (the first ones); `None` = all.
    pub max_dev: Option<usize>,
    /// Size `a` of the arc MLPs.
    pub arc_dim: usize,
    /// Size `r` of the label MLPs.
    pub label_dim: usize,
    /// Dropout on the MLP outputs.
    pub mlp_dropout: f64,
    /// Head decoding at dev and test time.
    pub decode: Decode,
    /// Score punctuation (gold UPOS `PUNCT`) too; excluded by default.
    pub include_punct: bool,
}

impl Default for ParseConfig {
    fn default() -> Self {
        ParseConfig {
            finetune: FinetuneConfig::cpu(2e-3, LrSchedule::LinearDecay, 4, None, None),
            max_dev: Some(1_000),
            arc_dim: 128,
            label_dim: 64,
            mlp_dropout: 0.33,
            decode: Decode::Mst,
            include_punct: false,
        }
    }
}

impl ParseConfig {
    /// The settings of `scale` (see the module docs).
    pub fn at(scale: Scale) -> Self {
        let cpu = ParseConfig::default();
        let f = cpu.finetune.clone();
        match scale {
            Scale::Smoke => ParseConfig {
                finetune: FinetuneConfig {
                    batch_size: 16,
                    epochs: 1,
                    max_train: Some(200),
                    max_eval: Some(50),
                    max_len: 64,
                    eval_batch_tokens: 4096,
                    ..f
                },
                max_dev: Some(50),
                arc_dim: 32,
                label_dim: 16,
                ..cpu
            },
            Scale::Cpu => cpu,
            Scale::Paper => ParseConfig {
                finetune: FinetuneConfig { lr: 5e-5, epochs: 3, max_len: 512, ..f },
                max_dev: None,
                arc_dim: 500,
                label_dim: 100,
                ..cpu
            },
        }
    }

    /// Checks the ranges of every setting.
    pub fn validate(&self) -> Result<()> {
        self.finetune.validate("parsing config")?;
        let bad = |what: &str| Err(Error::Invalid(format!("parsing config: {what}")));
        if self.arc_dim == 0 || self.label_dim == 0 {
            return bad(&format!(
                "arc_dim and label_dim must be at least 1, got {} and {}",
                self.arc_dim, self.label_dim
            ));
        }
        if self.max_dev == Some(0) {
            return bad("max_dev must be at least 1 when set");
        }
        if !(0.0..1.0).contains(&self.mlp_dropout) {
            return bad(&format!("mlp_dropout must be in [0, 1), got {}", self.mlp_dropout));
        }
        Ok(())
    }

    /// The scoring options of this config (universal labels, punctuation by `include_punct`).
    pub fn attachment_options(&self) -> AttachmentOptions {
        AttachmentOptions { include_punct: self.include_punct, universal_labels: true }
    }
}

/// One encoded sentence with its gold tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseItem {
    /// Subword ids and first-subword positions (possibly fewer kept words than gold words).
    pub input: WordItem,
    /// Gold heads (0 = ROOT) and universal labels of **every** word, kept or not.
    pub gold: Parse,
    /// Gold UPOS of every word (decides the punctuation policy).
    pub upos: Vec<String>,
}

impl ParseItem {
    /// Checks that the gold tree and tags cover the item's words and the heads lie in `0..=n`.
    pub fn check(&self) -> Result<()> {
        let n = self.input.words;
        if self.gold.heads.len() != n || self.gold.labels.len() != n || self.upos.len() != n {
            return Err(Error::Invalid(format!(
                "parse item with {n} words but {} heads, {} labels and {} UPOS tags",
                self.gold.heads.len(),
                self.gold.labels.len(),
                self.upos.len()
            )));
        }
        if let Some((i, h)) = self.gold.heads.iter().enumerate().find(|(i, &h)| h > n || h == i + 1) {
            return Err(Error::Invalid(format!(
                "parse item: word {} has head {h} (expected 0..={n}, not itself)",
                i + 1
            )));
        }
        Ok(())
    }
}

/// The sorted distinct gold labels of `items` (the labeller's classes).
pub fn label_vocabulary(items: &[ParseItem]) -> Vec<String> {
    let set: BTreeSet<&str> = items.iter().flat_map(|it| it.gold.labels.iter().map(String::as_str)).collect();
    set.into_iter().map(String::from).collect()
}

/// A full-sentence parse from the predictions of the first `heads.len()` (kept) words of a `words`-word sentence:
/// each dropped word gets itself as head (never a gold head, so it is scored as missed) and an empty label.
pub fn complete_parse(mut heads: Vec<usize>, mut labels: Vec<String>, words: usize) -> Parse {
    let kept = heads.len();
    heads.extend(kept + 1..=words);
    labels.resize(words, String::new());
    Parse { heads, labels }
}

/// The MLP views of a batch (see the module docs).
#[derive(Debug)]
pub struct ParserViews {
    /// Dependent view of each word. [batch, words, a]
    pub arc_dep: Tensor,
    /// Head view of ROOT and each word. [batch, words + 1, a]
    pub arc_head: Tensor,
    /// [batch, words, r]
    pub rel_dep: Tensor,
    /// [batch, words + 1, r]
    pub rel_head: Tensor,
    /// Arcs `j → i` that may exist: j is ROOT or a real word, j ≠ i. [batch, words, words + 1] bool
    pub allowed: Tensor,
}

/// The biaffine arc scorer and bilinear labeller (see the module docs); parameters under `parser.…`.
#[derive(Debug)]
pub struct BiaffineParser {
    pub arc_dep: nn::Linear,
    pub arc_head: nn::Linear,
    pub rel_dep: nn::Linear,
    pub rel_head: nn::Linear,
    /// `U` of the arc scores. [a, a]
    pub arc_u: Tensor,
    /// `u`, the head prior of the arc scores. [a]
    pub arc_bias: Tensor,
    /// `U_l` of the label scores. [labels, r, r]
    pub rel_u: Tensor,
    /// `w_l`, `b_l` of the label scores: weight [labels, 2r], bias [labels].
    pub rel_linear: nn::Linear,
    pub dropout: f64,
    pub labels: usize,
}

impl BiaffineParser {
    /// A parser head under `p` for `hidden`-wide inputs and `labels` classes.
    pub fn new(p: &nn::Path, hidden: usize, arc_dim: usize, label_dim: usize, labels: usize, dropout: f64) -> Self {
        use crate::model::sharing::dense;
        let (a, r) = (arc_dim as i64, label_dim as i64);
        BiaffineParser {
            arc_dep: dense(&(p / "arc_dep"), hidden, arc_dim),
            arc_head: dense(&(p / "arc_head"), hidden, arc_dim),
            rel_dep: dense(&(p / "rel_dep"), hidden, label_dim),
            rel_head: dense(&(p / "rel_head"), hidden, label_dim),
            arc_u: p.var("arc_u", &[a, a], nn::Init::Const(0.0)),
            arc_bias: p.var("arc_bias", &[a], nn::Init::Const(0.0)),
            rel_u: p.var("rel_u", &[labels as i64, r, r], nn::Init::Const(0.0)),
            rel_linear: dense(&(p / "rel_linear"), 2 * label_dim, labels),
            dropout,
            labels,
        }
    }

    fn mlp(&self, layer: &nn::Linear, x: &Tensor, train: bool) -> Tensor {
        dropout(&layer.forward(x).relu(), self.dropout, train)
    }

    /// The MLP views of ROOT and the words.
    ///
    /// # Shapes
    /// `root_words`: `[batch, words + 1, hidden]` (position 0 = ROOT), `word_mask`: `[batch, words]` bool
    pub fn views(&self, root_words: &Tensor, word_mask: &Tensor, train: bool) -> ParserViews {
        let (b, w) = (word_mask.size()[0], word_mask.size()[1]);
        let device = word_mask.device();
        let words = root_words.narrow(1, 1, w); // [batch, words, hidden]
        let candidates = Tensor::cat(&[Tensor::ones([b, 1], (Kind::Bool, device)), word_mask.shallow_clone()], 1);
        // (i, i + 1) is word i + 1 as its own head.
        let self_loop =
            Tensor::cat(&[Tensor::zeros([w, 1], (Kind::Bool, device)), Tensor::eye(w, (Kind::Bool, device))], 1);
        let allowed = candidates.unsqueeze(1).logical_and(&self_loop.logical_not().unsqueeze(0)); // [b, w, w + 1]
        ParserViews {
            arc_dep: self.mlp(&self.arc_dep, &words, train),
            arc_head: self.mlp(&self.arc_head, root_words, train),
            rel_dep: self.mlp(&self.rel_dep, &words, train),
            rel_head: self.mlp(&self.rel_head, root_words, train),
            allowed,
        }
    }

    /// Arc scores `s[b, i, j]` of head candidate j (0 = ROOT, j = word j) for word i + 1, in f32, masked arcs at
    /// a large negative value.
    ///
    /// # Shapes
    /// → `[batch, words, words + 1]` f32
    pub fn arc_scores(&self, v: &ParserViews) -> Tensor {
        let bilinear = v.arc_dep.matmul(&self.arc_u).matmul(&v.arc_head.transpose(1, 2)); // [b, w, w + 1]
        let prior = v.arc_head.matmul(&self.arc_bias).unsqueeze(1); // [b, 1, w + 1]
        (bilinear + prior).to_kind(Kind::Float).masked_fill(&v.allowed.logical_not(), MASKED)
    }

    /// Label scores of each word at head `heads[b, i]` (0 = ROOT, j = word j), in f32.
    ///
    /// # Shapes
    /// `heads`: `[batch, words]` i64 in `0..=words` → `[batch, words, labels]` f32
    pub fn label_scores(&self, v: &ParserViews, heads: &Tensor) -> Tensor {
        let size = v.rel_dep.size(); // [b, w, r]
        let at_head = v.rel_head.gather(1, &heads.unsqueeze(-1).expand(size.as_slice(), false), false); // [b, w, r]
        let bilinear = Tensor::einsum("bwr,lrs,bws->bwl", &[&at_head, &self.rel_u, &v.rel_dep], None::<i64>);
        let linear = self.rel_linear.forward(&Tensor::cat(&[&at_head, &v.rel_dep], -1)); // [b, w, labels]
        (bilinear + linear).to_kind(Kind::Float)
    }
}

/// An encoder (or a stack on frozen layers) with a biaffine parser, ready to fine-tune.
#[derive(Debug)]
pub struct ParseFinetune {
    pub backbone: Backbone,
    /// The variables that train (the parser is added to them).
    pub vs: VarStore,
    pub parser: BiaffineParser,
    /// The label classes, in index order (see [`label_vocabulary`]).
    pub labels: Vec<String>,
    label_index: HashMap<String, i64>,
    pub compute: Compute,
    /// Padding id.
    pub pad: i64,
    /// Which parameters train.
    pub freeze: FreezeReport,
}

/// The training targets of a batch: gold heads and label classes of the kept words, [`IGNORE`] elsewhere.
struct Targets {
    /// [batch, words] i64
    heads: Tensor,
    /// [batch, words] i64
    labels: Tensor,
    /// Words with a head target / with a label target.
    n_heads: usize,
    n_labels: usize,
}

impl ParseFinetune {
    /// Adds a parser (initialised from the seed) for the classes `labels` to `vs` and sets which parameters train
    /// (`cfg`'s freezing plan; language-specific parameters and the MLM head never train). `vs` must live on
    /// `compute.device`.
    pub fn new(
        backbone: Backbone,
        vs: VarStore,
        pad: i64,
        compute: Compute,
        labels: Vec<String>,
        cfg: &ParseConfig,
    ) -> Result<Self> {
        cfg.validate()?;
        let hidden = backbone.config().hidden;
        if labels.is_empty() {
            return Err(Error::Invalid("the parser needs at least one dependency label".into()));
        }
        let label_index: HashMap<String, i64> = labels.iter().enumerate().map(|(i, l)| (l.clone(), i as i64)).collect();
        if label_index.len() != labels.len() {
            return Err(Error::Invalid(format!("duplicate dependency labels in {labels:?}")));
        }
        let parser = {
            let _rng = crate::device::torch_rng_lock();
            tch::manual_seed(mix(cfg.finetune.seed, HEAD_INIT, 0) as i64);
            BiaffineParser::new(
                &(vs.root() / PARSER),
                hidden,
                cfg.arc_dim,
                cfg.label_dim,
                labels.len(),
                cfg.mlp_dropout,
            )
        };
        let freeze = backbone.freeze(&vs, &cfg.finetune.freeze_plan(), &[&format!("{PARSER}.")], &compute)?;
        Ok(ParseFinetune { backbone, vs, parser, labels, label_index, compute, pad, freeze })
    }

    /// The parser's views of a padded batch of language `lang`; `train` turns dropout on.
    fn views(&self, batch: &WordBatch, lang: &str, train: bool) -> Result<ParserViews> {
        let hidden = self.backbone.hidden(&batch.ids, &batch.mask, lang, train)?; // [b, seq, hidden]
        let b = batch.first.size()[0];
        let root = Tensor::zeros([b, 1], (Kind::Int64, batch.first.device()));
        let root_words = gather_words(&hidden, &Tensor::cat(&[&root, &batch.first], 1)); // [b, w + 1, hidden]
        Ok(self.parser.views(&root_words, &batch.word_mask, train))
    }

    fn targets(&self, items: &[&ParseItem], words: usize, device: Device) -> Targets {
        let (mut heads, mut labels) =
            (Vec::with_capacity(items.len() * words), Vec::with_capacity(items.len() * words));
        let (mut n_heads, mut n_labels) = (0, 0);
        for it in items {
            let kept = it.input.kept();
            for j in 0..words {
                let h = if j < kept && it.gold.heads[j] <= kept { it.gold.heads[j] as i64 } else { IGNORE };
                let l = match h {
                    IGNORE => IGNORE,
                    _ => self.label_index.get(&it.gold.labels[j]).copied().unwrap_or(IGNORE),
                };
                n_heads += usize::from(h != IGNORE);
                n_labels += usize::from(l != IGNORE);
                heads.push(h);
                labels.push(l);
            }
        }
        let shape = [items.len() as i64, words as i64];
        Targets {
            heads: Tensor::from_slice(&heads).view(shape).to_device(device),
            labels: Tensor::from_slice(&labels).view(shape).to_device(device),
            n_heads,
            n_labels,
        }
    }

    /// The training loss `L_arc + L_lab` of `items` (dropout on; see the module docs). Words whose head was
    /// truncated away are left out of both terms, words with a label outside the classes out of `L_lab`.
    ///
    /// # Shapes
    /// → scalar
    pub fn loss(&self, items: &[&ParseItem], lang: &str) -> Result<Tensor> {
        let inputs: Vec<&WordItem> = items.iter().map(|it| &it.input).collect();
        let batch = word_batch(&inputs, self.pad, self.compute.device);
        let t = self.targets(items, batch.words, self.compute.device);
        let v = self.views(&batch, lang, true)?;
        let w = batch.words as i64;
        let arc = self.parser.arc_scores(&v); // [b, w, w + 1]
        let arc_loss = arc.reshape([-1, w + 1]).cross_entropy_loss::<Tensor>(
            &t.heads.view([-1]),
            None,
            Reduction::Sum,
            IGNORE,
            0.0,
        ) / t.n_heads.max(1) as f64;
        let lab = self.parser.label_scores(&v, &t.heads.clamp_min(0)); // [b, w, labels]
        let lab_loss = lab.reshape([-1, self.labels.len() as i64]).cross_entropy_loss::<Tensor>(
            &t.labels.view([-1]),
            None,
            Reduction::Sum,
            IGNORE,
            0.0,
        ) / t.n_labels.max(1) as f64;
        Ok(arc_loss + lab_loss)
    }

    /// The predicted parse of every word of each item (no dropout, no gradients), in input order; dropped words get
    /// themselves as head and an empty label ([`complete_parse`]).
    pub fn predict(&self, items: &[ParseItem], lang: &str, decode: Decode, batch_tokens: usize) -> Result<Vec<Parse>> {
        let lens: Vec<usize> = items.iter().map(|it| it.input.ids.len()).collect();
        let mut out: Vec<Option<Parse>> = vec![None; items.len()];
        for group in length_batches(&lens, batch_tokens) {
            let chunk: Vec<&WordItem> = group.iter().map(|&i| &items[i].input).collect();
            let parses = tch::no_grad(|| self.compute.forward(|| self.predict_batch(&chunk, lang, decode)))?;
            for (&i, p) in group.iter().zip(parses) {
                out[i] = Some(p);
            }
        }
        out.into_iter()
            .map(|p| p.ok_or_else(|| Error::Invalid("parsing: a sentence got no prediction".into())))
            .collect()
    }

    fn predict_batch(&self, items: &[&WordItem], lang: &str, decode: Decode) -> Result<Vec<Parse>> {
        let device = self.compute.device;
        let batch = word_batch(items, self.pad, device);
        let v = self.views(&batch, lang, false)?;
        let w = batch.words;
        let arc = self.parser.arc_scores(&v).log_softmax(-1, Kind::Float).to_device(Device::Cpu); // [b, w, w + 1]
        let arc =
            Vec::<f32>::try_from(arc.reshape([-1])).map_err(|e| Error::Invalid(format!("reading arc scores: {e}")))?;
        let mut heads = Vec::with_capacity(items.len());
        let mut padded_heads = vec![0i64; items.len() * w];
        for (b, it) in items.iter().enumerate() {
            let n = it.kept();
            let mut m = vec![vec![0.0f64; n + 1]; n + 1];
            for (i, row) in m.iter_mut().enumerate().skip(1) {
                let at = (b * w + i - 1) * (w + 1);
                row.iter_mut().zip(&arc[at..at + n + 1]).for_each(|(x, &s)| *x = f64::from(s));
            }
            let h = if n == 0 { Vec::new() } else { decode.heads(&m)? };
            for (j, &x) in h.iter().enumerate() {
                padded_heads[b * w + j] = x as i64;
            }
            heads.push(h);
        }
        let head_t = Tensor::from_slice(&padded_heads).view([items.len() as i64, w as i64]).to_device(device);
        let best = self.parser.label_scores(&v, &head_t).argmax(-1, false); // [b, w]
        let best = per_item(&best, items)?;
        Ok(items
            .iter()
            .zip(heads)
            .zip(best)
            .map(|((it, h), l)| {
                let labels = l.iter().map(|&c| self.labels[c as usize].clone()).collect();
                complete_parse(h, labels, it.words)
            })
            .collect())
    }

    /// UAS and LAS on `items` of language `lang` (see the module docs for the policies).
    pub fn evaluate(
        &self,
        items: &[ParseItem],
        lang: &str,
        decode: Decode,
        options: &AttachmentOptions,
        batch_tokens: usize,
    ) -> Result<AttachmentEval> {
        let pred = self.predict(items, lang, decode, batch_tokens)?;
        let gold: Vec<Parse> = items.iter().map(|it| it.gold.clone()).collect();
        let upos: Vec<Vec<&str>> = items.iter().map(|it| it.upos.iter().map(String::as_str).collect()).collect();
        attachment_scores(&gold, &upos, &pred, options)
    }

    /// Fine-tunes on `train` (language `lang`), selects the state with the best LAS on `dev` and leaves the weights
    /// in that state (see the module docs). Holds [`crate::device::torch_rng_lock`] while it runs.
    pub fn train(
        &mut self,
        train: &[ParseItem],
        dev: &[ParseItem],
        lang: &str,
        cfg: &ParseConfig,
        progress: bool,
    ) -> Result<TrainOutcome> {
        cfg.validate()?;
        if train.is_empty() || dev.is_empty() {
            return Err(Error::Invalid(format!(
                "parser fine-tuning needs training and dev sentences (got {} and {})",
                train.len(),
                dev.len()
            )));
        }
        for (what, items) in [("training", train), ("dev", dev)] {
            for (i, it) in items.iter().enumerate() {
                it.check().map_err(|e| Error::Invalid(format!("{what} sentence {}: {e}", i + 1)))?;
            }
        }
        let _rng = crate::device::torch_rng_lock();
        let (settings, plan) = cfg.finetune.selection_setup(train.len(), "parse", PARSER, progress);
        let this = &*self;
        let options = cfg.attachment_options();
        let loss_of = |chunk: &[usize]| -> Result<Tensor> {
            let items: Vec<&ParseItem> = chunk.iter().map(|&i| &train[i]).collect();
            this.loss(&items, lang)
        };
        let dev_score = || Ok(this.evaluate(dev, lang, cfg.decode, &options, cfg.finetune.eval_batch_tokens)?.las);
        train_with_selection(&this.vs, this.compute, settings, plan, loss_of, dev_score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MlmModel, SharingPlan};
    use crate::text::codeswitch::SplitMix64;

    /// Ids 0..5 are specials (pad 0, cls 2, sep 3); word ids are 5..VOCAB; 5 is also a continuation piece.
    const VOCAB: usize = 24;

    fn tiny() -> (MlmModel, VarStore) {
        crate::tasks::tiny_model(VOCAB, 48, SharingPlan::default(), 23)
    }

    fn encoder(model: MlmModel) -> Backbone {
        Backbone::Encoder { model, tokenizer: crate::tasks::tiny_tokenizer(&["en"]) }
    }

    /// A chain: each word's head is the previous word, ROOT for the first; the label is the parity of the word's
    /// id (`even`/`odd`); every third word has two subwords (its id, then 5). At most `max_len` positions.
    fn synthetic(n: usize, seed: u64, max_len: usize) -> Vec<ParseItem> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let words = 2 + rng.below(8) as usize;
                let mut ids = vec![2i64];
                let mut first = Vec::new();
                let mut labels = Vec::new();
                for k in 0..words {
                    let id = 6 + rng.below(VOCAB as u64 - 6) as i64;
                    let pieces: &[i64] = if k % 3 == 2 { &[id, 5] } else { &[id] };
                    if ids.len() + pieces.len() + 1 > max_len {
                        break;
                    }
                    first.push(ids.len() as i64);
                    ids.extend_from_slice(pieces);
                    labels.push(if id % 2 == 0 { "even" } else { "odd" }.to_string());
                }
                ids.push(3);
                labels.resize(words, "even".into());
                let heads = (0..words).collect();
                let upos = (0..words).map(|k| if k == 1 { "PUNCT" } else { "NOUN" }.to_string()).collect();
                ParseItem { input: WordItem { ids, first, words }, gold: Parse { heads, labels }, upos }
            })
            .collect()
    }

    fn cfg(lr: f64, epochs: usize) -> ParseConfig {
        let d = ParseConfig::default();
        let finetune =
            FinetuneConfig { lr, batch_size: 16, epochs, max_len: 32, eval_batch_tokens: 512, seed: 5, ..d.finetune };
        ParseConfig { finetune, arc_dim: 32, label_dim: 16, mlp_dropout: 0.1, ..d }
    }

    fn finetune(c: &ParseConfig, labels: &[&str]) -> ParseFinetune {
        let (model, vs) = tiny();
        let labels = labels.iter().map(|s| s.to_string()).collect();
        ParseFinetune::new(encoder(model), vs, 0, Compute::cpu(), labels, c).unwrap()
    }

    #[test]
    fn fine_tuning_learns_a_trivially_learnable_parse() {
        let c = cfg(2e-3, 6);
        let (train, dev, test) = (synthetic(480, 1, 32), synthetic(80, 2, 32), synthetic(100, 3, 32));
        let mut ft = finetune(&c, &label_vocabulary(&train).iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(ft.labels, ["even", "odd"]);
        let opts = c.attachment_options();
        let before = ft.evaluate(&test, "en", Decode::Mst, &opts, 512).unwrap();
        let out = ft.train(&train, &dev, "en", &c, false).unwrap();
        let after = ft.evaluate(&test, "en", Decode::Mst, &opts, 512).unwrap();
        assert_eq!(out.steps, 6 * 30);
        assert_eq!(out.dev_history.len(), 6);
        assert!(after.las > 0.9 && after.uas >= after.las, "{before:?} → {after:?}; {out:?}");
        assert!(out.best_dev_score > 0.9, "{out:?}");
        let (first, last) = (out.loss.first.unwrap(), out.loss.last.unwrap());
        assert!(last < 0.3 * first, "loss {first} → {last}");
        // The kept state is the best dev state, and greedy decoding agrees on an easy task.
        assert_eq!(ft.evaluate(&dev, "en", Decode::Mst, &opts, 512).unwrap().las, out.best_dev_score);
        let greedy = ft.evaluate(&test, "en", Decode::Greedy, &opts, 512).unwrap();
        assert!(greedy.uas > 0.9, "{greedy:?}");
        // Punctuation (word 2 of each sentence) is excluded by default and scored on request.
        let with_punct = AttachmentOptions { include_punct: true, ..opts };
        let all = ft.evaluate(&test, "en", Decode::Mst, &with_punct, 512).unwrap();
        assert_eq!((all.scored, all.excluded), (after.scored + after.excluded, 0));
        assert_eq!(after.excluded, test.len());
        // MST parses are trees with one root child.
        for p in ft.predict(&test, "en", Decode::Mst, 64).unwrap() {
            assert!(crate::tasks::parse::decode::is_single_root_tree(&p.heads), "{p:?}");
        }
    }

    #[test]
    fn one_seed_gives_one_run() {
        let run = |seed: u64| {
            let mut c = cfg(1e-3, 1);
            c.finetune.seed = seed;
            let mut ft = finetune(&c, &["even", "odd"]);
            let out = ft.train(&synthetic(48, 6, 32), &synthetic(16, 7, 32), "en", &c, false).unwrap();
            out.loss.curve.iter().map(|p| p.loss).collect::<Vec<_>>()
        };
        crate::tasks::assert_seed_determines_curve(run);
    }

    #[test]
    fn truncated_words_are_scored_as_missed() {
        // Pure: dropped words get themselves as head, so even a gold ROOT attachment is missed.
        let p = complete_parse(vec![0, 1], vec!["root".into(), "obj".into()], 4);
        assert_eq!(p.heads, [0, 1, 3, 4]);
        assert_eq!(p.labels, ["root", "obj", "", ""]);
        let gold = Parse { heads: vec![2, 0, 2, 0], labels: ["a", "root", "b", "root"].map(String::from).to_vec() };
        let upos = vec![vec!["X"; 4]];
        let e = attachment_scores(&[gold], &upos, &[p], &AttachmentOptions::default()).unwrap();
        assert_eq!((e.scored, e.head_correct), (4, 0));
        // Through the model: 8-position inputs keep at most 6 subwords of a chain, the rest are missed.
        let c = cfg(1e-3, 1);
        let ft = finetune(&c, &["even", "odd"]);
        let items = synthetic(30, 8, 8);
        let cut: usize = items.iter().map(|it| it.input.words - it.input.kept()).sum();
        assert!(cut > 10, "{cut}");
        let pred = ft.predict(&items, "en", Decode::Mst, 256).unwrap();
        for (it, p) in items.iter().zip(&pred) {
            let (n, k) = (it.input.words, it.input.kept());
            assert_eq!(p.heads.len(), n);
            assert!(p.heads[..k].iter().all(|&h| h <= k), "{p:?}");
            assert_eq!(p.heads[k..], (k + 1..=n).collect::<Vec<_>>()[..]);
        }
        let opts = AttachmentOptions { include_punct: true, ..AttachmentOptions::default() };
        let e = ft.evaluate(&items, "en", Decode::Mst, &opts, 256).unwrap();
        let kept: usize = items.iter().map(|it| it.input.kept()).sum();
        assert_eq!(e.scored, kept + cut);
        assert!(e.head_correct <= kept, "{e:?}");
        // Training ignores words whose head was dropped (none here: a chain's heads precede their words).
        let refs: Vec<&ParseItem> = items.iter().collect();
        let t = ft.targets(&refs, refs.iter().map(|it| it.input.kept()).max().unwrap(), Device::Cpu);
        assert_eq!(t.n_heads, kept);
        assert!(ft.loss(&refs, "en").unwrap().double_value(&[]).is_finite());
    }

    #[test]
    fn heads_beyond_the_cut_and_unknown_labels_are_not_trained_on() {
        let c = cfg(1e-3, 1);
        let ft = finetune(&c, &["nsubj", "root"]);
        // Three words, two kept; word 1's head is word 3 (dropped), word 2 is the root and has an unknown label.
        let it = ParseItem {
            input: WordItem { ids: vec![2, 6, 7, 3], first: vec![1, 2], words: 3 },
            gold: Parse { heads: vec![3, 0, 2], labels: ["nsubj", "dep", "root"].map(String::from).to_vec() },
            upos: vec!["NOUN".into(); 3],
        };
        it.check().unwrap();
        let t = ft.targets(&[&it], 2, Device::Cpu);
        assert_eq!(Vec::<i64>::try_from(&t.heads.view([-1])).unwrap(), [IGNORE, 0]);
        assert_eq!(Vec::<i64>::try_from(&t.labels.view([-1])).unwrap(), [IGNORE, IGNORE]);
        assert_eq!((t.n_heads, t.n_labels), (1, 0));
        let bad = ParseItem { gold: Parse { heads: vec![1, 0, 2], ..it.gold.clone() }, ..it.clone() };
        assert!(bad.check().unwrap_err().to_string().contains("word 1 has head 1"));
    }

    #[test]
    fn arc_scores_mask_self_loops_and_padding() {
        let c = cfg(1e-3, 1);
        let ft = finetune(&c, &["a"]);
        let items = synthetic(2, 9, 32);
        let inputs: Vec<&WordItem> = items.iter().map(|it| &it.input).collect();
        let batch = word_batch(&inputs, 0, Device::Cpu);
        let v = ft.views(&batch, "en", false).unwrap();
        let s = ft.parser.arc_scores(&v);
        let w = batch.words as i64;
        assert_eq!(s.size(), [2, w, w + 1]);
        let s = Vec::<Vec<Vec<f32>>>::try_from(&s).unwrap();
        for (it, rows) in items.iter().zip(&s) {
            for (i, row) in rows.iter().enumerate() {
                for (j, &x) in row.iter().enumerate() {
                    let masked = j == i + 1 || j > it.input.kept();
                    assert_eq!(x == MASKED as f32, masked, "word {}, head {j}: {x}", i + 1);
                }
            }
        }
        let lab = ft.parser.label_scores(&v, &Tensor::zeros([2, w], (Kind::Int64, Device::Cpu)));
        assert_eq!(lab.size(), [2, w, 1]);
    }

    #[test]
    fn labels_configs_and_decoding_names() {
        assert_eq!(universal_label("nsubj:pass"), "nsubj");
        assert_eq!(universal_label("acl:relcl"), "acl");
        assert_eq!(universal_label("obl:tmod:x"), "obl");
        assert_eq!(universal_label("root"), "root");
        for s in Scale::ALL {
            ParseConfig::at(s).validate().unwrap();
        }
        let paper = ParseConfig::at(Scale::Paper);
        assert_eq!((paper.arc_dim, paper.label_dim, paper.mlp_dropout, paper.finetune.lr), (500, 100, 0.33, 5e-5));
        let f = &paper.finetune;
        assert_eq!((f.schedule, f.warmup_fraction, f.batch_size), (LrSchedule::LinearDecay, 0.1, 32));
        let finetune = |change: fn(&mut FinetuneConfig)| {
            let mut c = ParseConfig::default();
            change(&mut c.finetune);
            c
        };
        for (c, what) in [
            (finetune(|f| f.lr = -1.0), "lr"),
            (ParseConfig { arc_dim: 0, ..ParseConfig::default() }, "arc_dim"),
            (ParseConfig { mlp_dropout: 1.0, ..ParseConfig::default() }, "mlp_dropout"),
            (ParseConfig { max_dev: Some(0), ..ParseConfig::default() }, "max_dev"),
            (finetune(|f| f.max_len = 2), "max_len"),
        ] {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        }
        let over = |v: serde_json::Value| v.as_object().unwrap().clone();
        let e = crate::tasks::run::configured(ParseConfig::default(), &over(serde_json::json!({"arc_size": 10})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `arc_size`"), "{e}");
        let c = crate::tasks::run::configured(
            ParseConfig::default(),
            &over(serde_json::json!({"decode": "greedy", "include_punct": true})),
        )
        .unwrap();
        assert_eq!((c.decode, c.include_punct, c.arc_dim), (Decode::Greedy, true, 128));
        assert_eq!(Decode::from_name(" MST ").unwrap(), Decode::Mst);
        assert!(Decode::from_name("eisner").unwrap_err().to_string().contains("mst or greedy"));
        let (model, vs) = tiny();
        let c = finetune(|f| f.freeze_layers = 3);
        let e =
            ParseFinetune::new(encoder(model), vs, 0, Compute::cpu(), vec!["a".into()], &c).unwrap_err().to_string();
        assert!(e.contains("cannot freeze 3 layers"), "{e}");
    }
}
