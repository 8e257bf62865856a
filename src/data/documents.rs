//! Running text of a monolingual dataset as a stream of [`Document`]s, whatever its format: the one place that
//! maps a manifest's format to its reader. Used by corpus building and by `data stats`.
use crate::data::formats::{eltec, line_docs, news, novel, zhwiki, Document};
use crate::data::manifest::{FileEntry, Format, Manifest};
use crate::data::resolve::DataRoots;
use crate::error::{Error, Result};

/// Whether a format holds running text (novels, articles, news) rather than labelled or parallel data.
pub fn is_running_text(format: Format) -> bool {
    matches!(format, Format::EltecTei | Format::Novel | Format::Zhwiki | Format::LineDocs | Format::NewsLines)
}

/// Whether each paragraph of the format is already one sentence (news test sets: one sentence per line).
pub fn paragraphs_are_sentences(format: Format) -> bool {
    matches!(format, Format::NewsLines)
}

/// The language of one file of `manifest`: the file's own `lang`, else the manifest's only language.
pub fn file_lang<'a>(manifest: &'a Manifest, file: &'a FileEntry) -> Option<&'a str> {
    file.lang.as_deref().or_else(|| (manifest.languages.len() == 1).then(|| manifest.languages[0].as_str()))
}

/// Documents of one file of a running-text dataset (resolving, and if need be downloading, the file).
pub fn file_documents(
    manifest: &Manifest,
    file: &FileEntry,
    roots: &DataRoots,
) -> Result<Box<dyn Iterator<Item = Result<Document>>>> {
    let path = roots.resolve(file)?;
    let lang = file_lang(manifest, file).unwrap_or("");
    Ok(match manifest.format {
        Format::EltecTei => Box::new(std::iter::once(eltec::read(&path))),
        Format::Novel => Box::new(std::iter::once(novel::read(&path, lang))),
        Format::NewsLines => Box::new(std::iter::once(news::read(&path))),
        Format::Zhwiki => Box::new(zhwiki::open(&path)?),
        Format::LineDocs => Box::new(line_docs::open(&path)?),
        other => {
            return Err(Error::Invalid(format!(
                "dataset '{}' has format {other}, which is not running text",
                manifest.id
            )))
        }
    })
}
