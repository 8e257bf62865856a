//! `cka::` — similarity of two feature stacks (Kornblith et al. 2019; Emerging §5.3, Figure 7).
//!
//! ```rhai
//! let per_layer = cka::linear(fa, fb);          // [CKA(fa[l], fb[l]) for every layer l]
//! let debiased = cka::diagonal(fa, fb, "debiased");
//! let grid = cka::grid(fa, fb, "linear");       // layer × layer
//! // Bootstrap replicates over the sentences: reps[l][r] = linear CKA of layer l on resample r (1,000 resamples
//! // drawn from SEED and the sentence count, the same for every call of the run: differences are paired).
//! let reps = cka::linear_bootstrap(fa, fb, SEED);
//! results::score("cka/L1", #{ estimate: per_layer[1], replicates: reps[1], resampled_items: n, range: [0.0, 1.0] });
//! ```
use rhai::{Array, Dynamic, Module, NativeCallContext};

use super::handles::Features;
use super::ns_common::{floats, native, rhai_err, Res};
use crate::analysis::cka::{cka_diagonal, cka_grid, CkaKind};
use crate::analysis::cka_bootstrap::linear_cka_replicates_with;
use crate::claims::score::RESAMPLES;
use crate::error::Result;

fn kind(name: &str) -> Res<CkaKind> {
    match name {
        "linear" => Ok(CkaKind::Linear),
        "debiased" => Ok(CkaKind::Debiased),
        "rbf" => Ok(CkaKind::Rbf { threshold: 0.5 }),
        other => Err(rhai_err(format!("unknown CKA kind '{other}' (linear, debiased, rbf)"))),
    }
}

/// `cka::linear_bootstrap`: the replicates of every layer (the same resamples for each: they depend on the rows, the
/// resample count and the seed only), with a progress bar over the layers (a layer of 2,000 × 128 features takes
/// seconds: 3,000 products of about 1,264 × 128 × 128).
fn bootstrap_layers(a: &Features, b: &Features, seed: i64) -> Result<Array> {
    let (xs, ys) = (a.tensor(), b.tensor());
    // The stacks' shapes are checked by the analysis; the bar only needs their layer count.
    let layers = xs.size().first().copied().unwrap_or(0).max(0) as u64;
    let bar = crate::progress::bar(layers, "cka bootstrap [{bar:30}] {pos}/{len} layers, eta {eta}");
    let reps = linear_cka_replicates_with(&xs, &ys, RESAMPLES, seed as u64, |_| bar.inc(1))?;
    bar.finish_and_clear();
    Ok(reps.into_iter().map(|layer| Dynamic::from_array(floats(layer))).collect())
}

/// The `cka` module.
pub fn module() -> Module {
    let mut m = Module::new();
    m.set_native_fn("linear", |ctx: NativeCallContext, a: Features, b: Features| {
        native(&ctx, || Ok(floats(cka_diagonal(&a.tensor(), &b.tensor(), CkaKind::Linear)?)))
    });
    m.set_native_fn("diagonal", |ctx: NativeCallContext, a: Features, b: Features, k: &str| {
        native(&ctx, || Ok(floats(cka_diagonal(&a.tensor(), &b.tensor(), kind(k)?)?)))
    });
    m.set_native_fn("linear_bootstrap", |ctx: NativeCallContext, a: Features, b: Features, seed: i64| {
        native(&ctx, || -> Res<Array> { Ok(bootstrap_layers(&a, &b, seed)?) })
    });
    m.set_native_fn("grid", |ctx: NativeCallContext, a: Features, b: Features, k: &str| {
        native(&ctx, || -> Res<Array> {
            let g = cka_grid(&a.tensor(), &b.tensor(), kind(k)?)?;
            Ok(g.into_iter().map(|row| Dynamic::from_array(floats(row))).collect())
        })
    });
    m
}
