//! The executor interface: run one cell once and return its record, so the scheduler can be
//! tested with a mock that starts no processes.

use crate::results::RunRecord;
use crate::runner::matrix::CellSpec;

/// Why a run produced no record.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// The worker crashed, hung, or reported an error: one line plus the tail of its stderr.
    Failed(String),
    /// Ctrl-C: the whole run stops, keeping what was measured.
    Interrupted,
}

/// Runs a cell once in a fresh worker.
pub trait Executor {
    /// Runs `cell` once; `round` is None for a warm-up.
    fn execute(&mut self, cell: &CellSpec, round: Option<usize>) -> Result<RunRecord, RunError>;
}
