//! The other roles' cost (`--hosts containers`): per cell, what the server and the database
//! spent in CPU per operation and held in memory.

use super::held_tables::median_ci_or;
use super::markup::{Section, Table};
use crate::analysis::roles::RoleRow;
use crate::format::num;

/// The section; None when no run ran its roles apart.
pub fn section(rows: &[RoleRow]) -> Option<Section> {
    rows.first()?;
    let mut out = Section::new("The other roles' cost", None);
    out.para("With each role in its own container, the client read the server's and the database's process trees in /proc (it shares this machine's pid namespace) right before `go` and at `done` of every run. *CPU µs per op* is the role's CPU time over the run divided by the operations the cell completed, median over measured runs with its 95% interval: what one operation cost the other side. *PSS MiB* is the role's memory at `done`: the proportional set size summed over its processes, so the pages they share (PostgreSQL's shared buffers) count once. The database's figure includes the work of every connection the cell opened; the server's, the mock server's and the echo server's threads. A service under test, started in the server role's container, is not in this table: its CPU and memory are the run's own (*Services under test*), as without containers.");
    let mut t = Table::new([
        "scenario",
        "variant",
        "python",
        "setting",
        "role",
        "CPU µs per op (95% CI)",
        "PSS MiB",
    ]);
    for r in rows {
        t.row([
            r.scenario.clone(),
            r.variant.clone(),
            r.python.clone(),
            super::decision_section::setting_text(&r.setting).into(),
            r.role.clone(),
            median_ci_or(&r.cpu_us_per_op, "–"),
            num(r.pss_mib.median),
        ]);
    }
    out.table(t);
    Some(out)
}
