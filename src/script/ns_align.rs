//! `align::` and `retrieve::` — alignment and retrieval of feature stacks layer by layer (Emerging §5, Figures 4–6;
//! the formulas are in [`crate::analysis::normalize`], [`crate::analysis::procrustes`], [`crate::analysis::scores`]).
//!
//! ```rhai
//! let x = align::normalize(fx, "center,iter");   // every layer: centre, then 5 rounds of unit length + centring
//! let w = align::procrustes(x_train, y_train);   // per layer W = UVᵀ, UΣVᵀ = SVD(YᵀX); a stack [L+1, d, d]
//! let m = align::apply(w, x_test);               // per layer X Wᵀ
//! let r = retrieve::sentences(m, y_test, "nn");  // per layer #{ accuracy, mrr, hits, reciprocal_ranks, candidates, n }
//! let r = retrieve::sentences(m, y_test, "csls", texts_y);  // also `accuracy_by_text` (duplicates count)
//! results::score("fr-en/L1", #{ items: r[1].hits, chance: 1.0 / r[1].candidates });
//! ```
//! Source row i's gold is target row i. `hits` holds one 0.0 / 1.0 per source row (top-1 target is row i: P@1 by
//! index) and `reciprocal_ranks` one 1 / rank of row i (their mean is `mrr`), for per-item scores with bootstrap
//! intervals; `candidates` is the number of target rows, so a random ranking's P@1 is `1 / candidates`.
//! A stack of maps is a `Features` value whose rows are the map's rows.
use rhai::{Array, Dynamic, Map, Module, NativeCallContext};
use tch::{Kind, Tensor};

use super::handles::Features;
use super::ns_common::{floats, native, rhai_err, strings, Res};
use crate::analysis::metrics::sentence_retrieval;
use crate::analysis::normalize::{apply as normalize, Normalization};
use crate::analysis::procrustes::{apply_map, procrustes};
use crate::analysis::scores::{Method, Options, Scorer};

/// Both stacks have the same number of layers.
fn same_layers(a: &Tensor, b: &Tensor, what: &str) -> Res<i64> {
    let (la, lb) = (a.size()[0], b.size()[0]);
    if la != lb {
        return Err(rhai_err(format!("{what}: {la} layers vs {lb} layers")));
    }
    Ok(la)
}

fn per_layer(a: &Tensor, b: &Tensor, what: &str, f: impl Fn(&Tensor, &Tensor) -> Res<Tensor>) -> Res<Tensor> {
    let layers = same_layers(a, b, what)?;
    let out: Vec<Tensor> = (0..layers).map(|l| f(&a.get(l), &b.get(l))).collect::<Res<_>>()?;
    Ok(Tensor::stack(&out, 0))
}

/// The `align` module.
pub fn align_module() -> Module {
    let mut m = Module::new();
    m.set_native_fn("normalize", |ctx: NativeCallContext, f: Features, steps: &str| {
        native(&ctx, || -> Res<Features> {
            let steps: Normalization = steps.parse()?;
            let t = f.tensor();
            let layers: Vec<Tensor> =
                (0..t.size()[0]).map(|l| normalize(&t.get(l), &steps).map(|r| r.0)).collect::<Result<_, _>>()?;
            Ok(Features::new(Tensor::stack(&layers, 0), format!("{} normalized {steps:?}", f.what)))
        })
    });
    m.set_native_fn("procrustes", |ctx: NativeCallContext, x: Features, y: Features| {
        native(&ctx, || -> Res<Features> {
            let w = per_layer(&x.tensor(), &y.tensor(), "align::procrustes", |a, b| {
                Ok(procrustes(a, b)?.to_kind(Kind::Float))
            })?;
            Ok(Features::new(w, format!("Procrustes maps {} → {}", x.what, y.what)))
        })
    });
    m.set_native_fn("apply", |ctx: NativeCallContext, w: Features, x: Features| {
        native(&ctx, || -> Res<Features> {
            let mapped = per_layer(&x.tensor(), &w.tensor(), "align::apply", |a, w| Ok(apply_map(a, w)?))?;
            Ok(Features::new(mapped, format!("{} mapped", x.what)))
        })
    });
    m
}

