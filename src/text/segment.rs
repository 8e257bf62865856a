//! Word segmentation: Chinese by jieba (the maximum-probability path over a prefix dictionary with an HMM for
//! unknown words; Sun 2012, as ported by `jieba-rs`), every other language by whitespace and punctuation.
//!
//! The jieba dictionary loads once per process (its load time: docs/performance.md, *Measurements behind design
//! choices*) and is shared.
use std::sync::OnceLock;

fn jieba() -> &'static jieba_rs::Jieba {
    static JIEBA: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    JIEBA.get_or_init(jieba_rs::Jieba::new)
}

/// Segment Chinese text into words (whitespace dropped), using jieba with its HMM for unknown words.
pub fn segment_zh(text: &str) -> Vec<String> {
    jieba().cut(text, true).into_iter().map(str::trim).filter(|w| !w.is_empty()).map(String::from).collect()
}

/// Words of `text` in `lang`: jieba for `zh`; otherwise whitespace tokens with leading/trailing punctuation split
/// off as tokens of their own (`"Hello,` → `"`, `Hello`, `,`).
pub fn words(text: &str, lang: &str) -> Vec<String> {
    if lang == "zh" {
        return segment_zh(text);
    }
    let mut out = Vec::new();
    for raw in text.split_whitespace() {
        let chars: Vec<char> = raw.chars().collect();
        let lead = chars.iter().take_while(|c| c.is_ascii_punctuation() || is_quote(**c)).count();
        if lead == chars.len() {
            out.push(raw.to_string());
            continue;
        }
        // Capped: `…` ends a word's trailing run but not its leading one, so `"…` must not count its `"` twice.
        let trail = chars.iter().rev().take_while(|c| c.is_ascii_punctuation() || is_quote(**c) || **c == '…').count();
        let trail = trail.min(chars.len() - lead);
        out.extend(chars[..lead].iter().map(|c| c.to_string()));
        if lead + trail < chars.len() {
            out.push(chars[lead..chars.len() - trail].iter().collect());
        }
        out.extend(chars[chars.len() - trail..].iter().map(|c| c.to_string()));
    }
    out
}

fn is_quote(c: char) -> bool {
    matches!(c, '«' | '»' | '“' | '”' | '„' | '‘' | '’' | '—' | '–')
}

/// Count words without allocating the segmentation of non-Chinese text.
pub fn count_words(text: &str, lang: &str) -> usize {
    if lang == "zh" {
        segment_zh(text).len()
    } else {
        text.split_whitespace().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_chinese_into_words() {
        let w = segment_zh("我来到北京清华大学");
        assert_eq!(w, ["我", "来到", "北京", "清华大学"]);
    }

    #[test]
    fn splits_punctuation_off_words() {
        assert_eq!(words("«Bonjour,» dit-il.", "fr"), ["«", "Bonjour", ",", "»", "dit-il", "."]);
        assert_eq!(words("...", "en"), ["..."]);
        assert_eq!(words("\"… «…» x…", "fr"), ["\"", "…", "«", "…", "»", "x", "…"]);
    }
}
