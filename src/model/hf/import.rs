//! Importing a Hugging Face BERT masked-LM folder: `config.json` ([`super::config`]), weights from
//! `model.safetensors` (preferred) or `pytorch_model.bin` ([`super::pickle`]), and the tokenizer
//! ([`crate::model::tokenizer::load_hf_tokenizer`]).
//!
//! Every tensor of the checkpoint must land in exactly one crossling variable of the same shape and every
//! variable must be filled: a missing, unexpected or mis-shaped tensor is an error naming the tensor (and both
//! shapes). `bert.pooler.*` and `cls.seq_relationship.*` (BertForPreTraining checkpoints) are skipped with a
//! note; tied copies (`cls.predictions.decoder.*`) and index buffers are skipped silently.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use tch::{nn::VarStore, Device, Kind, Tensor};

use super::config::read_hf_config;
use super::names::{import_name, ImportName};
use crate::error::{Error, Result};
use crate::model::{MlmModel, ModelConfig};

/// A model read from a HF folder.
#[derive(Debug)]
pub struct HfImport {
    pub vs: VarStore,
    pub model: MlmModel,
    pub config: ModelConfig,
    /// The weights file that was read.
    pub weights: PathBuf,
    /// What was skipped, for the user.
    pub notes: Vec<String>,
}

/// The weights file of a HF folder: `model.safetensors`, else `pytorch_model.bin`.
pub fn weights_file(dir: &Path) -> Result<PathBuf> {
    for name in ["model.safetensors", "pytorch_model.bin"] {
        let p = dir.join(name);
        if p.is_file() {
            return Ok(p);
        }
    }
    for name in ["model.safetensors.index.json", "pytorch_model.bin.index.json"] {
        if dir.join(name).is_file() {
            return Err(Error::Invalid(format!(
                "{}: sharded checkpoints ({name}) are not supported; save the model unsharded \
                 (model.save_pretrained(dir, max_shard_size=\"100GB\"))",
                dir.display()
            )));
        }
    }
    Err(Error::Invalid(format!("{}: no model.safetensors or pytorch_model.bin", dir.display())))
}

/// Reads every tensor of a `.safetensors` or PyTorch `.bin` file.
pub fn read_weights(path: &Path) -> Result<Vec<(String, Tensor)>> {
    if path.extension().is_some_and(|e| e == "safetensors") {
        Tensor::read_safetensors(path).map_err(|e| Error::format_file(path, e.to_string()))
    } else {
        super::pickle::read_state_dict(path)
    }
}

/// Imports the HF BERT masked LM in `dir` onto `device` (weights only; the tokenizer is read separately).
pub fn import_hf(dir: &Path, device: Device) -> Result<HfImport> {
    let config = read_hf_config(&dir.join("config.json"))?;
    let weights = weights_file(dir)?;
    let tensors = read_weights(&weights)?;
    let vs = VarStore::new(device);
    let model = MlmModel::new(&vs.root(), &config)?;
    let notes = assign(&vs, tensors, config.tie_output, &weights)?;
    Ok(HfImport { vs, model, config, weights, notes })
}

