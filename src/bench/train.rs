//! `crossling bench train`: training throughput of crossling's real training step ([`crossling::train::TrainStep`])
//! against the same model in PyTorch eager (`src/bench/reference/bench_train.py`, Hugging Face `BertForMaskedLM`),
//! run in the same command with the same shape, batch, threads and masking rate, on random token batches.
//!
//! Shapes: `cpu` and `paper`, the pre-training settings of those scales ([`Pretraining::at`]: layers, width, heads, a
//! pair's vocabulary, batch and stream length; `paper` with 4 × 256 tokens per step so that it finishes in minutes on 2
//! cores); `--layers`, `--hidden`, `--heads`, `--vocab`, `--batch` and `--seq` change them (the shapes tried for the
//! `cpu` regime). The blocks follow the scale (pre-LN at `cpu`, post-LN at `paper`; `--post-ln` forces BERT's): the
//! post-LN reference is `BertForMaskedLM`, the pre-LN one `RobertaPreLayerNormForMaskedLM`, the same pre-LN blocks as
//! crossling's (embedding LayerNorm, LayerNorm on each sub-block's input, a final LayerNorm). Reports tokens/s of both,
//! the ratio crossling / PyTorch, and model FLOP/s (formula in [`crossling::train::bench`]) against a matmul peak
//! measured in the same command; on CUDA also the bf16-autocast runs and their MFU against the measured bf16 matmul
//! peak. tokens/s is over all timed steps; "best step" is `batch · seq` over the fastest timed step, the estimate least
//! disturbed by other work on a shared machine. Each run also times the step's matrix products alone
//! ([`crossling::train::gemm_share`]; crossling's MLM head at the masked positions, Hugging Face's at every one) and
//! reports the share of the step spent outside them.
use std::path::PathBuf;

use super::common::{require_reference, run_reference, script};
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use crossling::device::{Compute, Precision};
use crossling::model::ModelConfig;
use crossling::nn::schedule::AdamLayout;
use crossling::train::bench::{matmul_peak, time_train_steps, train_flops_per_step, TimingRun};
use crossling::train::gemm_share::{outside_share, step_gemms, time_gemms, total_seconds};
use crossling::train::presets::Pretraining;
use crossling::Scale;
use serde_json::{json, Value};
use tch::{Device, Kind};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Training tokens/s of crossling vs PyTorch eager (same model, batch, threads), FLOP/s vs a measured peak.
    #[command(after_help = "Example:\n  crossling bench train --threads 2")]
    Train(TrainBenchArgs),
    /// NLI fine-tuning pairs/s of crossling's task head vs the same head in PyTorch (same model, batches, threads).
    #[command(after_help = "Example:\n  crossling bench finetune --threads 2")]
    Finetune(super::finetune::BenchFinetuneArgs),
    /// word2vec training words/s and quality of crossling vs gensim (same sentences, settings and threads).
    #[command(after_help = "Example:\n  crossling bench word2vec --threads 2")]
    Word2vec(super::word2vec::BenchWord2vecArgs),
}

#[derive(Args)]
pub struct TrainBenchArgs {
    /// cpu, paper or both.
    #[arg(long, default_value = "both")]
    shape: String,
    /// Timed steps (default: 10 for cpu, 5 for paper).
    #[arg(long)]
    steps: Option<usize>,
    /// Untimed warm-up steps before them (default: 2 for cpu, 1 for paper).
    #[arg(long)]
    warmup: Option<usize>,
    /// Sequences per batch (default: the `cpu` preset's 32; 4 for paper).
    #[arg(long)]
    batch: Option<usize>,
    /// Tokens per sequence (default: the scale's stream length, 64 for cpu, 256 for paper).
    #[arg(long)]
    seq: Option<usize>,
    /// Vocabulary size (default: the scale's pair vocabulary, 8000 for cpu, 64000 for paper).
    #[arg(long)]
    vocab: Option<usize>,
    /// Layers instead of the scale's.
    #[arg(long)]
    layers: Option<usize>,
    /// Width instead of the scale's.
    #[arg(long)]
    hidden: Option<usize>,
    /// Attention heads instead of the scale's.
    #[arg(long)]
    heads: Option<usize>,
    /// Dropout of hidden states and attention weights in both runs (default: the scale's, none at cpu and BERT's
    /// 0.1 at paper); 0.1 at cpu shows what the dropout masks cost.
    #[arg(long)]
    dropout: Option<f64>,
    /// Share of the tokens masked for the loss in both runs (default: the scale's presets', 40 % at cpu since
    /// 2026-12-01 and BERT's 15 % at paper). crossling's head runs at the masked positions, Hugging Face's at all.
    #[arg(long)]
    mask_prob: Option<f64>,
    /// Post-LN blocks (BERT's) in both runs, also where the scale's presets are pre-LN (`cpu`).
    #[arg(long)]
    post_ln: bool,
    /// Intra-op threads of both runs (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// Python with torch and transformers (default: $CROSSLING_PYTHON, else the project's .venv/bin/python).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the PyTorch reference.
    #[arg(long)]
    no_reference: bool,
    /// Also time crossling with Adam and clipping parameter by parameter, and print flat / per-parameter (crossling's
    /// Adam keeps parameters, gradients and moments in flat buffers: `crossling::nn::flat`).
    #[arg(long)]
    compare_adam: bool,
    /// Run the PyTorch reference before crossling's steps instead of after them (on a GPU the reference ran 1.4–1.6×
    /// faster alone than after crossling in the same command; this tests whether the order is the cause).
    #[arg(long)]
    reference_first: bool,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Train(args) => train(args),
        BenchCommand::Finetune(args) => super::finetune::run(args),
        BenchCommand::Word2vec(args) => super::word2vec::run(args),
    }
}

