//! Tiny-model invariants of the encoder and the MLM head (CPU, each well under a second).
use std::collections::BTreeSet;

use tch::{nn, nn::OptimizerConfig, Device, Kind, Tensor};

use super::*;
use crate::text::masking::IGNORE_INDEX;

/// libtorch's CPU generator is global and tests run on parallel threads: every test here that draws random
/// numbers holds this lock, so a seeded test sees exactly its own draws.
pub(crate) use crate::device::torch_rng_lock as rng_lock;

fn tiny(languages: &[&str], sep_emb: bool, sep_layers: usize) -> ModelConfig {
    ModelConfig {
        vocab_size: 30,
        hidden: 16,
        layers: 2,
        heads: 2,
        ffn: Some(32),
        max_positions: 16,
        languages: languages.iter().map(|s| s.to_string()).collect(),
        sharing: SharingPlan { sep_emb, sep_layers },
        ..ModelConfig::default()
    }
}

fn build(cfg: &ModelConfig) -> (nn::VarStore, MlmModel) {
    let vs = nn::VarStore::new(Device::Cpu);
    let model = MlmModel::new(&vs.root(), cfg).unwrap();
    (vs, model)
}

fn names(vs: &nn::VarStore) -> BTreeSet<String> {
    vs.variables().into_keys().collect()
}

fn layer_names(prefix: &str) -> Vec<String> {
    [
        "attention.self.query.weight",
        "attention.self.query.bias",
        "attention.self.key.weight",
        "attention.self.key.bias",
        "attention.self.value.weight",
        "attention.self.value.bias",
        "attention.output.dense.weight",
        "attention.output.dense.bias",
        "attention.output.LayerNorm.weight",
        "attention.output.LayerNorm.bias",
        "intermediate.dense.weight",
        "intermediate.dense.bias",
        "output.dense.weight",
        "output.dense.bias",
        "output.LayerNorm.weight",
        "output.LayerNorm.bias",
    ]
    .iter()
    .map(|s| format!("{prefix}.{s}"))
    .collect()
}

