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

use super::handles::{Features, ModelRef};
use super::ns_common::{native, rhai_err, strings, Res, Session};
use crate::features::extract::pooled_texts;
use crate::features::Pooling;
use crate::model::load::LoadedModel;

/// Opens the model behind `m` on the session's device.
pub fn open(session: &Session, m: &ModelRef) -> crate::error::Result<LoadedModel> {
    crate::tasks::run::OpenModel::open(m, session.env.compute.device)
}

fn extract(session: &Session, m: &ModelRef, texts: &Array, lang: &str, pooling: Pooling) -> Res<Features> {
    let texts = strings(texts, "features")?;
    let loaded = open(session, m)?;
    let (stack, cut) = pooled_texts(&loaded, &texts, lang, pooling)?;
    let what = format!("{} {lang} ({} texts, {pooling:?})", m.name, texts.len());
    let max = loaded.config.max_positions;
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