struct Shape {
    name: Scale,
    model: ModelConfig,
    mask_prob: f64,
    batch: usize,
    seq: usize,
    steps: usize,
    warmup: usize,
}

fn shapes(a: &TrainBenchArgs) -> Result<Vec<Shape>> {
    let names: &[Scale] = match a.shape.as_str() {
        "cpu" => &[Scale::Cpu],
        "paper" => &[Scale::Paper],
        "both" => &[Scale::Cpu, Scale::Paper],
        other => bail!("unknown --shape '{other}': expected cpu, paper or both"),
    };
    names
        .iter()
        .map(|&name| {
            let cpu = name == Scale::Cpu;
            let sc = Pretraining::at(name);
            let seq = a.seq.unwrap_or(sc.seq_len);
            let defaults = ModelConfig::default();
            let model = ModelConfig {
                dropout: a.dropout.unwrap_or(sc.dropout),
                attention_dropout: a.dropout.unwrap_or(sc.dropout),
                vocab_size: a.vocab.unwrap_or(sc.vocab),
                layers: a.layers.unwrap_or(sc.layers),
                hidden: a.hidden.unwrap_or(sc.hidden),
                heads: a.heads.unwrap_or(sc.heads),
                pre_ln: sc.pre_ln && !a.post_ln,
                languages: Vec::new(),
                ..defaults
            };
            model.validate()?;
            if seq > model.max_positions {
                bail!("--seq {seq} exceeds the model's {} positions", model.max_positions);
            }
            Ok(Shape {
                name,
                model,
                mask_prob: a.mask_prob.unwrap_or(sc.mask_prob),
                batch: a.batch.unwrap_or(if cpu { sc.batch } else { 4 }),
                seq,
                steps: a.steps.unwrap_or(if cpu { 10 } else { 5 }),
                warmup: a.warmup.unwrap_or(if cpu { 2 } else { 1 }),
            })
        })
        .collect()
}

fn device_arg(d: Device) -> String {
    match d {
        Device::Cuda(i) => format!("cuda:{i}"),
        _ => "cpu".into(),
    }
}

/// Runs `bench_train.py` of the reference folder ([`script`]) and parses its JSON line.
fn pytorch(a: &TrainBenchArgs, s: &Shape, threads: usize, device: Device, bf16: bool) -> Result<Value> {
    let m = &s.model;
    let mut args: Vec<String> = Vec::new();
    for (flag, v) in [
        ("--layers", m.layers),
        ("--hidden", m.hidden),
        ("--heads", m.heads),
        ("--ffn", m.ffn_dim()),
        ("--vocab", m.vocab_size),
        ("--max-positions", m.max_positions),
        ("--seq", s.seq),
        ("--batch", s.batch),
        ("--steps", s.steps),
        ("--warmup", s.warmup),
        ("--threads", threads),
    ] {
        args.extend([flag.to_string(), v.to_string()]);
    }
    args.extend(["--seed".into(), a.seed.to_string(), "--device".into(), device_arg(device)]);
    args.extend(["--dropout".into(), m.dropout.to_string(), "--mask-prob".into(), s.mask_prob.to_string()]);
    if bf16 {
        args.push("--bf16".into());
    }
    if m.pre_ln {
        args.push("--pre-ln".into());
    }
    run_reference(&crossling::paths::python(a.python.as_deref()), &script("bench_train.py"), &args)
}

/// The smallest entry (the least disturbed step on a shared machine); +∞ when empty.
fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