/// Copies HF tensors into the variables of `vs` (see the module docs); returns notes on skipped tensors.
pub fn assign(vs: &VarStore, tensors: Vec<(String, Tensor)>, tied: bool, file: &Path) -> Result<Vec<String>> {
    let vars: HashMap<String, Tensor> = vs.variables();
    let mut ignored: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut filled = BTreeSet::new();
    let names: BTreeSet<String> = tensors.iter().map(|(n, _)| n.clone()).collect();
    let _guard = tch::no_grad_guard();
    for (hf, t) in tensors {
        let mut target = match import_name(&hf, tied) {
            ImportName::Load(n) => n,
            ImportName::Ignore(why) => {
                ignored.entry(why).or_default().push(hf);
                continue;
            }
            ImportName::Alias => {
                // Old checkpoints may store the output bias only as the decoder's bias.
                if hf == "cls.predictions.decoder.bias" && !names.contains("cls.predictions.bias") {
                    "cls.predictions.bias".to_string()
                } else {
                    continue;
                }
            }
        };
        let Some(var) = vars.get(&target) else {
            problems.push(format!(
                "unexpected tensor '{hf}' {:?} (no such parameter in a BertForMaskedLM of this config)",
                t.size()
            ));
            continue;
        };
        if var.size() != t.size() {
            problems.push(format!("tensor '{hf}' has shape {:?}, the model expects {:?}", t.size(), var.size()));
            continue;
        }
        let mut var = var.shallow_clone();
        var.copy_(&t.to_kind(Kind::Float).to_device(var.device()));
        filled.insert(std::mem::take(&mut target));
    }
    let mut missing: Vec<String> = vars
        .iter()
        .filter(|(n, _)| !filled.contains(*n))
        .map(|(n, v)| format!("missing tensor '{n}' (expected shape {:?})", v.size()))
        .collect();
    missing.sort();
    problems.extend(missing);
    if !problems.is_empty() {
        let n = problems.len();
        let shown: Vec<String> = problems.into_iter().take(12).collect();
        let more = if n > 12 { format!("\n  … and {} more", n - 12) } else { String::new() };
        return Err(Error::format_file(
            file,
            format!("does not fit a BertForMaskedLM of its config.json:\n  {}{more}", shown.join("\n  ")),
        ));
    }
    Ok(ignored
        .into_iter()
        .map(|(why, names)| {
            let group: Vec<&str> = names[0].split('.').take(2).collect();
            format!("ignored {} tensor(s) {}.* ({why})", names.len(), group.join("."))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ModelConfig {
        ModelConfig {
            vocab_size: 20,
            hidden: 8,
            layers: 1,
            heads: 2,
            ffn: Some(16),
            max_positions: 10,
            type_vocab_size: 2,
            ..Default::default()
        }
    }

    fn hf_tensors(cfg: &ModelConfig) -> Vec<(String, Tensor)> {
        let vs = VarStore::new(Device::Cpu);
        MlmModel::new(&vs.root(), cfg).unwrap();
        let mut v: Vec<(String, Tensor)> = vs.variables().into_iter().map(|(n, t)| (n, t.detach().copy())).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    fn err(vs: &VarStore, t: Vec<(String, Tensor)>) -> String {
        assign(vs, t, true, Path::new("w.safetensors")).unwrap_err().to_string()
    }

    #[test]
    fn fills_every_variable_and_notes_ignored_heads() {
        let c = cfg();
        let mut t = hf_tensors(&c);
        for (_, x) in t.iter_mut() {
            *x = x.ones_like() * 0.5;
        }
        t.push(("bert.pooler.dense.weight".into(), Tensor::zeros([8, 8], (Kind::Float, Device::Cpu))));
        t.push(("bert.pooler.dense.bias".into(), Tensor::zeros([8], (Kind::Float, Device::Cpu))));
        t.push(("cls.seq_relationship.weight".into(), Tensor::zeros([2, 8], (Kind::Float, Device::Cpu))));
        t.push(("cls.predictions.decoder.weight".into(), Tensor::zeros([20, 8], (Kind::Float, Device::Cpu))));
        let vs = VarStore::new(Device::Cpu);
        MlmModel::new(&vs.root(), &c).unwrap();
        let notes = assign(&vs, t, true, Path::new("w.safetensors")).unwrap();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("2 tensor(s) bert.pooler.*")), "{notes:?}");
        for (n, v) in vs.variables() {
            assert_eq!(v.mean(Kind::Float).double_value(&[]), 0.5, "{n}");
        }
    }

    #[test]
    fn missing_unexpected_and_misshaped_tensors_are_named() {
        let c = cfg();
        let vs = VarStore::new(Device::Cpu);
        MlmModel::new(&vs.root(), &c).unwrap();
        let mut t = hf_tensors(&c);
        t.retain(|(n, _)| n != "cls.predictions.bias");
        let e = err(&vs, t);
        assert!(
            e.contains("w.safetensors") && e.contains("missing tensor 'cls.predictions.bias' (expected shape [20])"),
            "{e}"
        );
        let mut t = hf_tensors(&c);
        t.push(("bert.encoder.layer.5.output.dense.weight".into(), Tensor::zeros([8, 16], (Kind::Float, Device::Cpu))));
        let e = err(&vs, t);
        assert!(e.contains("unexpected tensor 'bert.encoder.layer.5.output.dense.weight' [8, 16]"), "{e}");
        let mut t = hf_tensors(&c);
        for (n, x) in t.iter_mut() {
            if n == "bert.embeddings.word_embeddings.weight" {
                *x = Tensor::zeros([21, 8], (Kind::Float, Device::Cpu));
            }
        }
        let e = err(&vs, t);
        assert!(
            e.contains("'bert.embeddings.word_embeddings.weight' has shape [21, 8], the model expects [20, 8]"),
            "{e}"
        );
    }

    #[test]
    fn legacy_layer_norm_names_and_decoder_bias_load() {
        let c = cfg();
        let vs = VarStore::new(Device::Cpu);
        MlmModel::new(&vs.root(), &c).unwrap();
        let t: Vec<(String, Tensor)> = hf_tensors(&c)
            .into_iter()
            .map(|(n, x)| {
                let n = n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta");
                let n = if n == "cls.predictions.bias" { "cls.predictions.decoder.bias".to_string() } else { n };
                (n, x)
            })
            .collect();
        assert!(assign(&vs, t, true, Path::new("w.bin")).unwrap().is_empty());
    }

    #[test]
    fn folder_without_weights_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = weights_file(dir.path()).unwrap_err().to_string();
        assert!(e.contains("no model.safetensors or pytorch_model.bin"), "{e}");
        std::fs::write(dir.path().join("model.safetensors.index.json"), "{}").unwrap();
        assert!(weights_file(dir.path()).unwrap_err().to_string().contains("sharded"));
    }
}
