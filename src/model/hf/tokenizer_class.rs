//! What `transformers.AutoTokenizer` makes of a folder's `tokenizer.json`, so that crossling encodes a text into
//! exactly the ids transformers gives (transformers 5.23, `tokenization_utils_tokenizers.py` and the model classes'
//! `tokenization_*.py`; transformers 4's fast tokenizers did the same for the parts below).
//!
//! transformers does not read `tokenizer.json` as it is. It picks a tokenizer class — `tokenizer_class` of
//! `tokenizer_config.json`, else the class of `config.json`'s `model_type` — and a class with its own constructor
//! keeps only the file's vocabulary, then rebuilds the rest from `tokenizer_config.json`:
//! * BERT (`BertTokenizer`, and DistilBERT's and ELECTRA's, which are BERT's): normalizer
//!   `BertNormalizer(clean_text, handle_chinese_chars = tokenize_chinese_chars (default true), strip_accents
//!   (default none), lowercase = do_lower_case (default **true**))` — a cased model whose `tokenizer_config.json`
//!   lacks `do_lower_case` is lowercased, whatever `tokenizer.json` says — `BertPreTokenizer`, and the template
//!   `[CLS] $A [SEP]` / `[CLS] $A [SEP] $B [SEP]`;
//! * XLM-R (`XLMRobertaTokenizer`): the file's `Precompiled` SentencePiece normalizer alone (any other normalizer
//!   step dropped), `WhitespaceSplit` + `Metaspace(▁, prepend always unless add_prefix_space = false)`, and
//!   `<s> $A </s>` / `<s> $A </s> </s> $B </s>`;
//! * RoBERTa (`RobertaTokenizer`): no normalizer, `ByteLevel(add_prefix_space, default false)`, `RobertaProcessing`;
//! * any other class (`PreTrainedTokenizerFast`, or a folder with neither field): the file as it is.
//!
//! In every case padding and truncation are off at encode time unless the call asks for them
//! (`set_truncation_and_padding`): a sentence-transformers `tokenizer.json` carries `"padding": {"strategy":
//! {"Fixed": 128}}` and a `truncation` block, which would otherwise pad every text with `[PAD]` tokens read as
//! content. crossling batches, masks and truncates itself.
use std::path::Path;

use serde_json::{json, Value};

use crate::error::{Error, Result};

/// The tokenizer family transformers rebuilds a folder's tokenizer as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizerClass {
    Bert,
    XlmRoberta,
    Roberta,
    /// Read as the file says.
    AsIs,
}

impl TokenizerClass {
    /// The class of a `tokenizer_class` name (`BertTokenizerFast` → BERT) or, without one, of a `model_type`.
    pub fn resolve(tokenizer_class: Option<&str>, model_type: Option<&str>) -> TokenizerClass {
        if let Some(c) = tokenizer_class {
            return match c.trim_end_matches("Fast") {
                "BertTokenizer" | "DistilBertTokenizer" | "ElectraTokenizer" => TokenizerClass::Bert,
                "XLMRobertaTokenizer" => TokenizerClass::XlmRoberta,
                "RobertaTokenizer" => TokenizerClass::Roberta,
                _ => TokenizerClass::AsIs,
            };
        }
        match model_type {
            Some("bert" | "distilbert" | "electra") => TokenizerClass::Bert,
            Some("xlm-roberta") => TokenizerClass::XlmRoberta,
            Some("roberta") => TokenizerClass::Roberta,
            _ => TokenizerClass::AsIs,
        }
    }
}

