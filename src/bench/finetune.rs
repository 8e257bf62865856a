//! `crossling bench finetune`: NLI fine-tuning throughput — crossling's task head ([`NliFinetune::logits`]: the
//! encoder, dropout and a linear classifier on `[CLS]`; cross-entropy) stepped by the task optimiser
//! ([`Finetuner::step`]: backward, global gradient-norm clip, Adam, what `task nli` runs through
//! `train_with_selection`) — against the same head in PyTorch Python (`src/bench/reference/bench_finetune.py`: Hugging
//! Face `BertModel` + `nn.Linear(hidden, 3)`, `clip_grad_norm_`, `torch.optim.Adam` without weight decay), on the
//! very same model (the script creates a random `BertForMaskedLM`, saves it, and crossling imports that folder),
//! the same classifier weights (the script writes them, crossling loads them), the same batches and threads.
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
use crossling::features::batch::padded;
use crossling::model::ModelConfig;
use crossling::tasks::finetune::{Finetuner, LrSchedule, OptimSettings};
use crossling::tasks::nli::{NliConfig, NliFinetune, NliItem, CLASSES};
use crossling::text::codeswitch::SplitMix64;
use crossling::Scale;
use serde_json::{json, Value};
use std::time::Instant;
use tch::{Kind, Tensor};

use super::analysis::{
    cpu_seconds, device, device_name, python, run_reference, script, sync, tempfile_dir, threads, Common,
};

