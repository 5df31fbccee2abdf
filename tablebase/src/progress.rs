//! Progress reporting for long work, without tying the library to a terminal.

/// Receives progress of a long operation; the CLI draws it as a progress bar.
pub trait Progress: Sync {
    /// A new phase begins with `total` units of work.
    fn phase(&self, name: &str, total: u64);
    /// `units` more units are done.
    fn advance(&self, units: u64);
    /// The current phase is over.
    fn finish_phase(&self);
}

/// Progress that goes nowhere (tests, libraries).
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish_phase(&self) {}
}
