//! Rule-based sentence splitting for paragraphs of running text in en, fr, de, ru and zh.
//!
//! A sentence ends at `.`, `!`, `?` or `…` (optionally followed by closing quotes or brackets) when the next
//! non-space character starts a new sentence (an upper-case letter, a digit, an opening quote, a dash or bracket),
//! unless the word before the period is a known abbreviation or a single letter (an initial). For Chinese (and any
//! full-width punctuation) a sentence ends after `。`, `！`, `？` or `；`-free `…`, with closing quotes attached.
//! This is the usual heuristic of corpus preparation (cf. the Moses `split-sentences.perl` rules); it is not a
//! trained segmenter, and its errors are the typical ones around abbreviations it does not know.

/// Split `paragraph` into trimmed, non-empty sentences. `lang` selects the abbreviation list.
pub fn split_sentences(paragraph: &str, lang: &str) -> Vec<String> {
    let chars: Vec<char> = paragraph.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let boundary_end = if is_cjk_terminal(c) {
            Some(skip_closers(&chars, i + 1, lang))
        } else if is_latin_terminal(c) {
            let mut end = i + 1;
            while end < chars.len() && is_latin_terminal(chars[end]) {
                end += 1;
            }
            let end = skip_closers(&chars, end, lang);
            let next = chars[end..].iter().position(|c| !c.is_whitespace()).map(|k| end + k);
            let has_space = next.is_none_or(|n| n > end);
            let starts_sentence = next.is_none_or(|n| starts_new_sentence(chars[n]));
            if has_space && starts_sentence && !(c == '.' && is_abbreviation(&chars[start..i], lang)) {
                Some(end)
            } else {
                None
            }
        } else {
            None
        };
        match boundary_end {
            Some(end) => {
                push_trimmed(&mut out, &chars[start..end]);
                start = end;
                i = end;
            }
            None => i += 1,
        }
    }
    push_trimmed(&mut out, &chars[start..]);
    out
}

fn push_trimmed(out: &mut Vec<String>, chars: &[char]) {
    let s: String = chars.iter().collect();
    let s = s.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
}

fn is_latin_terminal(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

fn is_cjk_terminal(c: char) -> bool {
    matches!(c, '。' | '！' | '？')
}

/// Skip closing quotes and brackets after a terminal. `“` closes only in German (`„…“`); elsewhere it opens.
fn skip_closers(chars: &[char], mut i: usize, lang: &str) -> usize {
    while i < chars.len()
        && (matches!(chars[i], '"' | '\'' | '»' | '”' | '’' | ')' | ']' | '」' | '』' | '）' | '》')
            || (chars[i] == '“' && lang == "de"))
    {
        i += 1;
    }
    i
}

fn starts_new_sentence(c: char) -> bool {
    c.is_uppercase()
        || c.is_numeric()
        || matches!(c, '"' | '\'' | '«' | '“' | '„' | '‘' | '(' | '[' | '—' | '–' | '-' | '¿' | '¡')
        || is_cjk(c)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0xF900..=0xFAFF)
}

/// Whether the word ending just before a period is an abbreviation (or an initial) in `lang`.
fn is_abbreviation(before: &[char], lang: &str) -> bool {
    let word: String =
        before.iter().rev().take_while(|c| !c.is_whitespace() && !matches!(c, '(' | '"' | '«' | '“')).collect();
    let word: String = word.chars().rev().collect();
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    if letters == 1 && word.chars().count() <= 2 && word.chars().all(|c| c.is_alphabetic() && c.is_uppercase()) {
        return true; // an initial: "J. Smith"
    }
    let lower = word.to_lowercase();
    let common: &[&str] = &["etc", "vs", "cf", "e.g", "i.e", "no", "vol", "p", "pp", "ch", "fig"];
    let by_lang: &[&str] = match lang {
        "en" => &[
            "mr", "mrs", "ms", "dr", "st", "prof", "rev", "gen", "col", "capt", "lt", "sr", "jr", "messrs", "esq",
            "hon",
        ],
        "fr" => &["m", "mm", "mme", "mlle", "mgr", "dr", "st", "ste", "cf", "env", "chap"],
        "de" => {
            &["hr", "hrn", "fr", "frl", "dr", "prof", "st", "z.b", "bzw", "usw", "u.a", "d.h", "ca", "nr", "vgl", "s"]
        }
        "ru" => &["т", "г", "гг", "др", "пр", "см", "стр", "ул", "т.е", "т.д", "т.п", "им", "проф"],
        _ => &[],
    };
    common.contains(&lower.as_str()) || by_lang.contains(&lower.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_english_with_abbreviations_and_quotes() {
        let s = split_sentences("Mr. Smith came home. \"Is it late?\" he asked. It was 5 p.m. at St. Paul's.", "en");
        assert_eq!(s, ["Mr. Smith came home.", "\"Is it late?\" he asked.", "It was 5 p.m. at St. Paul's."]);
    }

    #[test]
    fn keeps_initials_and_lowercase_continuations() {
        assert_eq!(split_sentences("J. R. Tolkien wrote it. and then... no.", "en").len(), 1);
        assert_eq!(
            split_sentences("Il dit: « Non ! » Puis il partit.", "fr"),
            ["Il dit: « Non ! » Puis il partit."].map(String::from)
        );
        assert_eq!(split_sentences("Er kam z.B. spät. Sie nicht.", "de"), ["Er kam z.B. spät.", "Sie nicht."]);
        assert_eq!(split_sentences("„Wer da?“ Niemand.", "de"), ["„Wer da?“", "Niemand."]);
        assert_eq!(split_sentences("Он пришёл. — Кто там? Никого.", "ru"), ["Он пришёл.", "— Кто там?", "Никого."]);
    }

    #[test]
    fn splits_chinese_after_full_width_terminals() {
        let s = split_sentences("话说天下大势，分久必合。合久必分！“真的吗？”他问。", "zh");
        assert_eq!(s, ["话说天下大势，分久必合。", "合久必分！", "“真的吗？”", "他问。"]);
    }

    #[test]
    fn empty_and_unterminated() {
        assert!(split_sentences("   ", "en").is_empty());
        assert_eq!(split_sentences("no terminal here", "en"), ["no terminal here"]);
    }
}