/// `tokenizer.json` (parsed) rewritten as transformers' class `class` rebuilds it, with the special tokens named
/// (cls, sep) looked up in the file; `config` is `tokenizer_config.json` (options such as `do_lower_case`).
/// Padding and truncation are removed in every case. `path` names the file in errors.
pub fn as_transformers_builds_it(
    mut file: Value,
    class: TokenizerClass,
    config: Option<&Value>,
    (cls, sep): (&str, &str),
    path: &Path,
) -> Result<Value> {
    let (cls_id, sep_id) = (json_token_id(&file, cls), json_token_id(&file, sep));
    let obj = file.as_object_mut().ok_or_else(|| Error::format_file(path, "tokenizer.json is not a JSON object"))?;
    obj.insert("padding".into(), Value::Null);
    obj.insert("truncation".into(), Value::Null);
    let option = |key: &str| config.and_then(|c| c.get(key)).filter(|v| !v.is_null());
    let flag = |key: &str, default: bool| -> Result<bool> {
        match option(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(Error::format_file(
                path.with_file_name("tokenizer_config.json"),
                format!("{key} must be true or false, got {other}"),
            )),
        }
    };
    let id = |name: &str| {
        let found = if name == cls { cls_id } else { sep_id };
        found.ok_or_else(|| Error::format_file(path, format!("special token '{name}' is not in the vocabulary")))
    };
    match class {
        TokenizerClass::AsIs => {}
        TokenizerClass::Bert => {
            let strip_accents = match option("strip_accents") {
                None => Value::Null,
                Some(Value::Bool(b)) => Value::Bool(*b),
                Some(other) => {
                    return Err(Error::format_file(
                        path.with_file_name("tokenizer_config.json"),
                        format!("strip_accents must be true, false or null, got {other}"),
                    ))
                }
            };
            obj.insert(
                "normalizer".into(),
                json!({"type": "BertNormalizer", "clean_text": true,
                       "handle_chinese_chars": flag("tokenize_chinese_chars", true)?,
                       "strip_accents": strip_accents, "lowercase": flag("do_lower_case", true)?}),
            );
            obj.insert("pre_tokenizer".into(), json!({"type": "BertPreTokenizer"}));
            obj.insert("post_processor".into(), template(&[cls], &[sep], &[sep], (cls, id(cls)?), (sep, id(sep)?)));
        }
        TokenizerClass::XlmRoberta => {
            let precompiled = find_precompiled(obj.get("normalizer"));
            obj.insert("normalizer".into(), precompiled.unwrap_or(Value::Null));
            let prepend = if flag("add_prefix_space", true)? { "always" } else { "never" };
            obj.insert(
                "pre_tokenizer".into(),
                json!({"type": "Sequence", "pretokenizers": [
                    {"type": "WhitespaceSplit"},
                    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": prepend, "split": true}]}),
            );
            obj.insert(
                "post_processor".into(),
                template(&[cls], &[sep], &[sep, sep], (cls, id(cls)?), (sep, id(sep)?)),
            );
        }
        TokenizerClass::Roberta => {
            let add_prefix_space = flag("add_prefix_space", false)?;
            let trim_offsets = flag("trim_offsets", true)?;
            obj.insert("normalizer".into(), Value::Null);
            obj.insert(
                "pre_tokenizer".into(),
                json!({"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": true,
                       "use_regex": true}),
            );
            obj.insert(
                "post_processor".into(),
                json!({"type": "RobertaProcessing", "sep": [sep, id(sep)?], "cls": [cls, id(cls)?],
                       "trim_offsets": trim_offsets, "add_prefix_space": add_prefix_space}),
            );
        }
    }
    Ok(file)
}

/// The id of `token` in a parsed `tokenizer.json`, as `Tokenizer::token_to_id` finds it: its added tokens first,
/// then the model's vocabulary (a map for WordPiece / BPE / WordLevel, a list of `[piece, score]` for Unigram).
/// Read from the JSON so that the file is not built into a tokenizer twice.
fn json_token_id(file: &serde_json::Value, token: &str) -> Option<u32> {
    let added = file.get("added_tokens").and_then(|a| a.as_array()).into_iter().flatten();
    if let Some(id) =
        added.filter(|t| t.get("content").and_then(|c| c.as_str()) == Some(token)).find_map(|t| t.get("id")?.as_u64())
    {
        return u32::try_from(id).ok();
    }
    match file.get("model")?.get("vocab")? {
        serde_json::Value::Object(map) => map.get(token)?.as_u64().and_then(|id| u32::try_from(id).ok()),
        serde_json::Value::Array(pieces) => pieces
            .iter()
            .position(|p| p.get(0).and_then(|v| v.as_str()) == Some(token))
            .and_then(|i| u32::try_from(i).ok()),
        _ => None,
    }
}

/// A `TemplateProcessing` post-processor: single `before $A after`, pair `before $A middle $B:1 after:1`.
fn template(before: &[&str], after: &[&str], middle: &[&str], cls: (&str, u32), sep: (&str, u32)) -> Value {
    let special = |t: &str, type_id: u32| json!({"SpecialToken": {"id": t, "type_id": type_id}});
    let seq = |s: &str, type_id: u32| json!({"Sequence": {"id": s, "type_id": type_id}});
    let mut single: Vec<Value> = before.iter().map(|t| special(t, 0)).collect();
    single.push(seq("A", 0));
    single.extend(after.iter().map(|t| special(t, 0)));
    let mut pair: Vec<Value> = before.iter().map(|t| special(t, 0)).collect();
    pair.push(seq("A", 0));
    pair.extend(middle.iter().map(|t| special(t, 0)));
    pair.push(seq("B", 1));
    pair.extend(after.iter().map(|t| special(t, 1)));
    let entry = |(t, id): (&str, u32)| (t.to_string(), json!({"id": t, "ids": [id], "tokens": [t]}));
    let specials: serde_json::Map<String, Value> = [entry(cls), entry(sep)].into_iter().collect();
    json!({"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": specials})
}

/// The `Precompiled` step of a normalizer (itself or inside a `Sequence`), as transformers extracts it.
fn find_precompiled(normalizer: Option<&Value>) -> Option<Value> {
    let n = normalizer?;
    match n.get("type").and_then(Value::as_str) {
        Some("Precompiled") => Some(n.clone()),
        Some("Sequence") => n.get("normalizers")?.as_array()?.iter().find_map(|m| find_precompiled(Some(m))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The added tokens of a test file: [CLS] 2, [SEP] 3, <s> 4, </s> 5.
    fn added() -> Value {
        json!([{"id": 2, "content": "[CLS]"}, {"id": 3, "content": "[SEP]"}, {"id": 4, "content": "<s>"},
               {"id": 5, "content": "</s>"}])
    }

    #[test]
    fn ids_are_read_from_added_tokens_then_the_vocabulary() {
        let wordpiece = json!({"added_tokens": added(), "model": {"vocab": {"cat": 7}}});
        assert_eq!(json_token_id(&wordpiece, "[SEP]"), Some(3));
        assert_eq!(json_token_id(&wordpiece, "cat"), Some(7));
        let unigram = json!({"added_tokens": [], "model": {"vocab": [["<s>", 0.0], ["▁the", -1.0]]}});
        assert_eq!(json_token_id(&unigram, "▁the"), Some(1));
        assert_eq!(json_token_id(&unigram, "dog"), None);
    }

    #[test]
    fn classes_resolve_as_transformers_does() {
        assert_eq!(TokenizerClass::resolve(Some("BertTokenizerFast"), Some("xlm-roberta")), TokenizerClass::Bert);
        assert_eq!(TokenizerClass::resolve(Some("PreTrainedTokenizerFast"), Some("bert")), TokenizerClass::AsIs);
        assert_eq!(TokenizerClass::resolve(None, Some("xlm-roberta")), TokenizerClass::XlmRoberta);
        assert_eq!(TokenizerClass::resolve(None, Some("distilbert")), TokenizerClass::Bert);
        assert_eq!(TokenizerClass::resolve(None, None), TokenizerClass::AsIs);
    }

    #[test]
    fn bert_rebuilds_normalizer_and_template_and_drops_padding() {
        let file = json!({"added_tokens": added(), "normalizer": {"type": "BertNormalizer", "lowercase": false}, "padding": {"x": 1},
                          "truncation": {"max_length": 128}, "pre_tokenizer": null, "post_processor": null});
        let p = Path::new("t/tokenizer.json");
        let out = as_transformers_builds_it(file.clone(), TokenizerClass::Bert, None, ("[CLS]", "[SEP]"), p).unwrap();
        assert_eq!(out["normalizer"]["lowercase"], json!(true), "do_lower_case defaults to true");
        assert!(out["padding"].is_null() && out["truncation"].is_null());
        assert_eq!(out["post_processor"]["special_tokens"]["[SEP]"]["ids"], json!([3]));
        let cfg = json!({"do_lower_case": false});
        let out =
            as_transformers_builds_it(file.clone(), TokenizerClass::Bert, Some(&cfg), ("[CLS]", "[SEP]"), p).unwrap();
        assert_eq!(out["normalizer"]["lowercase"], json!(false));
        let bad = json!({"do_lower_case": "yes"});
        let e = as_transformers_builds_it(file, TokenizerClass::Bert, Some(&bad), ("[CLS]", "[SEP]"), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("tokenizer_config.json") && e.contains("do_lower_case must be true or false"), "{e}");
    }

    #[test]
    fn xlm_roberta_keeps_only_the_precompiled_step() {
        let file = json!({"added_tokens": added(), "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": "AAA="},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}});
        let p = Path::new("t/tokenizer.json");
        let out = as_transformers_builds_it(file, TokenizerClass::XlmRoberta, None, ("<s>", "</s>"), p).unwrap();
        assert_eq!(out["normalizer"], json!({"type": "Precompiled", "precompiled_charsmap": "AAA="}));
        assert_eq!(out["post_processor"]["pair"].as_array().unwrap().len(), 6);
        let missing = as_transformers_builds_it(
            json!({"added_tokens": added()}),
            TokenizerClass::XlmRoberta,
            None,
            ("<s>", "<x>"),
            p,
        );
        assert!(missing.unwrap_err().to_string().contains("special token '<x>'"));
    }
}
