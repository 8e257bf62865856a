//! `crossling bench cka` and `crossling bench csls`: timings of the analysis primitives against Python reference
//! implementations run in the same command on the same data and threads (`src/bench/reference/bench_cka.py`,
//! `src/bench/reference/bench_csls.py`). Benchmarks, not tests: they print what they measured. With `--device cuda`
//! crossling's kernels run on the GPU (timed to a device synchronisation, input copy excluded); the CSLS reference
//! runs on the same device, the CKA reference (numpy) stays on the CPU.
use anyhow::Result;
use clap::{Args, Subcommand};
use crossling::analysis::{cka, scores};
use crossling::arrays;
use serde_json::json;
use std::time::Instant;
use tch::{Device, Kind, Tensor};

use super::common::{
    cpu_seconds, device, device_name, python, run_reference, script, sync, tempfile_dir, threads, Common,
};

#[derive(Subcommand)]
pub enum BenchAnalysisCommand {
    /// Linear-CKA layer × layer grid against Kornblith's numpy function applied pair by pair.
    #[command(after_help = "Example:\n  crossling bench cka --threads 2")]
    Cka(BenchCkaArgs),
    /// Bootstrap replicates of per-layer linear CKA: the form crossling chooses against the feature-space form.
    #[command(after_help = "Example:\n  crossling bench cka-bootstrap --threads 2")]
    CkaBootstrap(BenchCkaBootstrapArgs),
    /// CSLS top-k for every source row against a blocked MUSE-style PyTorch implementation.
    #[command(after_help = "Example:\n  crossling bench csls --threads 2")]
    Csls(BenchCslsArgs),
    /// Sentence features of every layer (mean-pooled) against Hugging Face transformers on the same model.
    #[command(after_help = "Example:\n  crossling bench features --threads 2")]
    Features(super::features::BenchFeaturesArgs),
}

#[derive(Args)]
pub struct BenchCkaArgs {
    /// Rows (examples) per layer.
    #[arg(long, default_value_t = 10_000)]
    n: i64,
    /// Width of each layer.
    #[arg(long, default_value_t = 768)]
    d: i64,
    /// Layers in each stack.
    #[arg(long, default_value_t = 9)]
    layers: i64,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct BenchCkaBootstrapArgs {
    /// Rows (sentences) per layer (the real-model sentence figure: 1,000).
    #[arg(long, default_value_t = 1000)]
    n: i64,
    /// Width of each layer (e5-small: 384).
    #[arg(long, default_value_t = 384)]
    d: i64,
    /// Layers (e5-small has 13 with the embeddings).
    #[arg(long, default_value_t = 4)]
    layers: i64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 1000)]
    resamples: usize,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct BenchCslsArgs {
    /// Rows of each space (the paper-scale vocabulary is 200k).
    #[arg(long, default_value_t = 200_000)]
    n: i64,
    #[arg(long, default_value_t = 300)]
    d: i64,
    /// CSLS neighbourhood.
    #[arg(long, default_value_t = 10)]
    k: usize,
    /// Candidates kept per source row.
    #[arg(long, default_value_t = 10)]
    topk: usize,
    /// Time crossling alone (for the memory and time of sizes the reference would take too long for).
    #[arg(long)]
    no_reference: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(cmd: BenchAnalysisCommand) -> Result<()> {
    match cmd {
        BenchAnalysisCommand::Cka(a) => bench_cka(a),
        BenchAnalysisCommand::CkaBootstrap(a) => bench_cka_bootstrap(a),
        BenchAnalysisCommand::Csls(a) => bench_csls(a),
        BenchAnalysisCommand::Features(a) => super::features::run(a),
    }
}

/// Peak resident set size of this process so far (VmHWM), in bytes.
fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

/// Reset the peak RSS counter (Linux: writing 5 to /proc/self/clear_refs); false where unsupported.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn gib(b: Option<u64>) -> String {
    b.map(|b| format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)).unwrap_or_else(|| "n/a".into())
}

fn randn(shape: &[i64], seed: i64) -> Tensor {
    let _g = crossling::device::torch_rng_lock();
    tch::manual_seed(seed);
    Tensor::randn(shape, (Kind::Float, tch::Device::Cpu))
}