fn retrieve_sentences(src: &Features, tgt: &Features, method: &str, texts: Option<Vec<String>>) -> Res<Array> {
    let method = Method::parse(method, 10, 30.0)?;
    let (s, t) = (src.tensor(), tgt.tensor());
    let layers = same_layers(&s, &t, "retrieve::sentences")?;
    let mut out = Array::new();
    for l in 0..layers {
        let scorer = Scorer::new(&s.get(l), &t.get(l), method, Options::default())?;
        let e = sentence_retrieval(&scorer, texts.as_deref())?;
        let mut r = Map::new();
        r.insert("accuracy".into(), Dynamic::from_float(e.accuracy_by_index));
        r.insert("mrr".into(), Dynamic::from_float(e.mrr));
        if let Some(a) = e.accuracy_by_text {
            r.insert("accuracy_by_text".into(), Dynamic::from_float(a));
        }
        r.insert("n".into(), Dynamic::from_int(e.n as i64));
        r.insert("candidates".into(), Dynamic::from_int(scorer.shape().1));
        let hits: Array = e.hits.iter().map(|&h| Dynamic::from_float(if h { 1.0 } else { 0.0 })).collect();
        r.insert("hits".into(), Dynamic::from_array(hits));
        r.insert("reciprocal_ranks".into(), Dynamic::from_array(floats(e.reciprocal_ranks)));
        out.push(Dynamic::from_map(r));
    }
    Ok(out)
}

/// The `retrieve` module.
pub fn retrieve_module() -> Module {
    let mut m = Module::new();
    m.set_native_fn("sentences", |ctx: NativeCallContext, src: Features, tgt: Features, method: &str| {
        native(&ctx, || retrieve_sentences(&src, &tgt, method, None))
    });
    m.set_native_fn(
        "sentences",
        |ctx: NativeCallContext, src: Features, tgt: Features, method: &str, tgt_texts: Array| {
            native(&ctx, || {
                retrieve_sentences(&src, &tgt, method, Some(strings(&tgt_texts, "retrieve::sentences texts")?))
            })
        },
    );
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procrustes_per_layer_recovers_a_rotation_and_retrieval_finds_rows() {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(3);
        let x = Tensor::randn([2, 40, 6], (Kind::Float, tch::Device::Cpu));
        let q = Tensor::linalg_qr(&Tensor::randn([6, 6], (Kind::Double, tch::Device::Cpu)), "reduced")
            .0
            .to_kind(Kind::Float);
        let y = x.matmul(&q.tr());
        let (fx, fy) = (Features::new(x, "x"), Features::new(y, "y"));
        let w = per_layer(&fx.tensor(), &fy.tensor(), "t", |a, b| Ok(procrustes(a, b)?.to_kind(Kind::Float))).unwrap();
        assert!((w.get(1) - &q).abs().max().double_value(&[]) < 1e-4);
        let mapped = per_layer(&fx.tensor(), &w, "t", |a, w| apply_map(a, w).map_err(rhai_err)).unwrap();
        let r = retrieve_sentences(&Features::new(mapped, "m"), &fy, "csls", None).unwrap();
        assert_eq!(r.len(), 2);
        let r0 = r[0].clone_cast::<Map>();
        assert_eq!(r0["accuracy"].as_float().unwrap(), 1.0);
        assert_eq!(r0["candidates"].as_int().unwrap(), 40);
        let hits = r0["hits"].clone().into_array().unwrap();
        assert_eq!(hits.len(), 40);
        assert!(hits.iter().all(|h| h.as_float().unwrap() == 1.0));
        // Unaligned (x against the rotated y): fewer hits, and `accuracy` is their mean.
        let raw = retrieve_sentences(&fx, &fy, "nn", None).unwrap()[1].clone_cast::<Map>();
        let raw_hits: Vec<f64> =
            raw["hits"].clone().into_array().unwrap().iter().map(|h| h.as_float().unwrap()).collect();
        assert!(raw_hits.iter().all(|&h| h == 0.0 || h == 1.0));
        assert_eq!(raw_hits.iter().sum::<f64>() / 40.0, raw["accuracy"].as_float().unwrap());
        // Reciprocal ranks: 1 exactly where a row hits, in (0, 1) elsewhere, and their mean is `mrr`.
        let rr: Vec<f64> =
            raw["reciprocal_ranks"].clone().into_array().unwrap().iter().map(|v| v.as_float().unwrap()).collect();
        assert!(rr.iter().zip(&raw_hits).all(|(&r, &h)| (r == 1.0) == (h == 1.0) && r > 0.0 && r <= 1.0));
        assert!((rr.iter().sum::<f64>() / 40.0 - raw["mrr"].as_float().unwrap()).abs() < 1e-12);
        assert!(raw["accuracy"].as_float().unwrap() < 1.0);
        assert!(same_layers(&Tensor::zeros([2, 1, 1], (Kind::Float, tch::Device::Cpu)), &w.get(0).unsqueeze(0), "t")
            .is_err());
    }
}
