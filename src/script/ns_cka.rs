//! `cka::` — similarity of two feature stacks (Kornblith et al. 2019; Emerging §5.3, Figure 7).
//!
//! ```rhai
//! let per_layer = cka::linear(fa, fb);          // [CKA(fa[l], fb[l]) for every layer l]
//! let debiased = cka::diagonal(fa, fb, "debiased");
//! let grid = cka::grid(fa, fb, "linear");       // layer × layer
//! ```
use rhai::{Array, Dynamic, Module, NativeCallContext};

use super::engine::{native, rhai_err, Res};
use super::handles::Features;
use crate::analysis::cka::{cka_diagonal, cka_grid, CkaKind};

fn kind(name: &str) -> Res<CkaKind> {
    match name {
        "linear" => Ok(CkaKind::Linear),
        "debiased" => Ok(CkaKind::Debiased),
        "rbf" => Ok(CkaKind::Rbf { threshold: 0.5 }),
        other => Err(rhai_err(format!("unknown CKA kind '{other}' (linear, debiased, rbf)"))),
    }
}

fn floats(v: Vec<f64>) -> Array {
    v.into_iter().map(Dynamic::from_float).collect()
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
    m.set_native_fn("grid", |ctx: NativeCallContext, a: Features, b: Features, k: &str| {
        native(&ctx, || -> Res<Array> {
            let g = cka_grid(&a.tensor(), &b.tensor(), kind(k)?)?;
            Ok(g.into_iter().map(|row| Dynamic::from_array(floats(row))).collect())
        })
    });
    m
}