fn bench_cka(a: BenchCkaArgs) -> Result<()> {
    let t = threads(&a.common);
    tch::set_num_threads(t as i32);
    let dir = tempfile_dir()?;
    // Y's layer l shares a share of X's layer l, so the diagonal stands out.
    let xs = randn(&[a.layers, a.n, a.d], a.common.seed);
    let ys = &xs * 0.5 + randn(&[a.layers, a.n, a.d], a.common.seed + 1);
    let (xp, yp) = (dir.join("xs.npy"), dir.join("ys.npy"));
    arrays::write_npy(&xp, &xs)?;
    arrays::write_npy(&yp, &ys)?;
    let reference = run_reference(
        &python(&a.common),
        &script("bench_cka.py"),
        &[xp.display().to_string(), yp.display().to_string(), t.to_string()],
    )?;
    let dev = device(&a.common)?;
    let (xs, ys) = (xs.to_device(dev), ys.to_device(dev));
    sync(dev);
    // Untimed warm-up on a slice (thread pool and BLAS start-up), as the reference's first pair pays it once too.
    let warm_rows = xs.size()[1].min(1000);
    let _warm = cka::cka_grid(
        &xs.narrow(0, 0, 1).narrow(1, 0, warm_rows),
        &ys.narrow(0, 0, 1).narrow(1, 0, warm_rows),
        cka::CkaKind::Linear,
    )?;
    sync(dev);
    let (start, cpu0) = (Instant::now(), cpu_seconds());
    let grid = cka::cka_grid(&xs, &ys, cka::CkaKind::Linear)?;
    sync(dev);
    let (ours, ours_cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
    let diff = |key: &str| -> f64 {
        let g = reference[key].as_array().cloned().unwrap_or_default();
        grid.iter()
            .zip(&g)
            .flat_map(|(r, gr)| r.iter().zip(gr.as_array().cloned().unwrap_or_default()))
            .map(|(a, b)| (a - b.as_f64().unwrap_or(f64::NAN)).abs())
            .fold(0.0, f64::max)
    };
    let (r64, r32) =
        (reference["seconds_f64"].as_f64().unwrap_or(f64::NAN), reference["seconds_f32"].as_f64().unwrap_or(f64::NAN));
    let report = json!({
        "bench": "cka", "layers": a.layers, "n": a.n, "d": a.d, "threads": t, "device": device_name(dev),
        "crossling_seconds": ours, "crossling_cpu_seconds": ours_cpu,
        "numpy_f64_seconds": r64, "numpy_f32_seconds": r32,
        "numpy_f64_cpu_seconds": reference["cpu_seconds_f64"], "numpy_f32_cpu_seconds": reference["cpu_seconds_f32"],
        "speedup_vs_numpy_f64": r64 / ours, "speedup_vs_numpy_f32": r32 / ours,
        "max_abs_diff_vs_numpy_f64": diff("grid_f64"), "max_abs_diff_vs_numpy_f32": diff("grid_f32"),
        "diagonal": (0..a.layers.min(grid.len() as i64) as usize).map(|i| grid[i][i]).collect::<Vec<_>>(),
        "numpy": reference["numpy"],
    });
    std::fs::remove_dir_all(&dir).ok();
    if a.common.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "linear CKA grid {0} × {0} layers, {1} × {2} per layer, {t} threads, crossling on {3} (numpy on the CPU)",
            a.layers,
            a.n,
            a.d,
            device_name(dev)
        );
        let cpu = |k: &str| reference[k].as_f64().unwrap_or(f64::NAN);
        println!("  crossling             {ours:.3} s wall, {ours_cpu:.2} s CPU");
        println!(
            "  numpy (f64, per pair) {r64:.3} s wall, {:.2} s CPU   ratio {:.2}× wall, {:.2}× CPU   max |Δ| {:.2e}",
            cpu("cpu_seconds_f64"),
            r64 / ours,
            cpu("cpu_seconds_f64") / ours_cpu,
            diff("grid_f64")
        );
        println!(
            "  numpy (f32, per pair) {r32:.3} s wall, {:.2} s CPU   ratio {:.2}× wall, {:.2}× CPU   max |Δ| {:.2e}",
            cpu("cpu_seconds_f32"),
            r32 / ours,
            cpu("cpu_seconds_f32") / ours_cpu,
            diff("grid_f32")
        );
    }
    Ok(())
}

fn bench_cka_bootstrap(a: BenchCkaBootstrapArgs) -> Result<()> {
    use crossling::analysis::cka_bootstrap::{replicates_in, Form};
    let t = threads(&a.common);
    tch::set_num_threads(t as i32);
    let dev = device(&a.common)?;
    let xs = randn(&[a.layers, a.n, a.d], a.common.seed).to_device(dev);
    let ys = (&xs * 0.5 + randn(&[a.layers, a.n, a.d], a.common.seed + 1).to_device(dev)) + 2.0;
    let chosen = Form::choose(a.n, a.d, a.d);
    let time = |form: Form| -> Result<(Vec<Vec<f64>>, f64, f64)> {
        sync(dev);
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        let reps = replicates_in(form, &xs, &ys, a.resamples, 7, |_| {})?;
        sync(dev);
        Ok((reps, start.elapsed().as_secs_f64(), cpu_seconds() - cpu0))
    };
    let _warm = replicates_in(chosen, &xs.narrow(0, 0, 1), &ys.narrow(0, 0, 1), 8, 7, |_| {})?;
    let (ours, ours_s, ours_cpu) = time(chosen)?;
    let (reference, ref_s, ref_cpu) = time(Form::FeatureSpace)?;
    let max_diff =
        ours.iter().flatten().zip(reference.iter().flatten()).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
    let report = json!({
        "bench": "cka-bootstrap", "layers": a.layers, "n": a.n, "d": a.d, "resamples": a.resamples, "threads": t,
        "device": device_name(dev), "form": format!("{chosen:?}"), "crossling_seconds": ours_s,
        "crossling_cpu_seconds": ours_cpu, "feature_space_seconds": ref_s, "feature_space_cpu_seconds": ref_cpu,
        "speedup": ref_s / ours_s, "max_abs_diff": max_diff,
    });
    if a.common.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "CKA bootstrap, {} layers of {} × {}, {} resamples, {t} threads, {}",
            a.layers,
            a.n,
            a.d,
            a.resamples,
            device_name(dev)
        );
        println!("  crossling ({chosen:?})   {ours_s:.3} s wall, {ours_cpu:.2} s CPU");
        println!(
            "  feature space (gathered resamples, weighted) {ref_s:.3} s wall, {ref_cpu:.2} s CPU   ratio {:.2}× wall   max |Δ| {max_diff:.2e}",
            ref_s / ours_s
        );
    }
    Ok(())
}

