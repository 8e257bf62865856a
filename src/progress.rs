//! Progress bars for long work (downloads, verification, corpus building, training), drawn one way everywhere.

/// A progress bar of `len` units with an indicatif `template` (e.g. `"{msg} [{bar:30}] {pos}/{len} eta {eta}"`).
/// A template that does not parse falls back to indicatif's default style rather than failing the work.
pub fn bar(len: u64, template: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
