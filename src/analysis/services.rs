//! Services under test: per cell whose runs carry `extra.server`, what the server cost beside
//! what it served (CPU per request, memory of its tree and of its largest process, its
//! workers, threads and database connections), and what the load generator cost, so a reader
//! sees it was not the bottleneck. Medians over the cell's measured runs. And the crossover:
//! along the round trip to the database (or the upstream's delay), the best sync server
//! against the best async one, and where the lead changes kind.

use std::collections::BTreeMap;

use super::comparison::{self, Comparison, Rule, Verdict};
use super::measured::MeasuredRuns;
use super::resolution::Floors;
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
    /// A WebSocket room's cell: its "requests" are the messages sent into the room, and its
    /// clients connect once each, so connections per request say nothing there.
    pub room: bool,
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
        room: servers.iter().any(|(r, _)| r.extra.fanout.is_some()),
    })
}

/// A service cell's kind (`sync` or `async`), from its runs' server figures; None for a cell
/// without a server under test.
pub fn server_kind(c: &Cell) -> Option<String> {
    c.runs
        .iter()
        .find_map(|r| r.extra.server.as_ref().map(|s| s.kind.clone()))
}

/// The best server of each kind at one value of the axis, and how they compare.
#[derive(Debug, Clone)]
pub struct KindPoint {
    /// The axis value (ms).
    pub at: f64,
    /// The sync server with the highest median throughput there.
    pub best_sync: String,
    /// The async server with the highest median throughput there.
    pub best_async: String,
    /// Best async against best sync, paired by round; None with fewer than two rounds.
    pub async_vs_sync: Option<Comparison>,
}

/// Sync against async servers along one axis (`rtt_ms`: the round trip to the database or
/// upstream; else `delay_ms`: the upstream's delay), at one setting of the other axes.
#[derive(Debug, Clone)]
pub struct KindCrossover {
    /// Scenario name.
    pub scenario: String,
    /// Interpreter version.
    pub python: String,
    /// The other axes' values.
    pub setting: String,
    /// The axis (`rtt_ms` or `delay_ms`), or "" when the scenario has neither as an axis.
    pub axis: String,
    /// One point per axis value, ascending.
    pub points: Vec<KindPoint>,
}

/// The axes a crossover can lie along, in the order they are looked for.
const AXES: [&str; 2] = ["rtt_ms", "delay_ms"];

fn axis_value(c: &Cell, axis: &str) -> f64 {
    c.params
        .get(axis)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
}

/// Per scenario, interpreter and setting with closed-loop service cells of both kinds: the
/// best of each kind at each axis value. Open-loop cells are left to the sweep section.
pub fn kind_crossovers(cells: &[&Cell], rule: Rule, floors: &Floors) -> Vec<KindCrossover> {
    let closed: Vec<&Cell> = cells
        .iter()
        .copied()
        .filter(|c| c.summary.is_some() && server_kind(c).is_some())
        .filter(|c| crate::catalogue::offered_rate(&c.params).is_none())
        .collect();
    let mut groups: BTreeMap<(String, String, String, String), Vec<&Cell>> = BTreeMap::new();
    for c in &closed {
        let axis = AXES
            .iter()
            .find(|a| {
                c.group
                    .split(' ')
                    .any(|kv| kv.starts_with(&format!("{a}=")))
            })
            .map_or("", |a| a);
        let setting = c
            .group
            .split(' ')
            .filter(|kv| {
                !kv.is_empty() && (axis.is_empty() || !kv.starts_with(&format!("{axis}=")))
            })
            .collect::<Vec<_>>()
            .join(" ");
        groups
            .entry((
                c.scenario.clone(),
                c.python.clone(),
                setting,
                axis.to_string(),
            ))
            .or_default()
            .push(c);
    }
    let median = |c: &Cell| {
        c.summary
            .as_ref()
            .map_or(f64::NEG_INFINITY, |s| s.throughput_per_s.median)
    };
    let mut out = Vec::new();
    for ((scenario, python, setting, axis), cs) in groups {
        let mut values: Vec<f64> = cs.iter().map(|c| axis_value(c, &axis)).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let mut points = Vec::new();
        for at in values {
            let best = |kind: &str| {
                cs.iter()
                    .copied()
                    .filter(|c| {
                        axis_value(c, &axis) == at && server_kind(c).as_deref() == Some(kind)
                    })
                    .max_by(|a, b| median(a).total_cmp(&median(b)))
            };
            let (Some(s), Some(a)) = (best("sync"), best("async")) else {
                continue;
            };
            points.push(KindPoint {
                at,
                best_sync: s.variant.clone(),
                best_async: a.variant.clone(),
                async_vs_sync: comparison::throughput_vs(a, s, floors.rule(rule, &a.scenario)),
            });
        }
        if !points.is_empty() {
            out.push(KindCrossover {
                scenario,
                python,
                setting,
                axis,
                points,
            });
        }
    }
    out
}

