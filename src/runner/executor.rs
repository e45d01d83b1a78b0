//! The executor interface: run one cell once and return its record, so the scheduler can be
//! tested with a mock that starts no processes.

use serde::Deserialize;

use crate::results::RunRecord;
use crate::runner::matrix::CellSpec;

/// Why a worker could not run its cell here: the `kind` of the protocol's `skip` message
/// (docs/protocol.md; the worker's names are `SKIP_KINDS` in workloads/harness_outcome.py).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipKind {
    /// An optional package (an event loop) is not installed in the cell's environment.
    MissingPackage,
    /// The interpreter or platform cannot run the cell.
    Unsupported,
}

/// Why a run produced no record; the scheduler acts on the variant.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// The cell cannot run in this environment: it is marked skipped with `reason`, not failed,
    /// and not run again.
    Skipped {
        /// What kind of reason.
        kind: SkipKind,
        /// The worker's words: what is missing and how to get it.
        reason: String,
    },
    /// The worker crashed, hung, or reported an error: one line plus the tail of its stderr.
    /// The cell is marked failed and not run again.
    Failed(String),
    /// Ctrl-C: the whole run stops, keeping what was measured.
    Interrupted,
}

/// Runs a cell once in a fresh worker.
pub trait Executor {
    /// Runs `cell` once; `round` is None for a warm-up.
    fn execute(&mut self, cell: &CellSpec, round: Option<usize>) -> Result<RunRecord, RunError>;
}