fn upper_names() -> Vec<String> {
    [
        "bert.embeddings.LayerNorm.weight",
        "bert.embeddings.LayerNorm.bias",
        "cls.predictions.transform.dense.weight",
        "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.LayerNorm.weight",
        "cls.predictions.transform.LayerNorm.bias",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn batch() -> (Tensor, Tensor) {
    let ids = Tensor::from_slice2(&[[2i64, 5, 7, 9, 11, 3], [4, 6, 8, 10, 0, 0]]);
    let mask = Tensor::from_slice2(&[[1i64, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]]);
    (ids, mask)
}

#[test]
fn parameter_names_match_hugging_face_bert() {
    let _rng = rng_lock();
    let (vs, _) = build(&tiny(&[], false, 0));
    let mut expected: BTreeSet<String> = upper_names().into_iter().collect();
    expected.insert("bert.embeddings.word_embeddings.weight".into());
    expected.insert("bert.embeddings.position_embeddings.weight".into());
    expected.insert("cls.predictions.bias".into());
    for i in 0..2 {
        expected.extend(layer_names(&format!("bert.encoder.layer.{i}")));
    }
    assert_eq!(names(&vs), expected);
    let v = vs.variables();
    assert_eq!(v["bert.encoder.layer.0.intermediate.dense.weight"].size(), vec![32, 16]);
    assert_eq!(v["bert.embeddings.position_embeddings.weight"].size(), vec![16, 16]);
    assert_eq!(v["cls.predictions.bias"].size(), vec![30]);
}

#[test]
fn separated_parameters_carry_a_language_segment() {
    let _rng = rng_lock();
    let (vs, _) = build(&tiny(&["en", "fr"], true, 1));
    let mut expected: BTreeSet<String> = upper_names().into_iter().collect();
    expected.extend(layer_names("bert.encoder.layer.1"));
    for lang in ["en", "fr"] {
        // Sep Emb separates "the embedding layers (including positional embeddings)" (Wu et al. 2020, §4.3).
        expected.insert(format!("bert.embeddings.lang.{lang}.word_embeddings.weight"));
        expected.insert(format!("bert.embeddings.lang.{lang}.position_embeddings.weight"));
        expected.insert(format!("cls.predictions.lang.{lang}.bias"));
        expected.extend(layer_names(&format!("bert.encoder.layer.0.lang.{lang}")));
    }
    assert_eq!(names(&vs), expected);
}

#[test]
fn sep_emb_gives_each_language_its_own_positions() {
    let _rng = rng_lock();
    tch::manual_seed(5);
    let (vs, model) = build(&tiny(&["en", "fr"], true, 0));
    let (ids, _) = batch();
    let en = model.encoder.embeddings.forward(&ids, "en", false).unwrap();
    let fr_before = model.encoder.embeddings.forward(&ids, "fr", false).unwrap();
    // Changing French's position table changes French's embeddings and leaves English's as they were.
    tch::no_grad(|| {
        let mut v = vs.variables();
        let _ = v.get_mut("bert.embeddings.lang.fr.position_embeddings.weight").unwrap().g_mul_scalar_(3.0);
    });
    let en_after = model.encoder.embeddings.forward(&ids, "en", false).unwrap();
    let fr_after = model.encoder.embeddings.forward(&ids, "fr", false).unwrap();
    assert_eq!((&en - &en_after).abs().max().double_value(&[]), 0.0);
    assert!((&fr_before - &fr_after).abs().max().double_value(&[]) > 1e-3);
}

#[test]
fn untied_output_adds_a_decoder_matrix() {
    let _rng = rng_lock();
    let mut cfg = tiny(&[], false, 0);
    cfg.tie_output = false;
    let (vs, model) = build(&cfg);
    assert_eq!(vs.variables()["cls.predictions.decoder.weight"].size(), vec![30, 16]);
    let (ids, mask) = batch();
    let h = model.encoder.forward(&ids, Some(&mask), "xx", false).unwrap();
    assert_eq!(model.logits(h.last(), "xx").unwrap().size(), vec![2, 6, 30]);
}

#[test]
fn initialisation_follows_bert() {
    let _rng = rng_lock();
    tch::manual_seed(0);
    let cfg = ModelConfig { vocab_size: 200, hidden: 64, ..tiny(&[], false, 0) };
    let (vs, _) = build(&cfg);
    let v = vs.variables();
    let std = v["bert.embeddings.word_embeddings.weight"].std(true).double_value(&[]);
    assert!((std - 0.02).abs() < 0.002, "std {std}");
    assert_eq!(v["bert.embeddings.LayerNorm.weight"].mean(Kind::Float).double_value(&[]), 1.0);
    assert_eq!(v["bert.encoder.layer.0.attention.self.query.bias"].abs().sum(Kind::Float).double_value(&[]), 0.0);
}

#[test]
fn every_hidden_state_has_the_right_shape() {
    let _rng = rng_lock();
    let (_vs, model) = build(&tiny(&["en", "fr"], true, 1));
    let (ids, mask) = batch();
    for train in [false, true] {
        let out = model.encoder.forward(&ids, Some(&mask), "fr", train).unwrap();
        assert_eq!(out.hidden_states.len(), 3);
        for h in &out.hidden_states {
            assert_eq!(h.size(), vec![2, 6, 16]);
        }
        assert_eq!(model.logits(out.last(), "fr").unwrap().size(), vec![2, 6, 30]);
    }
    let out = model.encoder.forward(&ids, None, "en", false).unwrap();
    assert_eq!(out.last().size(), vec![2, 6, 16]);
}

#[test]
fn a_forward_pass_continues_from_any_layer() {
    let _rng = rng_lock();
    let (_vs, model) = build(&tiny(&["en", "fr"], true, 1));
    let (ids, mask) = batch();
    let out = model.encoder.forward(&ids, Some(&mask), "fr", false).unwrap();
    for start in 0..out.hidden_states.len() {
        let last = model.encoder.forward_from(&out.hidden_states[start], start, Some(&mask), "fr", false).unwrap();
        let diff = (&last - out.last()).abs().max().double_value(&[]);
        assert!(diff < 1e-5, "from layer {start}: max |Δ| {diff}");
        let until = model.encoder.forward_until(&ids, Some(&mask), "fr", start, false).unwrap();
        let diff = (&until - &out.hidden_states[start]).abs().max().double_value(&[]);
        assert!(diff < 1e-6, "until layer {start}: max |Δ| {diff}");
    }
    let e = model.encoder.forward_until(&ids, Some(&mask), "fr", 3, false).unwrap_err().to_string();
    assert!(e.contains("layer 3 of a 2-layer encoder does not exist"), "{e}");
    // Layer 0 of the separated bottom layer is per language: continuing in en from fr states differs.
    let en = model.encoder.forward_from(&out.hidden_states[0], 0, Some(&mask), "en", false).unwrap();
    assert!((&en - out.last()).abs().max().double_value(&[]) > 1e-4);
    let e = model.encoder.forward_from(&out.hidden_states[0], 3, Some(&mask), "fr", false).unwrap_err().to_string();
    assert!(e.contains("cannot continue from layer 3 of a 2-layer encoder"), "{e}");
    let bad = Tensor::zeros([2, 6, 7], (tch::Kind::Float, tch::Device::Cpu));
    assert!(model.encoder.forward_from(&bad, 1, None, "fr", false).unwrap_err().to_string().contains("expected"));
}

/// Pre-LN (Xiong et al. 2020): the same parameters plus `encoder.LayerNorm`; the last hidden state is normalised,
/// the ones below are the residual stream, and continuing from any layer reproduces the last state.
#[test]
fn pre_ln_normalises_the_last_state_and_continues_from_any_layer() {
    let _rng = rng_lock();
    tch::manual_seed(3);
    let post = tiny(&["en", "fr"], false, 1);
    let pre = ModelConfig { pre_ln: true, ..post.clone() };
    let (vs_post, _) = build(&post);
    let (vs, model) = build(&pre);
    let added: Vec<String> = names(&vs).difference(&names(&vs_post)).cloned().collect();
    assert_eq!(added, ["bert.encoder.LayerNorm.bias", "bert.encoder.LayerNorm.weight"]);
    let (ids, mask) = batch();
    let out = model.encoder.forward(&ids, Some(&mask), "fr", false).unwrap();
    let last = out.last(); // [2, 6, 16]
    let mean = last.mean_dim(-1, false, Kind::Float).abs().max().double_value(&[]);
    let std = last.std_dim(-1, false, false).double_value(&[0, 0]);
    assert!(mean < 1e-5 && (std - 1.0).abs() < 1e-3, "mean {mean}, std {std}");
    // A pre-LN layer adds to its input an update that sees only the input's LayerNorm, so scaling the input
    // leaves the update unchanged: layer(2x) − 2x = layer(x) − x.
    let layer = model.encoder.layers[1].get("fr").unwrap();
    let x = &out.hidden_states[1];
    let update = layer.forward(x, Some(&mask), false) - x;
    let scaled = layer.forward(&(x * 2.0), Some(&mask), false) - x * 2.0;
    assert!((&update - &scaled).abs().max().double_value(&[]) < 1e-4);
    for start in 0..out.hidden_states.len() {
        let from = model.encoder.forward_from(&out.hidden_states[start], start, Some(&mask), "fr", false).unwrap();
        assert!((&from - last).abs().max().double_value(&[]) < 1e-5, "from layer {start}");
        let until = model.encoder.forward_until(&ids, Some(&mask), "fr", start, false).unwrap();
        assert!((&until - &out.hidden_states[start]).abs().max().double_value(&[]) < 1e-6, "until layer {start}");
    }
    // With the same weights (scaled up so that the blocks' updates are not negligible), post-LN computes another
    // function.
    let (mut vs_b, post_model) = build(&post);
    vs_b.copy(&vs).unwrap();
    tch::no_grad(|| {
        for (name, mut v) in vs.variables().into_iter().chain(vs_b.variables()) {
            if name.ends_with(".weight") && !name.contains("LayerNorm") {
                let _ = v.g_mul_scalar_(20.0);
            }
        }
    });
    let a = model.encoder.forward(&ids, Some(&mask), "fr", false).unwrap();
    let b = post_model.encoder.forward(&ids, Some(&mask), "fr", false).unwrap();
    let diff = (a.last() - b.last()).abs().max().double_value(&[]);
    assert!(diff > 1e-2, "pre-LN and post-LN agree to {diff}");
}

#[test]
fn language_errors_and_bad_inputs() {
    let _rng = rng_lock();
    let (_vs, model) = build(&tiny(&["en", "fr"], false, 1));
    let (ids, mask) = batch();
    let e = model.encoder.forward(&ids, Some(&mask), "de", false).unwrap_err().to_string();
    assert!(e.contains("unknown language 'de'") && e.contains("en, fr"), "{e}");
    let e = model.mlm_loss(&ids, None, &ids, "de", false).unwrap_err().to_string();
    assert!(e.contains("unknown language 'de'"), "{e}");

    let (_vs, shared) = build(&tiny(&[], false, 0));
    assert!(shared.encoder.forward(&ids, None, "anything", false).is_ok());
    let too_big = Tensor::from_slice2(&[[1i64, 30]]);
    let e = shared.encoder.forward(&too_big, None, "en", false).unwrap_err().to_string();
    assert!(e.contains("token ids must be in [0, 30)"), "{e}");
    let too_long = Tensor::zeros([1, 17], (Kind::Int64, Device::Cpu));
    let e = shared.encoder.forward(&too_long, None, "en", false).unwrap_err().to_string();
    assert!(e.contains("exceeds max_positions 16"), "{e}");
    let e = shared.encoder.forward(&ids, Some(&mask.narrow(1, 0, 3)), "en", false).unwrap_err().to_string();
    assert!(e.contains("attention_mask shape"), "{e}");
    let e = shared.mlm_loss(&ids, None, &ids.narrow(1, 0, 2), "en", false).unwrap_err().to_string();
    assert!(e.contains("labels shape"), "{e}");

    let bad = ModelConfig { hidden: 15, ..tiny(&[], false, 0) };
    let vs = nn::VarStore::new(Device::Cpu);
    let e = MlmModel::new(&vs.root(), &bad).unwrap_err().to_string();
    assert!(e.contains("hidden (15) must be divisible by heads (2)"), "{e}");
}

#[test]
fn padding_does_not_change_real_positions() {
    let _rng = rng_lock();
    tch::manual_seed(3);
    let (_vs, model) = build(&tiny(&["en", "fr"], true, 1));
    let ids = Tensor::from_slice2(&[[2i64, 5, 7, 9, 11], [4, 6, 8, 10, 12]]);
    let mask = Tensor::ones([2, 5], (Kind::Int64, Device::Cpu));
    let padded_ids = Tensor::cat(&[&ids, &Tensor::from_slice2(&[[0i64, 0, 0], [17, 1, 0]])], 1);
    let padded_mask = Tensor::cat(&[&mask, &Tensor::zeros([2, 3], (Kind::Int64, Device::Cpu))], 1);
    let a = model.encoder.forward(&ids, Some(&mask), "en", false).unwrap();
    let b = model.encoder.forward(&padded_ids, Some(&padded_mask), "en", false).unwrap();
    for (x, y) in a.hidden_states.iter().zip(&b.hidden_states) {
        let diff = (x - y.narrow(1, 0, 5)).abs().max().double_value(&[]);
        assert!(diff < 1e-5, "max difference {diff}");
        assert_eq!(y.isfinite().all().int64_value(&[]), 1);
    }
    let la = model.logits(a.last(), "en").unwrap();
    let lb = model.logits(b.last(), "en").unwrap().narrow(1, 0, 5);
    assert!((la - lb).abs().max().double_value(&[]) < 1e-5);
}

#[test]
fn a_packed_batch_has_the_gradients_of_its_rows_run_alone() {
    let _rng = rng_lock();
    tch::manual_seed(5);
    for pre_ln in [false, true] {
        let (vs, model) = build(&ModelConfig { pre_ln, ..tiny(&["en"], false, 0) });
        let rows: [&[i64]; 3] = [&[2, 5, 7, 9, 11, 13, 3], &[4, 6, 3], &[2, 8, 10, 3]];
        let gradients = |loss: Tensor| -> Vec<Tensor> {
            let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
            vars.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, v) in &vars {
                let mut g = v.grad();
                if g.defined() {
                    let _ = g.zero_();
                }
            }
            loss.backward();
            vars.iter().map(|(_, v)| if v.grad().defined() { v.grad().copy() } else { v.zeros_like() }).collect()
        };
        // Each row alone: no padding, nothing packed. Loss: a fixed weighting of every real position's last state.
        let weight = Tensor::linspace(-1.0, 1.0, 16, (Kind::Float, Device::Cpu)); // [hidden]
        let alone: Tensor = rows
            .iter()
            .map(|r| {
                let ids = Tensor::from_slice(r).unsqueeze(0); // [1, len]
                let out = model.encoder.forward(&ids, None, "en", false).unwrap();
                (out.last() * &weight).sum(Kind::Float)
            })
            .fold(Tensor::zeros([], (Kind::Float, Device::Cpu)), |a, b| a + b);
        let alone = gradients(alone);
        // The three rows padded to 7 positions (9 of 21 padding): packed.
        let (ids, mask, _) = crate::nn::batch::padded(&rows, 0, Device::Cpu);
        assert!(crate::nn::packing::Packing::of(Some(&mask)).is_some());
        let out = model.encoder.forward(&ids, Some(&mask), "en", false).unwrap();
        for h in &out.hidden_states[1..] {
            let at_padding = h * mask.eq(0).unsqueeze(-1);
            assert_eq!(at_padding.abs().max().double_value(&[]), 0.0, "layer outputs are zero at padding");
        }
        let together = (out.last() * &weight * mask.unsqueeze(-1)).sum(Kind::Float);
        let together = gradients(together);
        for (a, b) in alone.iter().zip(&together) {
            let diff = (a - b).abs().max().double_value(&[]);
            assert!(diff < 1e-5, "pre_ln {pre_ln}: gradients differ by {diff}");
        }
    }
}

fn mlm_batch() -> (Tensor, Tensor, Tensor) {
    let (ids, mask) = batch();
    let labels = Tensor::from_slice2(&[[-100i64, 5, -100, 9, -100, 3], [4, -100, 8, -100, -100, -100]]);
    let masked = ids.where_self(&labels.eq(-100), &Tensor::from(1i64));
    (masked, mask, labels)
}

#[test]
fn adam_steps_reduce_the_mlm_loss() {
    let _rng = rng_lock();
    tch::manual_seed(42);
    let (vs, model) = build(&tiny(&["en", "fr"], true, 1));
    let (ids, mask, labels) = mlm_batch();
    let mut opt = nn::Adam::default().build(&vs, 1e-2).unwrap();
    let first = model.mlm_loss(&ids, Some(&mask), &labels, "fr", false).unwrap().double_value(&[]);
    assert!((first - (30f64).ln()).abs() < 0.5, "initial loss {first} should be near ln(30)");
    for _ in 0..20 {
        let loss = model.mlm_loss(&ids, Some(&mask), &labels, "fr", true).unwrap();
        opt.backward_step(&loss);
    }
    let last = model.mlm_loss(&ids, Some(&mask), &labels, "fr", false).unwrap().double_value(&[]);
    assert!(last < first * 0.5, "loss went from {first} to {last}");
    // Only French parameters of the separated parts moved.
    let v = vs.variables();
    assert_eq!(v["cls.predictions.lang.en.bias"].abs().sum(Kind::Float).double_value(&[]), 0.0);
    assert!(v["cls.predictions.lang.fr.bias"].abs().sum(Kind::Float).double_value(&[]) > 0.0);
}

#[test]
fn loss_matches_manual_cross_entropy() {
    let _rng = rng_lock();
    tch::manual_seed(5);
    let (_vs, model) = build(&tiny(&[], false, 0));
    let (ids, mask, labels) = mlm_batch();
    let loss = model.mlm_loss(&ids, Some(&mask), &labels, "en", false).unwrap().double_value(&[]);
    let out = model.encoder.forward(&ids, Some(&mask), "en", false).unwrap();
    let logp = model.logits(out.last(), "en").unwrap().log_softmax(-1, Kind::Double);
    let (mut sum, mut n) = (0.0, 0);
    for b in 0..2 {
        for t in 0..6 {
            let l = labels.int64_value(&[b, t]);
            if l != IGNORE_INDEX {
                sum -= logp.double_value(&[b, t, l]);
                n += 1;
            }
        }
    }
    assert!((loss - sum / n as f64).abs() < 1e-5, "{loss} vs {}", sum / n as f64);
}

#[test]
fn same_seed_gives_identical_initial_loss() {
    let _rng = rng_lock();
    let loss = |seed: i64| {
        tch::manual_seed(seed);
        let (_vs, model) = build(&tiny(&["en", "fr"], true, 1));
        let (ids, mask, labels) = mlm_batch();
        model.mlm_loss(&ids, Some(&mask), &labels, "en", true).unwrap().double_value(&[])
    };
    assert_eq!(loss(11), loss(11));
    assert_ne!(loss(11), loss(12));
}