#[derive(Args)]
pub struct BenchFinetuneArgs {
    /// Model shape: the architecture of a scale (`ModelConfig::at`: cpu 4 × 128, 4 heads; paper 8 × 768, 12 heads),
    /// vocabulary 16,000 at cpu and 32,000 at paper.
    #[arg(long, value_enum, default_value_t = Scale::Cpu)]
    shape: Scale,
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

pub fn run(a: BenchFinetuneArgs) -> Result<()> {
    let (vocab, steps_default, warmup_default) = match a.shape {
        Scale::Smoke => (400, 3, 1),
        Scale::Cpu => (16_000, 30, 2),
        Scale::Paper => (32_000, 5, 1),
    };
    let cfg = ModelConfig::at(a.shape, vocab, Vec::<String>::new());
    let mut nli = NliConfig::at(a.shape);
    (nli.finetune.batch_size, nli.finetune.seed) = (a.batch, a.common.seed as u64);
    let (steps, warmup) = (a.steps.unwrap_or(steps_default), a.warmup.unwrap_or(warmup_default));
    if steps == 0 || a.batch == 0 {
        bail!("--steps and --batch must be at least 1");
    }
    let max_len = nli.finetune.max_len.min(cfg.max_positions);
    let t = threads(&a.common);
    tch::set_num_threads(t as i32);
    let dev = device(&a.common)?;
    let dir = tempfile_dir()?;
    let n_batches = a.check + warmup + steps;
    let items = pairs(n_batches * a.batch, vocab, max_len, a.common.seed as u64);
    let batches: Vec<&[NliItem]> = items.chunks(a.batch).collect();
    let timed = &batches[a.check + warmup..];
    let tokens: usize = timed.iter().flat_map(|b| b.iter()).map(|it| it.ids.len()).sum();
    let padded_tokens: usize = timed.iter().map(|b| b.len() * b.iter().map(|it| it.ids.len()).max().unwrap_or(0)).sum();
    let seqs = steps * a.batch;

    let flat: Vec<i64> = items.iter().flat_map(|it| it.ids.iter().copied()).collect();
    let offsets: Vec<i64> = std::iter::once(0)
        .chain(items.iter().scan(0i64, |acc, it| {
            *acc += it.ids.len() as i64;
            Some(*acc)
        }))
        .collect();
    let labels: Vec<i64> = items.iter().map(|it| it.label as i64).collect();
    let p = |name: &str| dir.join(name);
    for (name, v) in [("ids.npy", &flat), ("offsets.npy", &offsets), ("labels.npy", &labels)] {
        arrays::write_npy(&p(name), &Tensor::from_slice(v))?;
    }
    let model_dir = p("model");
    let mut args: Vec<String> =
        [&model_dir, &p("head_weight.npy"), &p("head_bias.npy"), &p("ids.npy"), &p("offsets.npy"), &p("labels.npy")]
            .iter()
            .map(|x| x.display().to_string())
            .collect();
    args.extend(super::features::model_flags(&cfg, t, a.common.seed as usize));
    for (flag, v) in [("--batch", a.batch), ("--check", a.check), ("--warmup", warmup), ("--steps", steps)] {
        args.push(flag.into());
        args.push(v.to_string());
    }
    args.extend(["--lr".into(), nli.finetune.lr.to_string(), "--clip".into(), nli.finetune.clip_norm.to_string()]);
    args.extend(["--device".to_string(), device_name(dev)]);
    if !a.common.json {
        eprintln!("pytorch: creating the model, then {} + {warmup} untimed and {steps} timed steps …", a.check);
    }
    let reference = run_reference(&python(&a.common), &script("bench_finetune.py"), &args)?;

    let imported = crossling::model::hf::import::import_hf(&model_dir, dev)?;
    let compute = Compute::on(dev, Precision::Fp32)?;
    let ft = NliFinetune::new(imported.model, imported.vs, 0, compute, &nli)?;
    tch::no_grad(|| -> Result<()> {
        let w = arrays::read_npy(&p("head_weight.npy"))?;
        let b = arrays::read_npy(&p("head_bias.npy"))?;
        let lin = &ft.classifier.linear;
        lin.ws.shallow_clone().copy_(&w.to_device(dev));
        lin.bs.as_ref().context("the classifier has no bias")?.shallow_clone().copy_(&b.to_device(dev));
        Ok(())
    })?;
    std::fs::remove_dir_all(&dir).ok();
    let settings = OptimSettings {
        lr: nli.finetune.lr,
        schedule: LrSchedule::Fixed,
        warmup_fraction: 0.0,
        clip_norm: nli.finetune.clip_norm,
        total_steps: n_batches as u64,
        seed: nli.finetune.seed,
    };
    let rng_guard = crossling::device::torch_rng_lock(); // Finetuner::step seeds dropout
    let mut opt = Finetuner::new(&ft.vs, compute, settings);
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
    for b in &batches[a.check..a.check + warmup] {
        opt.step(|| loss_of(b, true))?;
    }
    sync(dev);
    let (mut losses, mut times) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
    let (start, cpu0) = (Instant::now(), cpu_seconds());
    for b in timed {
        let s = Instant::now();
        losses.push(opt.step(|| loss_of(b, true))?.loss);
        sync(dev);
        times.push(s.elapsed().as_secs_f64());
    }
    let (secs, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
    drop(rng_guard);

    let theirs = reference["seconds"].as_f64().context("reference JSON lacks seconds")?;
    let their_cpu = reference["cpu_seconds"].as_f64().unwrap_or(f64::NAN);
    let their_times = floats(&reference["step_seconds"]);
    let their_losses = floats(&reference["losses"]);
    let (their_check_loss, their_check_norm) =
        (floats(&reference["check_losses"]), floats(&reference["check_grad_norms"]));
    if their_check_loss.len() != check.len() || their_check_norm.len() != check.len() {
        bail!("the reference reported {} check steps, crossling ran {}", their_check_loss.len(), check.len());
    }
    let loss_diff: Vec<f64> = check.iter().zip(&their_check_loss).map(|(c, r)| (c.0 - r).abs()).collect();
    let norm_rel_diff: Vec<f64> =
        check.iter().zip(&their_check_norm).map(|(c, r)| (c.1 - r).abs() / r.abs().max(1e-12)).collect();
    let (best, their_best) = (min(&times), min(&their_times));
    let step_tokens = tokens as f64 / steps as f64;
    let report = json!({
        "bench": "finetune", "shape": a.shape, "layers": cfg.layers, "hidden": cfg.hidden, "heads": cfg.heads,
        "vocab": vocab, "batch": a.batch, "check_steps": a.check, "warmup": warmup, "steps": steps,
        "pairs": seqs, "tokens": tokens, "padded_tokens": padded_tokens, "max_len": max_len,
        "lr": nli.finetune.lr, "clip_norm": nli.finetune.clip_norm, "dropout": cfg.dropout, "threads": t, "device": device_name(dev),
        "crossling": {
            "seconds": secs, "cpu_seconds": cpu, "pairs_per_s": seqs as f64 / secs, "tokens_per_s": tokens as f64 / secs,
            "best_step_pairs_per_s": a.batch as f64 / best, "best_step_tokens_per_s": step_tokens / best,
            "step_seconds": times, "losses": losses, "trainable_parameters": ft.freeze.trainable_params,
            "check_losses": check.iter().map(|c| c.0).collect::<Vec<_>>(),
            "check_grad_norms": check.iter().map(|c| c.1).collect::<Vec<_>>(),
        },
        "pytorch": {
            "seconds": theirs, "cpu_seconds": their_cpu, "pairs_per_s": seqs as f64 / theirs,
            "tokens_per_s": tokens as f64 / theirs,
            "best_step_pairs_per_s": a.batch as f64 / their_best, "best_step_tokens_per_s": step_tokens / their_best,
            "step_seconds": their_times, "losses": their_losses,
            "trainable_parameters": reference["trainable_parameters"],
            "check_losses": their_check_loss, "check_grad_norms": their_check_norm,
            "torch": reference["torch"], "transformers": reference["transformers"],
            "attn_implementation": reference["attn_implementation"],
        },
        "ratio": theirs / secs, "ratio_best_step": their_best / best,
        "check_loss_abs_difference": loss_diff, "check_grad_norm_rel_difference": norm_rel_diff,
    });
    if a.common.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "NLI fine-tuning ({} shape: {} × {}, {} heads, vocab {vocab}), batches of {} pairs, {steps} timed steps \
         ({seqs} pairs, {tokens} tokens, {padded_tokens} padded), lr {}, clip {}, dropout {}, {t} threads, {}",
        a.shape,
        cfg.layers,
        cfg.hidden,
        cfg.heads,
        a.batch,
        nli.finetune.lr,
        nli.finetune.clip_norm,
        cfg.dropout,
        device_name(dev)
    );
    for (who, s, c, b) in [("crossling", secs, cpu, best), ("pytorch", theirs, their_cpu, their_best)] {
        println!(
            "  {who:<10}{s:>8.3} s  {:>7.1} pairs/s  {:>8.0} tokens/s  (best step {:>7.1} pairs/s)  {c:.1} s CPU",
            seqs as f64 / s,
            tokens as f64 / s,
            a.batch as f64 / b
        );
    }
    println!("  ratio (crossling / pytorch): {:.2} (best steps: {:.2})", theirs / secs, their_best / best);
    println!(
        "  mean loss of the timed steps (dropout on): crossling {:.4}, pytorch {:.4}; trainable parameters {} / {}",
        mean(&losses),
        mean(&their_losses),
        ft.freeze.trainable_params,
        reference["trainable_parameters"]
    );
    for (i, (c, (rl, rn))) in check.iter().zip(their_check_loss.iter().zip(&their_check_norm)).enumerate() {
        println!(
            "  check step {} (dropout off): loss {:.6} / {rl:.6} (|Δ| {:.1e}), grad norm {:.5} / {rn:.5} (rel. Δ {:.1e})",
            i + 1,
            c.0,
            loss_diff[i],
            c.1,
            norm_rel_diff[i]
        );
    }
    if loss_diff.iter().any(|d| *d > 1e-4) {
        eprintln!("warning: the check losses differ by more than 1e-4: the two sides do not compute the same thing");
    }
    Ok(())
}