/// Which kind led significantly at a point: `Some("async")`, `Some("sync")`, or None.
fn leader(p: &KindPoint) -> Option<&'static str> {
    leading_kind(p.async_vs_sync.as_ref())
}

/// The kind an async-over-sync comparison names: `async` or `sync` when its lead is
/// significant, else None. Every table and answer about kinds asks this.
pub fn leading_kind(async_over_sync: Option<&Comparison>) -> Option<&'static str> {
    let c = async_over_sync?;
    c.verdict
        .is_significant()
        .then_some(if c.ratio.ratio > 1.0 { "async" } else { "sync" })
}

/// The finding in one sentence: where async overtakes sync along the axis, or that it does not.
pub fn finding(x: &KindCrossover) -> String {
    let name = |at: f64| {
        if x.axis.is_empty() {
            "here".to_string()
        } else {
            format!("at {} = {}", x.axis, crate::format::rate(at))
        }
    };
    let leads: Vec<(f64, Option<&str>)> = x.points.iter().map(|p| (p.at, leader(p))).collect();
    let first_async = leads.iter().position(|(_, l)| *l == Some("async"));
    let last_sync_before = |i: usize| leads[..i].iter().rev().find(|(_, l)| *l == Some("sync"));
    let top = x.points.last().map_or(0.0, |p| p.at);
    match first_async {
        Some(i) => match last_sync_before(i) {
            Some((at_sync, _)) => format!(
                "Async servers overtake sync ones between {} and {}: sync led significantly {}, async {}.",
                name(*at_sync).trim_start_matches("at "),
                name(leads[i].0).trim_start_matches("at "),
                name(*at_sync),
                name(leads[i].0)
            ),
            None if i == 0 => format!(
                "Async servers led significantly from the lowest setting measured ({}); no crossover to find below it.",
                name(leads[0].0).trim_start_matches("at ")
            ),
            None => format!(
                "Async servers lead significantly from {}; below it no kind led significantly.",
                name(leads[i].0).trim_start_matches("at ")
            ),
        },
        None if leads.iter().any(|(_, l)| *l == Some("sync")) => format!(
            "No crossover up to {}: sync servers led significantly where any kind did.",
            name(top).trim_start_matches("at ")
        ),
        None if x.points.iter().all(|p| {
            p.async_vs_sync
                .as_ref()
                .is_none_or(|c| c.verdict == Verdict::TooFewRounds)
        }) =>
        {
            "Too few rounds to tell which kind leads: no difference could have been significant with this many; raise --rounds.".to_string()
        }
        None => format!(
            "No kind led significantly up to {}: these rounds cannot tell sync and async servers apart there.",
            name(top).trim_start_matches("at ")
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::results::{Cell, RunRecord};
    use serde_json::json;

    /// A closed-loop cell of a `kind` server at `rtt_ms`, five rounds near `tput`.
    fn cell(variant: &str, kind: &str, rtt_ms: f64, tput: f64) -> Cell {
        cell_at(variant, kind, rtt_ms, tput, 1.0)
    }

    /// [`cell`] on `/db` over 100 connections, every request taking `latency_ms`.
    pub(crate) fn cell_at(
        variant: &str,
        kind: &str,
        rtt_ms: f64,
        tput: f64,
        latency_ms: f64,
    ) -> Cell {
        let runs: Vec<RunRecord> = (0..5)
            .map(|round| {
                serde_json::from_value(json!({
                    "round": round, "wall_s": 1.0, "inside_wall_s": 1.0, "cpu_s": 0.1,
                    "baseline_rss_mib": 1.0, "peak_rss_mib": 1.0, "peak_rss_delta_mib": 0.0,
                    "ops": 10, "errors": 0, "server_requests": null,
                    "throughput_per_s": tput * (1.0 + 0.002 * round as f64),
                    "latency_kind": "service",
                    "latencies_ms": [latency_ms * (1.0 + 0.002 * round as f64)], "error_samples": [],
                    "extra": {"server": {"name": variant, "kind": kind, "workers": 1,
                        "threads": 1, "db_pool_per_worker": 1, "cpus": [1], "cpu_s": 1.0,
                        "cpu_ms_per_request": 0.5, "rss_mib": 40.0, "processes": 1,
                        "rss_per_process_mib": [40.0]},
                      "client": {"connections": 100, "connects": 100, "cpu_s": 0.1,
                        "cpu_share": 0.1, "max_start_lag_ms": 0.0}},
                }))
                .unwrap()
            })
            .collect();
        let mut c: Cell = serde_json::from_value(json!({
            "id": format!("service/{variant}/3.12/rtt_ms={rtt_ms}"), "scenario": "service",
            "variant": variant, "python": "3.12", "params": {"rtt_ms": rtt_ms, "rate_per_s": 0, "endpoint": "db", "connections": 100},
            "group": format!("endpoint=db rtt_ms={rtt_ms}"), "status": "ok", "runs": [],
            "loop": null, "failure": null, "summary": null, "warnings": [],
        }))
        .unwrap();
        c.runs = runs;
        super::super::summary::derive_cell(&mut c);
        c
    }

    #[test]
    fn the_crossover_lies_where_the_lead_changes_kind_and_is_not_assumed() {
        let cells = [
            cell("gunicorn_sync", "sync", 0.0, 1000.0),
            cell("uvicorn", "async", 0.0, 700.0),
            cell("gunicorn_sync", "sync", 20.0, 140.0),
            cell("uvicorn", "async", 20.0, 600.0),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let xs = kind_crossovers(&refs, Rule::DEFAULT, &Floors::default());
        assert_eq!(xs.len(), 1);
        let x = &xs[0];
        assert_eq!(
            (x.axis.as_str(), x.setting.as_str()),
            ("rtt_ms", "endpoint=db")
        );
        assert_eq!(x.points.len(), 2);
        let f = finding(x);
        assert!(
            f.contains("overtake sync ones between rtt_ms = 0 and rtt_ms = 20"),
            "{f}"
        );
        // The same cells with the kinds swapped: the finding follows the data.
        let swapped = [
            cell("gunicorn_sync", "sync", 0.0, 700.0),
            cell("uvicorn", "async", 0.0, 1000.0),
            cell("gunicorn_sync", "sync", 20.0, 600.0),
            cell("uvicorn", "async", 20.0, 140.0),
        ];
        let refs: Vec<&Cell> = swapped.iter().collect();
        let f = finding(&kind_crossovers(&refs, Rule::DEFAULT, &Floors::default())[0]);
        assert!(f.contains("from the lowest setting"), "{f}");
        // Equal throughput: no kind leads.
        let equal = [
            cell("gunicorn_sync", "sync", 0.0, 500.0),
            cell("uvicorn", "async", 0.0, 500.0),
        ];
        let refs: Vec<&Cell> = equal.iter().collect();
        let f = finding(&kind_crossovers(&refs, Rule::DEFAULT, &Floors::default())[0]);
        assert!(f.starts_with("No kind led significantly"), "{f}");
    }

    #[test]
    fn service_rows_take_medians_of_the_measured_runs() {
        let c = cell("uvicorn", "async", 0.0, 500.0);
        let rows = rows(&[&c]);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.kind.as_str(), r.workers, r.db_connections),
            ("async", 1, 1)
        );
        assert_eq!((r.cpu_ms_per_request, r.rss_mib), (0.5, 40.0));
        assert!((r.connects_per_request - 10.0).abs() < 1e-9);
    }
}
