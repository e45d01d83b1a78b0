//! The services-under-test section: per cell, the server's workers and database connections,
//! its CPU per request and memory, and the load generator's own CPU share.

use super::markup::{Section, Table};
use crate::analysis::services::{ServiceRow, CLIENT_BUSY_SHARE};
use crate::format::num;

/// The section; None when no run drove a service under test.
pub fn section(rows: &[ServiceRow]) -> Option<Section> {
    let first = rows.first()?;
    let mut out = Section::new(
        "Services under test: cost per request",
        Some(&first.scenario),
    );
    out.para(format!("Each server ran as its own process tree on the CPUs the placement gave it, started afresh for every run and driven by the lab's load generator (src/loadgen) over keep-alive connections. Medians over each cell's measured runs: server CPU per request attempted (its whole tree), the peak of the tree's summed RSS and of its largest process. *generator CPU* is the load generator's largest share of one CPU in any run; above {:.0}% it may have limited what it measured. *connects/request* near 1 means the server closed the connection after every answer (gunicorn's sync workers do), so each request paid a TCP handshake.", CLIENT_BUSY_SHARE * 100.0));
    let mut t = Table::new([
        "variant",
        "python",
        "setting",
        "kind",
        "workers × threads",
        "db conns",
        "CPU ms/request",
        "tree RSS MiB",
        "largest process MiB",
        "generator CPU",
        "connects/request",
    ]);
    for r in rows {
        let busy = if r.client_cpu_share > CLIENT_BUSY_SHARE {
            " (busy)"
        } else {
            ""
        };
        t.row([
            r.variant.clone(),
            r.python.clone(),
            if r.setting.is_empty() {
                "–".into()
            } else {
                r.setting.clone()
            },
            r.kind.clone(),
            format!("{} × {}", r.workers, r.threads),
            r.db_connections.to_string(),
            num(r.cpu_ms_per_request),
            num(r.rss_mib),
            num(r.largest_process_mib),
            format!("{:.0}%{busy}", r.client_cpu_share * 100.0),
            format!("{:.2}", r.connects_per_request),
        ]);
    }
    out.table(t);
    Some(out)
}
