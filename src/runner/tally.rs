//! Counting runs for progress: how many are done of how many there will be, kept true as the
//! rounds go (a failed or skipped cell's remaining runs drop out, each repeat of a
//! contaminated run adds one), and what the scheduler is doing.

/// Runs done and runs in total (warm-ups and repeats included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runs finished (measured, warm-up, repeated or failed).
    pub done: usize,
    /// Runs the plan holds now: cells × (warm-ups + rounds) (`scheduler::Plan::runs`), plus repeats so far, less what
    /// failed cells will not run.
    pub total: usize,
}

/// What the scheduler reports.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A run starts: `label` is `warm-up` or `round R/N`, `cell` the cell id.
    Start {
        /// `warm-up` or `round R/N`.
        label: &'a str,
        /// The cell's id.
        cell: &'a str,
    },
    /// Something worth a line of its own: a repeat, a failure, a skip.
    Note(&'a str),
}
