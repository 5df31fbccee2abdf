//! Progress bars on stderr (rate and ETA) for the solver and the audit.

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use shogi4_tablebase::Progress;

/// Draws each phase as an indicatif bar; hidden automatically when stderr is not a terminal.
pub struct Bar {
    current: Mutex<Option<ProgressBar>>,
}

impl Bar {
    /// A bar with no phase yet.
    pub fn new() -> Bar {
        Bar { current: Mutex::new(None) }
    }
}

impl Bar {
    /// Shows `text` after the current phase's bar (what a long phase has found so far).
    pub fn note(&self, text: String) {
        if let Some(bar) = &*self.current.lock().expect("not poisoned") {
            bar.set_message(text);
        }
    }
}

impl Progress for Bar {
    fn phase(&self, name: &str, total: u64) {
        let bar = ProgressBar::new(total).with_prefix(name.to_string());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>18} [{bar:30}] {percent:>3}% {human_pos}/{human_len} {per_sec} ETA {eta} {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        *self.current.lock().expect("not poisoned") = Some(bar);
    }

    fn advance(&self, units: u64) {
        if let Some(bar) = &*self.current.lock().expect("not poisoned") {
            bar.inc(units);
        }
    }

    fn finish_phase(&self) {
        if let Some(bar) = self.current.lock().expect("not poisoned").take() {
            bar.finish_and_clear();
        }
    }
}
