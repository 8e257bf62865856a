//! `data::` — evaluation text from the bundle, with every file read recorded in the provenance.
//!
//! ```rhai
//! let xnli = data::xnli_parallel(["en", "fr"], 1000);   // #{ en: [...], fr: [...] }, row i parallel
//! let tat = data::tatoeba("de", 1000);                   // #{ en: [...], de: [...] }
//! let seg = data::segment_zh(xnli.zh);                   // Chinese lines segmented with jieba, words joined by spaces
//! ```
use rhai::{Array, Dynamic, Map, Module, NativeCallContext};

use super::ns_common::{native, rhai_err, strings, Res, Session};
use crate::text::evalsets;

fn count(n: i64, what: &str) -> Res<usize> {
    usize::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| rhai_err(format!("{what}: n must be positive, got {n}")))
}

fn to_array(v: Vec<String>) -> Dynamic {
    Dynamic::from_array(v.into_iter().map(Dynamic::from).collect())
}

/// The `data` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("xnli_parallel", move |ctx: NativeCallContext, langs: Array, n: i64| {
        native(&ctx, || -> Res<Map> {
            let langs = strings(&langs, "data::xnli_parallel languages")?;
            let n = count(n, "data::xnli_parallel")?;
            let (catalog, roots) = &*s.data;
            let (text, files) = evalsets::xnli_parallel(catalog, roots, &langs, n)?;
            s.note_data(&files);
            Ok(text.into_iter().map(|(l, v)| (l.into(), to_array(v))).collect())
        })
    });
    let s = session.clone();
    m.set_native_fn("tatoeba", move |ctx: NativeCallContext, lang: &str, n: i64| {
        native(&ctx, || -> Res<Map> {
            let n = count(n, "data::tatoeba")?;
            let (catalog, roots) = &*s.data;
            let (en, xx, files) = evalsets::tatoeba(catalog, roots, lang, n)?;
            s.note_data(&files);
            let mut out = Map::new();
            out.insert("en".into(), to_array(en));
            out.insert(lang.into(), to_array(xx));
            Ok(out)
        })
    });
    m.set_native_fn("segment_zh", |ctx: NativeCallContext, texts: Array| {
        native(&ctx, || -> Res<Array> {
            let texts = strings(&texts, "data::segment_zh texts")?;
            Ok(texts.iter().map(|t| Dynamic::from(crate::text::segment::segment_zh(t).join(" "))).collect())
        })
    });
    m
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run_text, session};

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn parallel_text_and_provenance() {
        let dir = tempfile::tempdir().unwrap();
        let s = session(dir.path());
        let v = run_text(&s, dir.path(), "d.rhai", "let x = data::xnli_parallel([\"en\", \"de\"], 7); let t = data::tatoeba(\"fr\", 3); [x.en.len(), x.de.len(), t.fr.len(), t.en.len()]")
            .unwrap();
        let n: Vec<i64> = v.into_array().unwrap().into_iter().map(|d| d.as_int().unwrap()).collect();
        assert_eq!(n, [7, 7, 3, 3]);
        s.with_record(|r| assert_eq!(r.provenance.data.len(), 4, "{:?}", r.provenance.data));
        let e = run_text(&s, dir.path(), "e.rhai", "data::xnli_parallel([\"en\"], 0)").unwrap_err();
        assert!(e.to_string().contains("n must be positive"), "{e}");
    }
}
