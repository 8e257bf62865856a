//! Progress bars for long work (downloads, verification, corpus building, training), drawn one way everywhere.
//!
//! On a terminal the bar redraws in place. When stderr is not a terminal (a job's log file under `grid run`, a
//! Slurm log, `nohup … > log`) the bar's line is written as a plain line at most once every [`LOG_INTERVAL`], so
//! a log shows how far a long job is.
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a bar writes its line to a log that is not a terminal.
pub const LOG_INTERVAL: Duration = Duration::from_secs(60);

/// A progress bar of `len` units with an indicatif `template` (e.g. `"{msg} [{bar:30}] {pos}/{len} eta {eta}"`).
/// A template that does not parse falls back to indicatif's default style rather than failing the work.
pub fn bar(len: u64, template: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    if !std::io::stderr().is_terminal() {
        let log = LogLines::new(LOG_INTERVAL, Box::new(|line| eprintln!("{line}")));
        bar.set_draw_target(indicatif::ProgressDrawTarget::term_like_with_hz(Box::new(log), 1));
    }
    bar
}

/// A draw target that turns a bar's redraws into plain lines, at most one per `interval` (the first at once).
pub struct LogLines {
    interval: Duration,
    state: Mutex<(Option<Instant>, String)>,
    emit: Box<dyn Fn(&str) + Send + Sync>,
}

impl std::fmt::Debug for LogLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogLines").field("interval", &self.interval).finish()
    }
}

impl LogLines {
    /// Lines go to `emit`.
    pub fn new(interval: Duration, emit: Box<dyn Fn(&str) + Send + Sync>) -> Self {
        LogLines { interval, state: Mutex::new((None, String::new())), emit }
    }

    fn commit(&self) {
        let Ok(mut state) = self.state.lock() else { return };
        let line = std::mem::take(&mut state.1);
        let line = line.trim_end();
        if line.trim().is_empty() {
            return;
        }
        let due = state.0.is_none_or(|last| last.elapsed() >= self.interval);
        if due {
            state.0 = Some(Instant::now());
            (self.emit)(line);
        }
    }
}

impl indicatif::TermLike for LogLines {
    fn width(&self) -> u16 {
        120
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        if let Ok(mut state) = self.state.lock() {
            state.1.push_str(s);
        }
        self.commit();
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        if let Ok(mut state) = self.state.lock() {
            state.1.push_str(s);
        }
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        self.commit();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_log_gets_the_first_line_at_once_and_then_one_per_interval() {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = seen.clone();
        let log = LogLines::new(Duration::from_secs(3600), Box::new(move |l| sink.lock().unwrap().push(l.into())));
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(10),
            indicatif::ProgressDrawTarget::term_like_with_hz(Box::new(log), 20),
        );
        bar.set_style(indicatif::ProgressStyle::with_template("{pos}/{len} {msg}").unwrap());
        bar.set_message("loss 3.2");
        bar.set_position(1);
        bar.tick();
        for i in 2..10 {
            bar.set_position(i);
        }
        bar.finish();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].contains("/10") && !seen[0].contains('\r'), "{seen:?}");
    }
}
