//! `crossling bench finetune`: NLI fine-tuning throughput — crossling's task head ([`NliFinetune::logits`]: the
//! encoder, dropout and a linear classifier on `[CLS]`; cross-entropy) stepped by the task optimiser
//! ([`Finetuner::step`]: backward, global gradient-norm clip, Adam, what `task nli` runs through
//! `train_with_selection`) — against the same head in PyTorch Python (`src/bench/reference/bench_finetune.py`: Hugging
//! Face `BertModel` + `nn.Linear(hidden, 3)`, `clip_grad_norm_`, `torch.optim.Adam` without weight decay), on the
//! very same model (the script creates a random `BertForMaskedLM`, saves it, and crossling imports that folder),
//! the same classifier weights (the script writes them, crossling loads them), the same batches and threads. With
//! `--model NAME|DIR` both sides load that pretrained BERT folder instead (e.g. the registry's e5-small) and, as the
//! real-model scripts fine-tune it, freeze its embeddings (`bert.embeddings` in PyTorch).
//!
//! Pairs are random ids `[CLS] premise [SEP] hypothesis [SEP]` with lengths drawn from seeded log-normals (medians
//! 22 and 11 subwords, σ 0.5 in log space: the shape of MNLI / XNLI pairs), cut to the NLI preset's `max_len`
//! (128 for `cpu`, 256 for `paper`), and labels in {0, 1, 2}. Batches are consecutive slices of `--batch` pairs,
//! each padded to its longest pair. Learning rate (fixed) and clip norm (1.0) are those of the shape's NLI preset
//! ([`NliConfig::preset`]: 2e-4 for `cpu`, 2e-5 for `paper`); dropout is the model's (0.1) in the encoder and
//! before the classifier.
//!
//! Both sides run the same sequence of steps: `--check` steps with dropout off (default 2) whose losses and
//! gradient norms are compared — identical weights and batches, so step 1 checks the forward pass and loss, step 2
//! also the first backward pass, clip and Adam update — then `--warmup` untimed steps and `--steps` timed steps
//! with dropout on (different dropout masks on the two sides, so their losses then agree only statistically). One
//! timed step = padding the batch, forward, loss, backward, clip, Adam, reading the loss back. Reports pairs/s and
//! tokens/s (the pairs' own tokens; padded tokens are shown too) over all timed steps and over the fastest step
//! (the estimate least disturbed by other work on a shared machine), the ratio crossling / PyTorch and CPU seconds.
use anyhow::{bail, Context, Result};
use clap::Args;
use crossling::arrays;
use crossling::device::{Compute, Precision};
use crossling::model::ModelConfig;
use crossling::nn::batch::padded;
use crossling::tasks::finetune::{Finetuner, LrSchedule, OptimSettings};
use crossling::tasks::nli::{NliConfig, NliFinetune, NliItem, CLASSES};
use crossling::text::codeswitch::SplitMix64;
use crossling::Scale;
use serde_json::{json, Value};
use std::time::Instant;
use tch::{Kind, Tensor};

use super::common::{
    cpu_seconds, device, device_name, python, run_reference, script, sync, tempfile_dir, threads, BenchModel, Common,
};

#[derive(Args)]
pub struct BenchFinetuneArgs {
    /// Model shape: the architecture of a scale (`ModelConfig::at`: cpu 4 × 128, 4 heads; paper 8 × 768, 12 heads)
    /// with a pair's vocabulary at that scale (`Pretraining::at`: 8,000 at cpu, 64,000 at paper).
    #[arg(long, value_enum, default_value_t = Scale::Cpu)]
    shape: Scale,
    /// A pretrained BERT instead of a random one of --shape: a registry name (e5-small) or a Hugging Face BertModel /
    /// BertForMaskedLM folder; both sides load it and freeze its embeddings (the NLI preset of the cpu shape).
    #[arg(long, conflicts_with = "shape")]
    model: Option<String>,
    /// Timed steps (default: 30 for cpu, 5 for paper).
    #[arg(long)]
    steps: Option<usize>,
    /// Untimed warm-up steps with dropout on before them (default: 2 for cpu, 1 for paper).
    #[arg(long)]
    warmup: Option<usize>,
    /// Untimed steps with dropout off first, whose losses and gradient norms the two sides compare (0: none).
    #[arg(long, default_value_t = 2)]
    check: usize,
    /// Pairs per step.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    #[command(flatten)]
    common: Common,
}

