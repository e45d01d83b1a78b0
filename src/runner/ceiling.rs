//! The ceiling beside a scenario's cells: a Rust reference client (src/reference/) run with the
//! load of each setting (every variant's cells with the same parameters), through the same
//! delay line, on the workers' CPUs, after the scenario's interleaved rounds (so the services are
//! warm: no warm-up run), up to once per round: a setting stops at two runs once its runs have
//! taken [`REFERENCE_TIME`]: a Rust client's closed-loop throughput barely moves between runs,
//! while a slow setting's runs can take most of a scenario's time (docs/delay-line.md).
//!
//! A scenario asks for it with `ceiling = "postgres"` (tokio-postgres: db.py's requests of
//! `queries_per_request` point selects) or `ceiling = "http"` (reqwest: io_http.py's GETs of
//! `/delay/{delay_ms}?bytes={bytes}`). Open-loop cells (`rate_per_s` > 0) and cells with fewer
//! connections than workers (`pool_size`) have no closed-loop equivalent and get none.

use std::collections::BTreeMap;

use serde_json::Value;

use super::matrix::{CellSpec, Network};
use super::process::Routes;
use crate::reference::{self, CeilingRun, ClosedLoop};
use crate::results::CeilingRecord;

/// What the reference client runs against.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    /// GETs of this path and query on the mock server.
    Http(String),
    /// Requests of this many point selects on PostgreSQL.
    Postgres(u64),
}

/// One setting's reference run, decided from the cells.
#[derive(Debug, Clone)]
pub struct CeilingPlan {
    /// Scenario name.
    pub scenario: String,
    /// The parameters the setting's cells share.
    pub params: BTreeMap<String, Value>,
    target: Target,
    load: ClosedLoop,
    network: Option<Network>,
    cpus: Vec<usize>,
}

fn int(params: &BTreeMap<String, Value>, key: &str, default: u64) -> u64 {
    params.get(key).and_then(Value::as_u64).unwrap_or(default)
}

/// The reference runs a scenario's cells call for (one per distinct parameter set), for its
/// catalogue `ceiling`; none when it has none.
pub fn plans(scenario: &str, ceiling: Option<&str>, specs: &[CellSpec]) -> Vec<CeilingPlan> {
    let mut out: Vec<CeilingPlan> = Vec::new();
    for spec in specs {
        if out.iter().any(|p| p.params == spec.params) {
            continue;
        }
        let p = &spec.params;
        let open_loop = p.get("rate_per_s").and_then(Value::as_f64).unwrap_or(0.0) > 0.0;
        let concurrency = int(p, "concurrency", 1).max(1);
        let pool = int(p, "pool_size", 0);
        if open_loop || (pool != 0 && pool != concurrency) {
            continue;
        }
        let (target, ops) = match ceiling {
            Some("postgres") => (
                Target::Postgres(int(p, "queries_per_request", 1).max(1)),
                int(p, "queries", 0),
            ),
            Some("http") => (
                Target::Http(format!(
                    "/delay/{}?bytes={}",
                    p.get("delay_ms")
                        .map(Value::to_string)
                        .unwrap_or("0".into()),
                    int(p, "bytes", 0)
                )),
                int(p, "requests", 0),
            ),
            _ => return Vec::new(),
        };
        out.push(CeilingPlan {
            scenario: scenario.to_string(),
            params: spec.params.clone(),
            target,
            load: ClosedLoop {
                ops,
                concurrency: concurrency as usize,
            },
            network: spec.network,
            cpus: spec.cpus.clone(),
        });
    }
    out
}

impl CeilingPlan {
    /// The client's name, for the report.
    pub fn client(&self) -> &'static str {
        match self.target {
            Target::Http(_) => "reqwest",
            Target::Postgres(_) => "tokio-postgres",
        }
    }

    /// One run on a thread pinned to the workers' CPUs (the client's runtime threads inherit
    /// the mask), through the cell's route.
    pub fn run_once(&self, routes: &Routes) -> anyhow::Result<CeilingRun> {
        let addrs = routes
            .for_network(self.network)
            .ok_or_else(|| anyhow::anyhow!("no delay line for the reference client"))?;
        let (target, load, cpus) = (self.target.clone(), self.load, self.cpus.clone());
        let (http, db) = (addrs.http_url.clone(), addrs.database_url.clone());
        std::thread::spawn(move || {
            if !cpus.is_empty() {
                crate::affinity::pin_this_thread(&cpus)?;
            }
            match target {
                Target::Http(path) => {
                    let base =
                        http.ok_or_else(|| anyhow::anyhow!("the mock server is not running"))?;
                    reference::http(&format!("{base}{path}"), load)
                }
                Target::Postgres(k) => {
                    let url = db.ok_or_else(|| anyhow::anyhow!("PostgreSQL is not running"))?;
                    reference::postgres::requests(&url, load, k)
                }
            }
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the reference client panicked"))?
    }
}

/// The reference runs' time after which a setting with two runs has enough.
pub const REFERENCE_TIME: std::time::Duration = std::time::Duration::from_secs(8);

/// Runs every plan up to `rounds` times, plans interleaved within each round; a plan stops at
/// two runs once they took [`REFERENCE_TIME`], and a plan whose run fails keeps the failure and
/// runs no more.
pub fn measure(plans: &[CeilingPlan], routes: &Routes, rounds: usize) -> Vec<CeilingRecord> {
    let mut records: Vec<CeilingRecord> = plans
        .iter()
        .map(|p| CeilingRecord {
            scenario: p.scenario.clone(),
            params: p.params.clone(),
            client: p.client().into(),
            runs: Vec::new(),
            throughput_per_s: None,
            failure: None,
        })
        .collect();
    for _ in 0..rounds {
        for (plan, record) in plans.iter().zip(records.iter_mut()) {
            if record.failure.is_some() || crate::interrupt::check().is_err() || enough(record) {
                continue;
            }
            match plan.run_once(routes) {
                Ok(run) => record.runs.push(run),
                Err(e) => record.failure = Some(format!("{e:#}")),
            }
        }
    }
    for r in &mut records {
        let t: Vec<f64> = r.runs.iter().map(|x| x.throughput_per_s).collect();
        r.throughput_per_s = (!t.is_empty()).then(|| crate::stats::summarize(&t));
    }
    records
}

/// Whether a setting's reference runs suffice: two or more that took [`REFERENCE_TIME`].
fn enough(record: &CeilingRecord) -> bool {
    let spent: f64 = record.runs.iter().map(|r| r.wall_s).sum();
    record.runs.len() >= 2 && spent >= REFERENCE_TIME.as_secs_f64()
}
