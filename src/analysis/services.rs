//! Services under test: per cell whose runs carry `extra.server`, what the server cost beside
//! what it served (CPU per request, memory of its tree and of its largest process, its
//! workers, threads and database connections), and what the load generator cost, so a reader
//! sees it was not the bottleneck. Medians over the cell's measured runs.

use super::measured::MeasuredRuns;
use crate::results::Cell;
use crate::stats::median;

/// Above this share of one CPU the load generator may have limited what it measured.
pub const CLIENT_BUSY_SHARE: f64 = 0.8;

/// One cell of a service under test.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceRow {
    /// Scenario name.
    pub scenario: String,
    /// Variant (the server's name).
    pub variant: String,
    /// Interpreter version.
    pub python: String,
    /// The cell's matrix setting (`endpoint=db rtt_ms=20`).
    pub setting: String,
    /// `sync` or `async`.
    pub kind: String,
    /// Worker processes × threads each.
    pub workers: u64,
    /// Threads per worker.
    pub threads: u64,
    /// Database connections the server held in all (per worker × workers).
    pub db_connections: u64,
    /// Median server CPU per request, ms.
    pub cpu_ms_per_request: f64,
    /// Median peak RSS of the server's tree, MiB.
    pub rss_mib: f64,
    /// Median RSS of its largest process, MiB.
    pub largest_process_mib: f64,
    /// The load generator's largest CPU share of one CPU over the runs.
    pub client_cpu_share: f64,
    /// Connections the generator opened per request (near 0 with keep-alive, 1 when the
    /// server closes every connection).
    pub connects_per_request: f64,
}

/// The rows of every cell with a service under test, in document order.
pub fn rows(cells: &[&Cell]) -> Vec<ServiceRow> {
    cells.iter().filter_map(|c| row(c)).collect()
}

fn row(c: &Cell) -> Option<ServiceRow> {
    let runs = MeasuredRuns::of(c);
    let servers: Vec<_> = runs
        .iter()
        .filter_map(|r| r.extra.server.as_ref().map(|s| (r, s)))
        .collect();
    let (_, first) = servers.first()?;
    let med = |f: &dyn Fn(&crate::extras::ServerFigures) -> f64| {
        median(&servers.iter().map(|(_, s)| f(s)).collect::<Vec<_>>())
    };
    let clients: Vec<_> = servers
        .iter()
        .filter_map(|(r, _)| r.extra.client.as_ref().map(|cl| (r, cl)))
        .collect();
    let connects_per_request = median(
        &clients
            .iter()
            .map(|(r, cl)| cl.connects as f64 / (r.ops + r.errors).max(1) as f64)
            .collect::<Vec<_>>(),
    );
    Some(ServiceRow {
        scenario: c.scenario.clone(),
        variant: c.variant.clone(),
        python: c.python.clone(),
        setting: c.group.clone(),
        kind: first.kind.clone(),
        workers: first.workers,
        threads: first.threads,
        db_connections: first.db_pool_per_worker * first.workers,
        cpu_ms_per_request: med(&|s| s.cpu_ms_per_request),
        rss_mib: med(&|s| s.rss_mib),
        largest_process_mib: med(&|s| s.rss_per_process_mib.first().copied().unwrap_or(0.0)),
        client_cpu_share: clients
            .iter()
            .map(|(_, cl)| cl.cpu_share)
            .fold(0.0, f64::max),
        connects_per_request,
    })
}