fn train(a: TrainBenchArgs) -> Result<()> {
    let shapes = shapes(&a)?;
    let threads = a.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    tch::set_num_threads(threads as i32);
    if !a.no_reference {
        require_reference(&script("bench_train.py"))?;
    }
    let device = crossling::device::resolve_device(&a.device)?;
    let cuda = device.is_cuda();
    let (n, reps) = if cuda { (8192, 10) } else { (2048, 3) };
    if !a.json {
        eprintln!("measuring the matmul peak ({n} × {n}) …");
    }
    let peak_fp32 = matmul_peak(device, Kind::Float, n, reps);
    let peak_bf16 = cuda.then(|| matmul_peak(device, Kind::BFloat16, n, reps));
    let precisions: Vec<Precision> = if cuda { vec![Precision::Fp32, Precision::Bf16] } else { vec![Precision::Fp32] };
    let mut results = Vec::new();
    for s in &shapes {
        let flops = train_flops_per_step(&s.model, s.batch, s.seq);
        let tokens_per_step = (s.batch * s.seq) as f64;
        let mut runs = Vec::new();
        for &p in &precisions {
            let compute = Compute::on(device, p)?;
            let bf16 = compute.bf16;
            let peak = if bf16 { peak_bf16.unwrap_or(peak_fp32) } else { peak_fp32 };
            let reference_before = if a.reference_first && !a.no_reference {
                if !a.json {
                    eprintln!("{}: pytorch {} (before crossling) …", s.name, compute.describe());
                }
                Some(pytorch(&a, s, threads, device, bf16)?)
            } else {
                None
            };
            if !a.json {
                eprintln!("{}: crossling {} …", s.name, compute.describe());
            }
            let timing = |adam| TimingRun {
                warmup: s.warmup,
                steps: s.steps,
                compute,
                adam,
                mask_prob: s.mask_prob,
                seed: a.seed,
            };
            let ours = time_train_steps(&s.model, s.batch, s.seq, timing(AdamLayout::Flat))?;
            let ours_fps = ours.tokens_per_s / tokens_per_step * flops;
            let ours_best = tokens_per_step / min(&ours.step_seconds);
            // The step's products timed alone: crossling's head at the masked positions, Hugging Face's at all.
            let kind = if bf16 { Kind::BFloat16 } else { Kind::Float };
            let gemms = |positions: usize, step_seconds: &[f64]| {
                let t = time_gemms(&step_gemms(&s.model, s.batch, s.seq, positions), device, kind, 3);
                let total = total_seconds(&t);
                let mean = step_seconds.iter().sum::<f64>() / step_seconds.len().max(1) as f64;
                json!({
                    "head_positions": positions,
                    "seconds": total,
                    "outside_share": outside_share(total, mean),
                    "outside_share_best_step": outside_share(total, min(step_seconds)),
                    "products": t.iter().map(|x| json!({
                        "name": x.gemm.name, "count": x.gemm.count, "seconds": x.seconds,
                        "batch": x.gemm.batch, "m": x.gemm.m, "k": x.gemm.k, "n": x.gemm.n,
                    })).collect::<Vec<_>>(),
                })
            };
            let mut run = json!({
                "precision": if bf16 { "bf16" } else { "fp32" },
                "peak_flops_per_s": peak,
                "crossling": {
                    "tokens_per_s": ours.tokens_per_s,
                    "best_step_tokens_per_s": ours_best,
                    "flops_per_s": ours_fps,
                    "fraction_of_peak": ours_fps / peak,
                    "step_seconds": ours.step_seconds,
                    "losses": ours.losses,
                    "parameters": ours.parameters,
                    "adam_flat_steps": ours.adam_flat_steps,
                    "gemms": gemms(ours.head_positions, &ours.step_seconds),
                },
            });
            if a.compare_adam {
                if !a.json {
                    eprintln!("{}: crossling {}, Adam per parameter …", s.name, compute.describe());
                }
                let per = time_train_steps(&s.model, s.batch, s.seq, timing(AdamLayout::PerParameter))?;
                let per_best = tokens_per_step / min(&per.step_seconds);
                run["crossling_adam_per_parameter"] = json!({
                    "tokens_per_s": per.tokens_per_s,
                    "best_step_tokens_per_s": per_best,
                    "step_seconds": per.step_seconds,
                    "losses": per.losses,
                    "adam_flat_steps": per.adam_flat_steps,
                });
                run["adam_flat_over_per_parameter"] = json!(ours.tokens_per_s / per.tokens_per_s);
                run["adam_flat_over_per_parameter_best_step"] = json!(ours_best / per_best);
            }
            if !a.no_reference {
                let mut theirs = match reference_before {
                    Some(before) => before,
                    None => {
                        if !a.json {
                            eprintln!("{}: pytorch {} …", s.name, compute.describe());
                        }
                        pytorch(&a, s, threads, device, bf16)?
                    }
                };
                let tps = theirs["tokens_per_s"].as_f64().context("reference JSON lacks tokens_per_s")?;
                let fps = tps / tokens_per_step * flops;
                let steps: Vec<f64> = theirs["step_seconds"]
                    .as_array()
                    .context("reference JSON lacks step_seconds")?
                    .iter()
                    .filter_map(Value::as_f64)
                    .collect();
                let best = tokens_per_step / min(&steps);
                theirs["best_step_tokens_per_s"] = json!(best);
                theirs["flops_per_s"] = json!(fps);
                theirs["fraction_of_peak"] = json!(fps / peak);
                theirs["gemms"] = gemms(s.batch * s.seq, &steps);
                run["pytorch"] = theirs;
                run["ratio"] = json!(ours.tokens_per_s / tps);
                run["ratio_best_step"] = json!(ours_best / best);
            }
            runs.push(run);
        }
        let m = &s.model;
        results.push(json!({
            "shape": s.name,
            "layers": m.layers, "hidden": m.hidden, "heads": m.heads, "ffn": m.ffn_dim(), "vocab": m.vocab_size,
            "blocks": if m.pre_ln { "pre-LN" } else { "post-LN" }, "dropout": m.dropout,
            "batch": s.batch, "seq": s.seq, "warmup": s.warmup, "steps": s.steps, "mask_prob": s.mask_prob,
            "flops_per_step": flops,
            "runs": runs,
        }));
    }
    let report = json!({
        "device": device_arg(device),
        "threads": threads,
        "peak_fp32_flops_per_s": peak_fp32,
        "peak_bf16_flops_per_s": peak_bf16,
        "reference_first": a.reference_first,
        "shapes": results,
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    Ok(())
}

fn print_text(r: &Value) {
    let g = |v: &Value| v.as_f64().unwrap_or(f64::NAN) / 1e9;
    println!(
        "device {}, {} threads; matmul peak fp32 {:.1} GFLOP/s",
        r["device"].as_str().unwrap_or("?"),
        r["threads"],
        g(&r["peak_fp32_flops_per_s"])
    );
    if !r["peak_bf16_flops_per_s"].is_null() {
        println!("matmul peak bf16 {:.1} GFLOP/s", g(&r["peak_bf16_flops_per_s"]));
    }
    for s in r["shapes"].as_array().into_iter().flatten() {
        println!(
            "\n{}: {} layers × {} wide × {} heads, {}, dropout {}, vocab {}, {} × {} tokens per step ({} masked), {} warm-up + {} timed steps; {:.1} GFLOP per step",
            s["shape"].as_str().unwrap_or("?"), s["layers"], s["hidden"], s["heads"],
            s["blocks"].as_str().unwrap_or("?"), s["dropout"], s["vocab"], s["batch"], s["seq"], s["mask_prob"], s["warmup"],
            s["steps"], g(&s["flops_per_step"])
        );
        for run in s["runs"].as_array().into_iter().flatten() {
            let p = run["precision"].as_str().unwrap_or("?");
            for who in ["crossling", "pytorch"] {
                let x = &run[who];
                if x.is_null() {
                    continue;
                }
                println!(
                    "  {who:<9} {p}: {:>9.0} tokens/s (best step {:>7.0})  {:>7.1} GFLOP/s  {:>5.1} % of peak",
                    x["tokens_per_s"].as_f64().unwrap_or(f64::NAN),
                    x["best_step_tokens_per_s"].as_f64().unwrap_or(f64::NAN),
                    g(&x["flops_per_s"]),
                    100.0 * x["fraction_of_peak"].as_f64().unwrap_or(f64::NAN)
                );
                let gm = &x["gemms"];
                if !gm.is_null() {
                    let f = |k: &str| gm[k].as_f64().unwrap_or(f64::NAN);
                    println!(
                        "            GEMMs alone {:.1} ms a step (head at {} positions): {:.1} % of the step outside them ({:.1} % of the best step)",
                        1e3 * f("seconds"),
                        gm["head_positions"],
                        100.0 * f("outside_share"),
                        100.0 * f("outside_share_best_step")
                    );
                }
            }
            if let (Some(ratio), Some(best)) = (run["ratio"].as_f64(), run["ratio_best_step"].as_f64()) {
                println!("  ratio crossling / pytorch ({p}): {ratio:.3} (best steps: {best:.3})");
            }
            let per = &run["crossling_adam_per_parameter"];
            if let (Some(tps), Some(ratio), Some(best)) = (
                per["tokens_per_s"].as_f64(),
                run["adam_flat_over_per_parameter"].as_f64(),
                run["adam_flat_over_per_parameter_best_step"].as_f64(),
            ) {
                println!(
                    "  crossling {p} with Adam per parameter: {tps:>9.0} tokens/s; flat / per parameter {ratio:.3} (best steps: {best:.3})"
                );
            }
        }
    }
}
