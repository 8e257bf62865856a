//! `features::` — pooled hidden states of every layer (0 = embeddings) for a list of texts, from any model a
//! script holds: a cached crossling model, a random re-initialisation of one, or a folder given on the command
//! line (crossling checkpoint or Hugging Face BERT). See [`crate::features`] for the pooling formulas.
//!
//! ```rhai
//! let f = features::sentences(model, xnli.en, "en");     // [L+1, sentences, d]: mean of subwords, specials excluded
//! let w = features::words(model, texts, "fr", "first");   // [L+1, words, d]: first subword ("mean": all subwords)
//! ```
//! Texts longer than the model's positions are cut to fit (`[CLS]` … `[SEP]` kept), and the log says how many.
use rhai::{Array, Module, NativeCallContext};

use super::engine::{native, rhai_err, strings, Res, Session};
use super::handles::{Features, ModelRef};
use crate::features::{pooled_layers, Extraction, Pooling, Tokenized};
use crate::model::load::LoadedModel;

/// Opens the model behind `m` on the session's device.
pub fn open(session: &Session, m: &ModelRef) -> crate::error::Result<LoadedModel> {
    crate::tasks::run::OpenModel::open(m, session.env.compute.device)
}

/// Cuts `t` to at most `max` ids, keeping the final special token.
fn fit(mut t: Tokenized, max: usize) -> (Tokenized, bool) {
    if t.ids.len() <= max || max < 3 {
        return (t, false);
    }
    let last_id = *t.ids.last().unwrap_or(&0);
    t.ids.truncate(max - 1);
    t.word_of.truncate(max - 1);
    t.ids.push(last_id);
    t.word_of.push(None);
    (t, true)
}

fn extract(session: &Session, m: &ModelRef, texts: &Array, lang: &str, pooling: Pooling) -> Res<Features> {
    let texts = strings(texts, "features")?;
    if texts.is_empty() {
        return Err(rhai_err("features: no texts"));
    }
    let loaded = open(session, m)?;
    let max = loaded.config.max_positions;
    let mut cut = 0;
    let mut tokenized = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let enc = loaded.tokenizer.encode_words(text, lang).map_err(|e| rhai_err(format!("text {}: {e}", i + 1)))?;
        if enc.tokenized.word_of.iter().all(Option::is_none) {
            return Err(rhai_err(format!("features: text {} ({lang}) has no tokens: {text:?}", i + 1)));
        }
        let (t, was_cut) = fit(enc.tokenized, max);
        cut += was_cut as usize;
        tokenized.push(t);
    }
    let how = Extraction { device: loaded.device(), ..Extraction::cpu(pooling) };
    let stack = pooled_layers(&loaded.model, lang, &tokenized, &how)?;
    let what = format!("{} {lang} ({} texts, {pooling:?})", m.name, texts.len());
    session.env.log.push(format!(
        "features {what}: {:?}{}",
        stack.size(),
        if cut > 0 { format!(", {cut} texts cut to {max} tokens") } else { String::new() }
    ));
    Ok(Features::new(stack, what))
}

/// The `features` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("sentences", move |ctx: NativeCallContext, model: ModelRef, texts: Array, lang: &str| {
        native(&ctx, || extract(&s, &model, &texts, lang, Pooling::SentenceMean))
    });
    let s = session.clone();
    m.set_native_fn(
        "words",
        move |ctx: NativeCallContext, model: ModelRef, texts: Array, lang: &str, pooling: &str| {
            native(&ctx, || -> Res<Features> {
                let pooling = match pooling {
                    "mean" => Pooling::WordMean,
                    "first" => Pooling::WordFirst,
                    other => return Err(rhai_err(format!("features::words: pooling '{other}' (mean, first)"))),
                };
                extract(&s, &model, &texts, lang, pooling)
            })
        },
    );
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_keeping_the_final_special() {
        let t =
            Tokenized { ids: vec![1, 5, 6, 7, 8, 2], word_of: vec![None, Some(0), Some(0), Some(1), Some(2), None] };
        let (c, cut) = fit(t.clone(), 4);
        assert!(cut);
        assert_eq!(c.ids, [1, 5, 6, 2]);
        assert_eq!(c.word_of, [None, Some(0), Some(0), None]);
        assert_eq!(fit(t.clone(), 6), (t, false));
    }
}