fn bench_csls(a: BenchCslsArgs) -> Result<()> {
    let t = threads(&a.common);
    tch::set_num_threads(t as i32);
    let dir = tempfile_dir()?;
    let src = randn(&[a.n, a.d], a.common.seed);
    let tgt = &src * 0.3 + randn(&[a.n, a.d], a.common.seed + 1);
    let (sp, tp, op) = (dir.join("src.npy"), dir.join("tgt.npy"), dir.join("ref_top.npy"));
    arrays::write_npy(&sp, &src)?;
    arrays::write_npy(&tp, &tgt)?;
    let dev = device(&a.common)?;
    let reference = if a.no_reference {
        serde_json::Value::Null
    } else {
        run_reference(
            &python(&a.common),
            &script("bench_csls.py"),
            &[
                sp.display().to_string(),
                tp.display().to_string(),
                a.k.to_string(),
                a.topk.to_string(),
                t.to_string(),
                op.display().to_string(),
                device_name(dev),
            ],
        )?
    };
    let (src, tgt) = (src.to_device(dev), tgt.to_device(dev));
    sync(dev);
    let rss_before = peak_rss();
    let reset = reset_peak_rss();
    let (start, cpu0) = (Instant::now(), cpu_seconds());
    let scorer = scores::Scorer::new(&src, &tgt, scores::Method::Csls { k: a.k }, scores::Options::default())?;
    let top = scorer.top_k(None, a.topk)?;
    sync(dev);
    let (ours, ours_cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
    let peak = peak_rss();
    let (agree_top1, agree_all) = if a.no_reference {
        (f64::NAN, f64::NAN)
    } else {
        let theirs = arrays::read_npy(&op)?;
        let indices = top.indices.to_device(Device::Cpu);
        let agree = |k: i64| {
            indices.narrow(1, 0, k).eq_tensor(&theirs.narrow(1, 0, k)).to_kind(Kind::Double).mean(Kind::Double)
        };
        (agree(1).double_value(&[]), agree(a.topk as i64).double_value(&[]))
    };
    std::fs::remove_dir_all(&dir).ok();
    let r = reference["seconds"].as_f64().unwrap_or(f64::NAN);
    let report = json!({
        "bench": "csls", "n": a.n, "d": a.d, "k": a.k, "topk": a.topk, "threads": t, "device": device_name(dev),
        "crossling_seconds": ours, "reference_seconds": r, "speedup": r / ours,
        "crossling_cpu_seconds": ours_cpu, "reference_cpu_seconds": reference["cpu_seconds"],
        "block_rows": scorer.block_rows(),
        "peak_rss_bytes_during_csls": if reset { peak } else { None },
        "peak_rss_bytes_process": if reset { None } else { peak },
        "peak_rss_bytes_before_csls": rss_before,
        "top1_agreement": agree_top1, "topk_agreement": agree_all,
        "torch": reference["torch"],
    });
    if a.common.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "CSLS (k {}) top-{} for {} × {} × {}, {t} threads, both on {}",
            a.k,
            a.topk,
            a.n,
            a.n,
            a.d,
            device_name(dev)
        );
        let rc = reference["cpu_seconds"].as_f64().unwrap_or(f64::NAN);
        println!(
            "  crossling                   {ours:.3} s wall, {ours_cpu:.2} s CPU  (blocks of {} rows)",
            scorer.block_rows()
        );
        if !a.no_reference {
            println!(
                "  MUSE-style PyTorch (Python) {r:.3} s wall, {rc:.2} s CPU   ratio {:.2}× wall, {:.2}× CPU",
                r / ours,
                rc / ours_cpu
            );
        }
        println!(
            "  crossling peak RSS {} ({}; data generation before it peaked at {})",
            gib(peak),
            if reset { "since the CSLS started" } else { "whole process" },
            gib(rss_before)
        );
        if !a.no_reference {
            println!("  agreement with the reference: top-1 {:.4}, all top-{} {:.4}", agree_top1, a.topk, agree_all);
        }
    }
    Ok(())
}