/// `n` pairs `[CLS] premise [SEP] hypothesis [SEP]` of random ids in [5, vocab), at most `max_len` ids, and labels.
fn pairs(n: usize, vocab: usize, max_len: usize, seed: u64) -> Vec<NliItem> {
    let mut rng = SplitMix64::new(seed);
    let mut normal = || {
        let u1 = 1.0 - rng.next_f64(); // (0, 1]
        let u2 = rng.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let lens: Vec<(usize, usize)> = (0..n)
        .map(|_| {
            let premise = ((3.1 + 0.5 * normal()).exp().round() as usize).max(1);
            let hypothesis = ((2.4 + 0.5 * normal()).exp().round() as usize).clamp(1, max_len - 4);
            (premise.min(max_len - 3 - hypothesis), hypothesis)
        })
        .collect();
    lens.into_iter()
        .map(|(p, h)| {
            let mut word = || 5 + rng.below(vocab as u64 - 5) as i64;
            let mut ids = vec![2i64];
            ids.extend((0..p).map(|_| word()));
            ids.push(3);
            ids.extend((0..h).map(|_| word()));
            ids.push(3);
            NliItem { ids, label: rng.below(CLASSES as u64) as usize }
        })
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default()
}

/// The smallest entry; +∞ when empty.
fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The shape, settings and data both sides run.
struct Setup {
    /// The pretrained folder both sides load (`--model`); `None`: the reference creates a random model.
    given: Option<std::path::PathBuf>,
    /// What the report calls the model: the shape's scale, or the `--model` argument.
    shape: String,
    vocab: usize,
    model: ModelConfig,
    nli: NliConfig,
    steps: usize,
    warmup: usize,
    max_len: usize,
    threads: usize,
    dev: tch::Device,
    items: Vec<NliItem>,
}

impl Setup {
    fn new(a: &BenchFinetuneArgs) -> Result<Self> {
        let (steps_default, warmup_default) = match a.shape {
            Scale::Smoke => (3, 1),
            Scale::Cpu => (30, 2),
            Scale::Paper => (5, 1),
        };
        let BenchModel { given, config: model, label: shape } = BenchModel::new(a.shape, a.model.as_deref())?;
        let vocab = model.vocab_size;
        let mut nli = NliConfig::at(a.shape);
        nli.finetune.freeze_embeddings = given.is_some();
        (nli.finetune.batch_size, nli.finetune.seed) = (a.batch, a.common.seed as u64);
        let (steps, warmup) = (a.steps.unwrap_or(steps_default), a.warmup.unwrap_or(warmup_default));
        if steps == 0 || a.batch == 0 {
            bail!("--steps and --batch must be at least 1");
        }
        let max_len = nli.finetune.max_len.min(model.max_positions);
        let threads = threads(&a.common);
        tch::set_num_threads(threads as i32);
        let dev = device(&a.common)?;
        let items = pairs((a.check + warmup + steps) * a.batch, vocab, max_len, a.common.seed as u64);
        Ok(Setup { given, shape, vocab, model, nli, steps, warmup, max_len, threads, dev, items })
    }

    fn batches(&self, a: &BenchFinetuneArgs) -> Vec<&[NliItem]> {
        self.items.chunks(a.batch).collect()
    }
}

/// What one side measured.
struct Measured {
    seconds: f64,
    cpu_seconds: f64,
    step_seconds: Vec<f64>,
    losses: Vec<f64>,
    /// `(loss, gradient norm)` of each check step.
    check: Vec<(f64, f64)>,
    trainable_parameters: usize,
}

/// Writes the pairs and runs the PyTorch reference, which also saves the model and head crossling then loads from
/// `dir`; returns its JSON report.
fn run_pytorch(a: &BenchFinetuneArgs, s: &Setup, dir: &std::path::Path) -> Result<Value> {
    let flat: Vec<i64> = s.items.iter().flat_map(|it| it.ids.iter().copied()).collect();
    let offsets: Vec<i64> = std::iter::once(0)
        .chain(s.items.iter().scan(0i64, |acc, it| {
            *acc += it.ids.len() as i64;
            Some(*acc)
        }))
        .collect();
    let labels: Vec<i64> = s.items.iter().map(|it| it.label as i64).collect();
    let p = |name: &str| dir.join(name);
    for (name, v) in [("ids.npy", &flat), ("offsets.npy", &offsets), ("labels.npy", &labels)] {
        arrays::write_npy(&p(name), &Tensor::from_slice(v))?;
    }
    let model_dir = s.given.clone().unwrap_or_else(|| p("model"));
    let mut args: Vec<String> =
        [&model_dir, &p("head_weight.npy"), &p("head_bias.npy"), &p("ids.npy"), &p("offsets.npy"), &p("labels.npy")]
            .iter()
            .map(|x| x.display().to_string())
            .collect();
    args.extend(super::features::model_flags(&s.model, s.threads, a.common.seed as usize));
    for (flag, v) in [("--batch", a.batch), ("--check", a.check), ("--warmup", s.warmup), ("--steps", s.steps)] {
        args.push(flag.into());
        args.push(v.to_string());
    }
    let f = &s.nli.finetune;
    args.extend(["--lr".into(), f.lr.to_string(), "--clip".into(), f.clip_norm.to_string()]);
    args.extend(["--device".to_string(), device_name(s.dev)]);
    if s.given.is_some() {
        args.push("--pretrained".to_string());
    }
    if !a.common.json {
        eprintln!("pytorch: creating the model, then {} + {} untimed and {} timed steps …", a.check, s.warmup, s.steps);
    }
    run_reference(&python(&a.common), &script("bench_finetune.py"), &args)
}

/// Imports the reference's model and head from `dir` and runs the same steps through crossling's task optimiser.
fn run_crossling(a: &BenchFinetuneArgs, s: &Setup, dir: &std::path::Path) -> Result<Measured> {
    let dev = s.dev;
    let model_dir = s.given.clone().unwrap_or_else(|| dir.join("model"));
    let imported = crossling::model::hf::import::import_hf(&model_dir, dev)?;
    let compute = Compute::on(dev, Precision::Fp32)?;
    let ft = NliFinetune::new(imported.model, imported.vs, 0, compute, &s.nli)?;
    tch::no_grad(|| -> Result<()> {
        let w = arrays::read_npy(&dir.join("head_weight.npy"))?;
        let b = arrays::read_npy(&dir.join("head_bias.npy"))?;
        let lin = &ft.classifier.linear;
        lin.ws.shallow_clone().copy_(&w.to_device(dev));
        lin.bs.as_ref().context("the classifier has no bias")?.shallow_clone().copy_(&b.to_device(dev));
        Ok(())
    })?;
    let batches = s.batches(a);
    let f = &s.nli.finetune;
    let settings = OptimSettings {
        lr: f.lr,
        schedule: LrSchedule::Fixed,
        warmup_fraction: 0.0,
        clip_norm: f.clip_norm,
        total_steps: batches.len() as u64,
        seed: f.seed,
        head: None,
    };
    let _rng_guard = crossling::device::torch_rng_lock(); // Finetuner::step seeds dropout
    let mut opt = Finetuner::new(&ft.vs, compute, settings)?;
    let loss_of = |batch: &[NliItem], train: bool| -> crossling::error::Result<Tensor> {
        let rows: Vec<&[i64]> = batch.iter().map(|it| it.ids.as_slice()).collect();
        let labels: Vec<i64> = batch.iter().map(|it| it.label as i64).collect();
        let labels = Tensor::from_slice(&labels).to_device(dev); // [batch]
        let (ids, mask, _) = padded(&rows, ft.pad, dev); // [batch, seq]
        let logits = ft.logits(&ids, &mask, "en", train)?; // [batch, 3]
        Ok(logits.to_kind(Kind::Float).cross_entropy_for_logits(&labels))
    };
    if !a.common.json {
        eprintln!("crossling: the same steps …");
    }
    let mut check = Vec::new();
    for b in &batches[..a.check] {
        let r = opt.step(|| loss_of(b, false))?;
        check.push((r.loss, r.grad_norm));
    }
    for b in &batches[a.check..a.check + s.warmup] {
        opt.step(|| loss_of(b, true))?;
    }
    sync(dev);
    let (mut losses, mut step_seconds) = (Vec::with_capacity(s.steps), Vec::with_capacity(s.steps));
    let (start, cpu0) = (Instant::now(), cpu_seconds());
    for b in &batches[a.check + s.warmup..] {
        let t = Instant::now();
        losses.push(opt.step(|| loss_of(b, true))?.loss);
        sync(dev);
        step_seconds.push(t.elapsed().as_secs_f64());
    }
    let (seconds, cpu_seconds) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
    let trainable_parameters = ft.freeze.trainable_params;
    Ok(Measured { seconds, cpu_seconds, step_seconds, losses, check, trainable_parameters })
}

/// The reference's JSON report as a [`Measured`] (its check steps must match ours in number).
fn measured_reference(r: &Value, check_steps: usize) -> Result<Measured> {
    let (losses, norms) = (floats(&r["check_losses"]), floats(&r["check_grad_norms"]));
    if losses.len() != check_steps || norms.len() != check_steps {
        bail!("the reference reported {} check steps, crossling ran {check_steps}", losses.len());
    }
    Ok(Measured {
        seconds: r["seconds"].as_f64().context("reference JSON lacks seconds")?,
        cpu_seconds: r["cpu_seconds"].as_f64().unwrap_or(f64::NAN),
        step_seconds: floats(&r["step_seconds"]),
        losses: floats(&r["losses"]),
        check: losses.into_iter().zip(norms).collect(),
        trainable_parameters: r["trainable_parameters"].as_u64().unwrap_or(0) as usize,
    })
}

/// One side's throughput and losses as JSON, for `pairs` pairs of `tokens` tokens in `batch`-pair steps.
fn side_json(m: &Measured, pairs: usize, tokens: usize, batch: usize, steps: usize) -> Value {
    let best = min(&m.step_seconds);
    json!({
        "seconds": m.seconds, "cpu_seconds": m.cpu_seconds, "pairs_per_s": pairs as f64 / m.seconds,
        "tokens_per_s": tokens as f64 / m.seconds,
        "best_step_pairs_per_s": batch as f64 / best, "best_step_tokens_per_s": tokens as f64 / steps as f64 / best,
        "step_seconds": m.step_seconds, "losses": m.losses, "trainable_parameters": m.trainable_parameters,
        "check_losses": m.check.iter().map(|c| c.0).collect::<Vec<_>>(),
        "check_grad_norms": m.check.iter().map(|c| c.1).collect::<Vec<_>>(),
    })
}

pub fn run(a: BenchFinetuneArgs) -> Result<()> {
    let s = Setup::new(&a)?;
    let dir = tempfile_dir()?;
    let reference = run_pytorch(&a, &s, &dir)?;
    let ours = run_crossling(&a, &s, &dir);
    std::fs::remove_dir_all(&dir).ok();
    let ours = ours?;
    let theirs = measured_reference(&reference, a.check)?;

    let timed = &s.batches(&a)[a.check + s.warmup..];
    let tokens: usize = timed.iter().flat_map(|b| b.iter()).map(|it| it.ids.len()).sum();
    let padded_tokens: usize = timed.iter().map(|b| b.len() * b.iter().map(|it| it.ids.len()).max().unwrap_or(0)).sum();
    let pairs = s.steps * a.batch;
    let loss_diff: Vec<f64> = ours.check.iter().zip(&theirs.check).map(|(c, r)| (c.0 - r.0).abs()).collect();
    let norm_rel_diff: Vec<f64> =
        ours.check.iter().zip(&theirs.check).map(|(c, r)| (c.1 - r.1).abs() / r.1.abs().max(1e-12)).collect();
    let (cfg, f) = (&s.model, &s.nli.finetune);
    let mut pytorch = side_json(&theirs, pairs, tokens, a.batch, s.steps);
    for key in ["torch", "transformers", "attn_implementation"] {
        pytorch[key] = reference[key].clone();
    }
    let report = json!({
        "bench": "finetune", "shape": s.shape, "frozen_embeddings": s.nli.finetune.freeze_embeddings, "layers": cfg.layers, "hidden": cfg.hidden, "heads": cfg.heads,
        "vocab": s.vocab, "batch": a.batch, "check_steps": a.check, "warmup": s.warmup, "steps": s.steps,
        "pairs": pairs, "tokens": tokens, "padded_tokens": padded_tokens, "max_len": s.max_len,
        "lr": f.lr, "clip_norm": f.clip_norm, "dropout": cfg.dropout, "threads": s.threads,
        "device": device_name(s.dev),
        "crossling": side_json(&ours, pairs, tokens, a.batch, s.steps),
        "pytorch": pytorch,
        "ratio": theirs.seconds / ours.seconds,
        "ratio_best_step": min(&theirs.step_seconds) / min(&ours.step_seconds),
        "check_loss_abs_difference": loss_diff, "check_grad_norm_rel_difference": norm_rel_diff,
    });
    if a.common.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    Ok(())
}

/// The report for a reader.
fn print_text(r: &Value) {
    let (pairs, tokens, batch) = (r["pairs"].as_f64().unwrap_or(0.0), r["tokens"].as_f64().unwrap_or(0.0), &r["batch"]);
    println!(
        "NLI fine-tuning ({} shape: {} × {}, {} heads, vocab {}), batches of {batch} pairs, {} timed steps \
         ({pairs} pairs, {tokens} tokens, {} padded), lr {}, clip {}, dropout {}, {} threads, {}",
        r["shape"].as_str().unwrap_or("?"),
        r["layers"],
        r["hidden"],
        r["heads"],
        r["vocab"],
        r["steps"],
        r["padded_tokens"],
        r["lr"],
        r["clip_norm"],
        r["dropout"],
        r["threads"],
        r["device"].as_str().unwrap_or("?"),
    );
    for who in ["crossling", "pytorch"] {
        let m = &r[who];
        let s = m["seconds"].as_f64().unwrap_or(f64::NAN);
        println!(
            "  {who:<10}{s:>8.3} s  {:>7.1} pairs/s  {:>8.0} tokens/s  (best step {:>7.1} pairs/s)  {:.1} s CPU",
            pairs / s,
            tokens / s,
            m["best_step_pairs_per_s"].as_f64().unwrap_or(f64::NAN),
            m["cpu_seconds"].as_f64().unwrap_or(f64::NAN),
        );
    }
    println!(
        "  ratio (crossling / pytorch): {:.2} (best steps: {:.2})",
        r["ratio"].as_f64().unwrap_or(f64::NAN),
        r["ratio_best_step"].as_f64().unwrap_or(f64::NAN)
    );
    let (ours, theirs) = (&r["crossling"], &r["pytorch"]);
    println!(
        "  mean loss of the timed steps (dropout on): crossling {:.4}, pytorch {:.4}; trainable parameters {} / {}",
        mean(&floats(&ours["losses"])),
        mean(&floats(&theirs["losses"])),
        ours["trainable_parameters"],
        theirs["trainable_parameters"]
    );
    let column = |side: &Value, key: &str| floats(&side[key]);
    let (ol, on, tl, tn) = (
        column(ours, "check_losses"),
        column(ours, "check_grad_norms"),
        column(theirs, "check_losses"),
        column(theirs, "check_grad_norms"),
    );
    let (dl, dn) = (floats(&r["check_loss_abs_difference"]), floats(&r["check_grad_norm_rel_difference"]));
    for i in 0..ol.len().min(tl.len()).min(on.len()).min(tn.len()) {
        println!(
            "  check step {} (dropout off): loss {:.6} / {:.6} (|Δ| {:.1e}), grad norm {:.5} / {:.5} (rel. Δ {:.1e})",
            i + 1,
            ol[i],
            tl[i],
            dl[i],
            on[i],
            tn[i],
            dn[i]
        );
    }
    if dl.iter().any(|d| *d > 1e-4) {
        eprintln!("warning: the check losses differ by more than 1e-4: the two sides do not compute the same thing");
    }
}
