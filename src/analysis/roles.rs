//! What the other roles cost when they ran apart (`--hosts containers`): per cell and role (the
//! server, the database), the role's CPU per operation and its memory (PSS), read from /proc
//! around each run. Medians over the cell's measured runs, with intervals.

use super::measured::MeasuredRuns;
use crate::results::Cell;
use crate::stats::{summarize, Summary};

/// One role's cost in one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleRow {
    /// Scenario name.
    pub scenario: String,
    /// Variant.
    pub variant: String,
    /// Interpreter version.
    pub python: String,
    /// The cell's matrix setting.
    pub setting: String,
    /// `server` or `database`.
    pub role: String,
    /// The role's CPU per operation of the cell, µs.
    pub cpu_us_per_op: Summary,
    /// The role's memory (PSS summed) at the end of each run, MiB.
    pub pss_mib: Summary,
}

/// The rows of every cell whose runs carry role figures, in document order, a cell's roles in
/// the order its runs list them.
pub fn rows(cells: &[&Cell]) -> Vec<RoleRow> {
    let mut out = Vec::new();
    for c in cells {
        let runs = MeasuredRuns::of(c);
        let Some(first) = runs.iter().find(|r| !r.roles.is_empty()) else {
            continue;
        };
        for role in first.roles.iter().map(|u| &u.role) {
            let mut cpu = Vec::new();
            let mut pss = Vec::new();
            for r in runs.iter().filter(|r| r.ops > 0) {
                if let Some(u) = r.roles.iter().find(|u| &u.role == role) {
                    cpu.push(u.cpu_s / r.ops as f64 * 1e6);
                    pss.push(u.pss_mib);
                }
            }
            if cpu.is_empty() {
                continue;
            }
            out.push(RoleRow {
                scenario: c.scenario.clone(),
                variant: c.variant.clone(),
                python: c.python.clone(),
                setting: c.group.clone(),
                role: role.clone(),
                cpu_us_per_op: summarize(&cpu),
                pss_mib: summarize(&pss),
            });
        }
    }
    out
}
