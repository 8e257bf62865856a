//! `crossling data stats`: documents, sentences, tokens and characters per language of a dataset.
//!
//! * Running text (novels, wiki, web, news): documents as the reader yields them (a novel, a chapter, an article,
//!   a news test set); sentences by [`crate::text::sentences::split_sentences`] (news: one per line); tokens are
//!   whitespace tokens, or jieba words for Chinese; characters are Unicode scalar values of the paragraphs.
//! * Labelled and parallel data: documents = files; sentences = records (dictionary pairs, aligned lines, NLI
//!   examples, tagged or parsed sentences); tokens = the records' tokens (given tokens where the format has them,
//!   whitespace tokens otherwise); characters of the text fields.
use crate::data::documents::{file_documents, file_lang, is_running_text, paragraphs_are_sentences};
use crate::data::formats::{bmes, conll2003, conllu, mnli, muse, panx, udpos, xnli, TaggedSentence};
use crate::data::manifest::{FileEntry, Format, Manifest};
use crate::data::resolve::DataRoots;
use crate::data::text_file::LineReader;
use crate::error::Result;
use crate::text::segment::count_words;
use crate::text::sentences::split_sentences;
use serde::Serialize;
use std::collections::BTreeMap;

/// Counts for one language of one dataset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub documents: u64,
    pub sentences: u64,
    pub tokens: u64,
    pub characters: u64,
}

impl Counts {
    fn add_text(&mut self, text: &str, lang: &str) {
        self.tokens += count_words(text, lang) as u64;
        self.characters += text.chars().count() as u64;
    }
    fn add_tagged(&mut self, sentences: &[TaggedSentence]) {
        self.sentences += sentences.len() as u64;
        for s in sentences {
            self.tokens += s.tokens.len() as u64;
            self.characters += s.tokens.iter().map(|t| t.chars().count() as u64).sum::<u64>();
        }
    }
}

/// Per-language counts of a dataset, keyed by language (`mixed` where a file has no single language).
pub fn dataset_stats(manifest: &Manifest, roots: &DataRoots) -> Result<BTreeMap<String, Counts>> {
    let mut by_lang: BTreeMap<String, Counts> = BTreeMap::new();
    for file in manifest.files.iter().filter(|f| f.is_data()) {
        let lang = file_lang(manifest, file).map(str::to_string).unwrap_or_else(|| pair_of(&file.path));
        let counts = by_lang.entry(lang.clone()).or_default();
        file_stats(manifest, file, &lang, roots, counts)?;
    }
    Ok(by_lang)
}

/// `en-fr` for a file named like `en-fr.dict` or `de-en.5000-6500.n.txt`; `mixed` otherwise.
fn pair_of(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let b = name.as_bytes();
    let is_pair = b.len() >= 5 && b[2] == b'-' && b[..2].iter().chain(&b[3..5]).all(u8::is_ascii_lowercase);
    if is_pair {
        name[..5].to_string()
    } else {
        "mixed".to_string()
    }
}

fn file_stats(manifest: &Manifest, file: &FileEntry, lang: &str, roots: &DataRoots, c: &mut Counts) -> Result<()> {
    if is_running_text(manifest.format) {
        let per_sentence = paragraphs_are_sentences(manifest.format);
        for doc in file_documents(manifest, file, roots)? {
            let doc = doc?;
            c.documents += 1;
            for p in &doc.paragraphs {
                c.sentences += if per_sentence { 1 } else { split_sentences(p, lang).len() as u64 };
                c.add_text(p, lang);
            }
        }
        return Ok(());
    }
    let path = roots.resolve(file)?;
    c.documents += 1;
    match manifest.format {
        Format::MuseDict => {
            for pair in muse::read(&path, muse::layout_for(&path))? {
                c.sentences += 1;
                c.add_text(&pair.src, lang);
                c.add_text(&pair.tgt, lang);
            }
        }
        Format::Parallel => {
            let mut reader = LineReader::open(&path)?;
            while let Some(line) = reader.next_line()? {
                c.sentences += 1;
                c.add_text(&line, lang);
            }
        }
        Format::XnliTsv => {
            for ex in xnli::read(&path)? {
                c.sentences += 1;
                c.add_text(&ex.premise, lang);
                c.add_text(&ex.hypothesis, lang);
            }
        }
        Format::MnliCsv => {
            for ex in mnli::read_file(&path)? {
                c.sentences += 1;
                c.add_text(&ex.premise, lang);
                c.add_text(&ex.hypothesis, lang);
            }
        }
        Format::PanxTsv => c.add_tagged(&panx::read(&path)?),
        Format::Conll2003 => c.add_tagged(&conll2003::read(&path)?),
        Format::Bmes => c.add_tagged(&bmes::read_lenient(&path)?.0), // the one malformed line is skipped
        Format::UdposTsv => c.add_tagged(&udpos::read(&path)?),
        Format::Conllu => {
            for s in conllu::open(&path)? {
                let s = s?;
                c.sentences += 1;
                c.tokens += s.tokens.len() as u64;
                c.characters += s.tokens.iter().map(|t| t.form.chars().count() as u64).sum::<u64>();
            }
        }
        Format::EltecTei | Format::Novel | Format::Zhwiki | Format::LineDocs | Format::NewsLines => {
            unreachable!("running text handled above")
        }
    }
    Ok(())
}
