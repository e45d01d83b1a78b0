//! `asynclab cost`: a run's asyncio_ops figures turned into asyncio time per request, per
//! interpreter and event loop, and the share of a request an interpreter upgrade would save.
//!
//! Also the readers of asyncio_ops results (per-operation figures over a cell's runs) that the
//! report's runtime tables share.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use anyhow::Context;
use serde_json::Value;

use crate::cli::CostArgs;
use crate::error::UsageError;
use crate::results::{Cell, CellStatus, Results};
use crate::stats;

/// The scenario whose cells hold per-operation figures.
pub const OPS_SCENARIO: &str = "asyncio_ops";
/// The op names the per-request mix is made of.
pub const TASK_OP: &str = "create_task_await";
/// Queue put/get pair.
pub const QUEUE_OP: &str = "queue_put_get";
/// TCP echo round trip.
pub const ECHO_OP: &str = "tcp_echo_round_trip";

/// One operation's figures in one cell, over the cell's runs (fresh processes).
#[derive(Debug, Clone, PartialEq)]
pub struct OpStats {
    /// Median over runs of each run's median ns per op.
    pub ns_median: f64,
    /// Smallest run median, ns.
    pub ns_min: f64,
    /// Largest run median, ns.
    pub ns_max: f64,
    /// Mean of the run medians, ns.
    pub ns_mean: f64,
    /// Standard deviation of the run medians, ns (0 with one run).
    pub ns_stddev: f64,
    /// Median over runs of the within-run standard deviation (over repetitions), ns.
    pub within_run_stddev_ns: f64,
    /// Median over runs of the ratio to the plain call.
    pub ratio_to_plain_call: Option<f64>,
    /// The doubling change (2x vs 1x iterations) furthest from zero over runs, as a fraction.
    pub doubling_change_worst: f64,
    /// Runs measured.
    pub runs: usize,
    /// Runs in which a set-up check flagged the op.
    pub flagged_runs: usize,
    /// The first flag text seen, when any run was flagged.
    pub flag: Option<String>,
}

fn f64_at(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// Per-op figures of an asyncio_ops `ops` cell, keyed by op name.
pub fn op_stats(cell: &Cell) -> BTreeMap<String, OpStats> {
    let mut per_op: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for run in &cell.runs {
        if let Some(ops) = run.extra.get("ops").and_then(Value::as_object) {
            for (name, row) in ops {
                per_op.entry(name.clone()).or_default().push(row);
            }
        }
    }
    per_op
        .into_iter()
        .filter_map(|(name, rows)| {
            let medians: Vec<f64> = rows
                .iter()
                .filter_map(|r| f64_at(r, "ns_per_op_median"))
                .collect();
            if medians.is_empty() {
                return None;
            }
            let col = |k: &str| rows.iter().filter_map(|r| f64_at(r, k)).collect::<Vec<_>>();
            let ratios = col("ratio_to_plain_call");
            let flagged: Vec<&&Value> = rows
                .iter()
                .filter(|r| r.get("timing_ok").and_then(Value::as_bool) == Some(false))
                .collect();
            let stats =
                OpStats {
                    ns_median: stats::median(&medians),
                    ns_min: medians.iter().copied().fold(f64::INFINITY, f64::min),
                    ns_max: medians.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    ns_mean: stats::mean(&medians),
                    ns_stddev: if medians.len() > 1 {
                        stats::stddev(&medians)
                    } else {
                        0.0
                    },
                    within_run_stddev_ns: stats::median(&col("ns_per_op_stddev")),
                    ratio_to_plain_call: (!ratios.is_empty()).then(|| stats::median(&ratios)),
                    doubling_change_worst: col("doubling_change")
                        .into_iter()
                        .fold(0.0, |w: f64, c| if c.abs() > w.abs() { c } else { w }),
                    runs: medians.len(),
                    flagged_runs: flagged.len(),
                    flag: flagged
                        .first()
                        .and_then(|r| r.get("flag"))
                        .and_then(Value::as_str)
                        .map(String::from),
                };
            Some((name, stats))
        })
        .collect()
}

/// Sort key for op names: the script's order, `gather_N` by N, unknown names last.
pub fn op_order(name: &str) -> (usize, u64, String) {
    const ORDER: &[&str] = &[
        "plain_call",
        "await_coroutine",
        "sleep0",
        "create_task_await",
        "gather_",
        "queue_put_get",
        "lock_acquire_release",
        "tcp_echo_round_trip",
        "asyncio_run_per_call",
    ];
    let rank = ORDER
        .iter()
        .position(|o| name == *o || (o.ends_with('_') && name.starts_with(o)))
        .unwrap_or(ORDER.len());
    let n = name
        .strip_prefix("gather_")
        .and_then(|k| k.parse().ok())
        .unwrap_or(0);
    (rank, n, name.to_string())
}

/// "3.10.13" as numbers, for ordering interpreters (non-numeric parts last).
pub fn version_key(v: &str) -> Vec<u64> {
    v.split(['.', '+', 'a', 'b', 'r', 'c', 't'])
        .map(|p| p.parse().unwrap_or(u64::MAX))
        .collect()
}

/// The event loop of a cell (`asyncio` when the cell has no loop parameter).
pub fn loop_of(cell: &Cell) -> String {
    cell.event_loop.clone().unwrap_or_else(|| "asyncio".into())
}

/// What one request does in asyncio's machinery.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestMix {
    /// Tasks created and awaited.
    pub tasks: u32,
    /// Queue put/get pairs.
    pub queue_ops: u32,
    /// TCP round trips.
    pub round_trips: u32,
}

/// Per-op costs that the mix needs, in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixCosts {
    /// create_task + await.
    pub task_ns: f64,
    /// Queue put/get pair.
    pub queue_ns: f64,
    /// TCP echo round trip.
    pub echo_ns: f64,
}

impl RequestMix {
    /// asyncio time of one request, in µs.
    pub fn per_request_us(&self, c: &MixCosts) -> f64 {
        (f64::from(self.tasks) * c.task_ns
            + f64::from(self.queue_ops) * c.queue_ns
            + f64::from(self.round_trips) * c.echo_ns)
            / 1000.0
    }
}

/// One row of the cost table.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    /// Interpreter version.
    pub python: String,
    /// Event loop.
    pub event_loop: String,
    /// Per-op costs used.
    pub costs: MixCosts,
    /// asyncio time per request, µs.
    pub per_request_us: f64,
    /// The interpreter this row is compared with (same loop).
    pub base_python: String,
    /// µs per request saved against the base (negative: slower).
    pub saved_us: f64,
    /// `saved_us` as a fraction of the request time.
    pub saved_share: f64,
    /// Ops of the mix that a set-up check flagged in some run (their figures are suspect).
    pub flagged: Vec<String>,
}

/// The cost rows of every (python, loop) with asyncio_ops figures; the base is `base` (a
/// version prefix such as "3.10") or the oldest interpreter, per loop.
pub fn cost_rows(
    cells: &[Cell],
    mix: RequestMix,
    request_ms: f64,
    base: Option<&str>,
) -> anyhow::Result<Vec<CostRow>> {
    let mut figures: Vec<(String, String, MixCosts, Vec<String>)> = Vec::new();
    for c in cells.iter().filter(|c| {
        c.scenario == OPS_SCENARIO && c.variant == "ops" && c.status != CellStatus::Skipped
    }) {
        let ops = op_stats(c);
        if ops.is_empty() {
            continue;
        }
        let get = |name: &str| {
            ops.get(name).map(|s| s.ns_median).with_context(|| {
                format!(
                    "{}: no {name} figure; run asyncio_ops with every op (--param ops=all)",
                    c.id
                )
            })
        };
        let costs = MixCosts {
            task_ns: get(TASK_OP)?,
            queue_ns: get(QUEUE_OP)?,
            echo_ns: get(ECHO_OP)?,
        };
        let flagged = [TASK_OP, QUEUE_OP, ECHO_OP]
            .iter()
            .filter(|op| ops.get(**op).is_some_and(|s| s.flagged_runs > 0))
            .map(|op| op.to_string())
            .collect();
        figures.push((c.python.clone(), loop_of(c), costs, flagged));
    }
    if figures.is_empty() {
        anyhow::bail!(
            "no measured asyncio_ops cells; run `asynclab run --scenario asyncio_ops` first"
        );
    }
    figures.sort_by(|a, b| (&a.1, version_key(&a.0)).cmp(&(&b.1, version_key(&b.0))));
    let mut rows = Vec::new();
    for (python, event_loop, costs, flagged) in &figures {
        let same_loop: Vec<_> = figures.iter().filter(|f| &f.1 == event_loop).collect();
        let base_fig = match base {
            Some(b) => same_loop
                .iter()
                .find(|f| f.0 == b || f.0.starts_with(&format!("{b}.")))
                .with_context(|| {
                    format!("--base {b}: no asyncio_ops figures for that interpreter with loop {event_loop}")
                })?,
            None => same_loop[0],
        };
        let per_request_us = mix.per_request_us(costs);
        let saved_us = mix.per_request_us(&base_fig.2) - per_request_us;
        rows.push(CostRow {
            python: python.clone(),
            event_loop: event_loop.clone(),
            costs: *costs,
            per_request_us,
            base_python: base_fig.0.clone(),
            saved_us,
            saved_share: saved_us / (request_ms * 1000.0),
            flagged: flagged.clone(),
        });
    }
    Ok(rows)
}

/// The cost table as Markdown.
pub fn render(rows: &[CostRow], mix: RequestMix, request_ms: f64, source: &str) -> String {
    let num = crate::export::num;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "asyncio time per request = {} × create_task + await + {} × Queue put/get + {} × TCP echo round trip, from the median per-op figures in {source}.\n",
        mix.tasks, mix.queue_ops, mix.round_trips
    );
    let _ = writeln!(out, "| python | loop | create_task + await µs | Queue put/get µs | TCP echo µs | asyncio per request µs | vs base | saved per request µs | share of a {} ms request |", num(request_ms));
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let vs = if r.python == r.base_python {
            "base".to_string()
        } else {
            r.base_python.clone()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {vs} | {} | {:.2}% |",
            r.python,
            r.event_loop,
            num(r.costs.task_ns / 1000.0),
            num(r.costs.queue_ns / 1000.0),
            num(r.costs.echo_ns / 1000.0),
            num(r.per_request_us),
            num(r.saved_us),
            r.saved_share * 100.0
        );
    }
    for r in rows.iter().filter(|r| !r.flagged.is_empty()) {
        let _ = writeln!(
            out,
            "\n⚠ {} {}: a set-up check flagged {} in some run (see summary.md); treat those figures with care.",
            r.python,
            r.event_loop,
            r.flagged.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nInterpreters built differently are compared as builds, not as language versions (see each build's compiler and configure flags in results.json `env.pythons`)."
    );
    out
}

/// `asynclab cost`: loads DIR/results.json and prints the table.
pub fn run(a: &CostArgs) -> anyhow::Result<i32> {
    if !(a.request_ms.is_finite() && a.request_ms > 0.0) {
        return Err(UsageError::Flag {
            flag: "--request-ms",
            message: format!(
                "{} is not a request time; give milliseconds > 0, e.g. --request-ms 20",
                a.request_ms
            ),
        }
        .into());
    }
    let path = if a.dir.is_dir() {
        a.dir.join("results.json")
    } else {
        a.dir.clone()
    };
    let results = load(&path)?;
    let mix = RequestMix {
        tasks: a.tasks,
        queue_ops: a.queue_ops,
        round_trips: a.round_trips,
    };
    let rows = cost_rows(&results.cells, mix, a.request_ms, a.base.as_deref())?;
    print!(
        "{}",
        render(&rows, mix, a.request_ms, &path.display().to_string())
    );
    Ok(0)
}

fn load(path: &Path) -> anyhow::Result<Results> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {}; give a results folder from `asynclab run`",
            path.display()
        )
    })?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not a results document", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An asyncio_ops cell whose runs report the given (task, queue, echo) medians in µs.
    fn cell(python: &str, event_loop: &str, runs: &[(f64, f64, f64)]) -> Cell {
        let runs: Vec<Value> = runs
            .iter()
            .enumerate()
            .map(|(i, (t, q, e))| {
                let op = |us: f64| json!({"ns_per_op_median": us * 1000.0, "ns_per_op_stddev": 1.0, "doubling_change": 0.01, "timing_ok": true, "flag": null});
                json!({"round": i, "wall_s": 1.0, "inside_wall_s": 1.0, "cpu_s": 1.0,
                   "baseline_rss_mib": 1.0, "peak_rss_mib": 1.0, "peak_rss_delta_mib": 0.0,
                   "ops": 1, "errors": 0, "server_requests": null, "throughput_per_s": 1.0,
                   "latency_kind": "service", "latencies_ms": [], "error_samples": [],
                   "extra": {"ops": {TASK_OP: op(*t), QUEUE_OP: op(*q), ECHO_OP: op(*e)}}})
            })
            .collect();
        serde_json::from_value(json!({
            "id": format!("asyncio_ops/ops/{python}/loop={event_loop}"), "scenario": OPS_SCENARIO,
            "variant": "ops", "python": python, "loop": event_loop, "params": {},
            "status": "ok", "failure": null, "runs": runs, "summary": null, "warnings": []
        }))
        .unwrap()
    }

    #[test]
    fn the_published_example_comes_out() {
        // Published: 20 tasks + 40 queue ops + 3 round trips = 380 µs on 3.10, 139 µs on 3.14.
        let mix = RequestMix {
            tasks: 20,
            queue_ops: 40,
            round_trips: 3,
        };
        let cells = vec![
            cell("3.14.0", "asyncio", &[(3.2, 0.41, 19.8)]),
            cell("3.10.13", "asyncio", &[(13.5, 0.89, 24.6)]),
        ];
        let rows = cost_rows(&cells, mix, 20.0, None).unwrap();
        assert_eq!(
            rows[0].python, "3.10.13",
            "ordered by version, oldest first"
        );
        assert!((rows[0].per_request_us - 379.4).abs() < 1e-9);
        assert!((rows[1].per_request_us - 139.8).abs() < 1e-9);
        assert_eq!(rows[1].base_python, "3.10.13");
        assert!((rows[1].saved_us - 239.6).abs() < 1e-9);
        assert!((rows[1].saved_share - 239.6 / 20_000.0).abs() < 1e-12);
        assert_eq!(rows[0].saved_us, 0.0);
        let text = render(&rows, mix, 20.0, "service");
        assert!(
            text.contains(
                "| 3.14.0 | asyncio | 3.20 | 0.410 | 19.8 | 140 | 3.10.13 | 240 | 1.20% |"
            ),
            "{text}"
        );
    }

    #[test]
    fn medians_over_runs_and_bases_per_loop() {
        let mix = RequestMix {
            tasks: 1,
            queue_ops: 2,
            round_trips: 1,
        };
        let cells = vec![
            cell(
                "3.12.1",
                "asyncio",
                &[(5.0, 1.0, 20.0), (7.0, 1.0, 20.0), (6.0, 1.0, 20.0)],
            ),
            cell("3.11.7", "asyncio", &[(8.0, 1.0, 22.0)]),
            cell("3.12.1", "uvloop", &[(4.0, 1.0, 10.0)]),
            cell("3.11.7", "uvloop", &[(4.0, 1.0, 12.0)]),
        ];
        let rows = cost_rows(&cells, mix, 10.0, None).unwrap();
        let key: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.python.as_str(), r.event_loop.as_str()))
            .collect();
        assert_eq!(
            key,
            [
                ("3.11.7", "asyncio"),
                ("3.12.1", "asyncio"),
                ("3.11.7", "uvloop"),
                ("3.12.1", "uvloop")
            ]
        );
        // 3.12 asyncio: median task 6 µs: 6 + 2 + 20 = 28 µs vs 8 + 2 + 22 = 32 µs.
        assert!((rows[1].per_request_us - 28.0).abs() < 1e-9);
        assert!((rows[1].saved_us - 4.0).abs() < 1e-9);
        assert!((rows[1].saved_share - 4.0 / 10_000.0).abs() < 1e-12);
        // uvloop rows compare with uvloop on the base interpreter.
        assert_eq!(rows[3].base_python, "3.11.7");
        assert!((rows[3].saved_us - 2.0).abs() < 1e-9);
        // An explicit base; a base without figures is an error naming the flag.
        let rows = cost_rows(&cells, mix, 10.0, Some("3.12")).unwrap();
        assert!(
            (rows[0].saved_us + 4.0).abs() < 1e-9,
            "3.11 is slower than the 3.12 base"
        );
        let err = cost_rows(&cells, mix, 10.0, Some("3.9")).unwrap_err();
        assert!(err.to_string().contains("--base 3.9"), "{err}");
    }

    #[test]
    fn missing_figures_are_errors_that_say_what_to_run() {
        let mix = RequestMix {
            tasks: 1,
            queue_ops: 1,
            round_trips: 1,
        };
        let err = cost_rows(&[], mix, 20.0, None).unwrap_err().to_string();
        assert!(err.contains("--scenario asyncio_ops"), "{err}");
        let mut c = cell("3.12.1", "asyncio", &[(1.0, 1.0, 1.0)]);
        c.runs[0].extra["ops"]
            .as_object_mut()
            .unwrap()
            .remove(ECHO_OP);
        let err = cost_rows(&[c], mix, 20.0, None).unwrap_err().to_string();
        assert!(err.contains("tcp_echo_round_trip"), "{err}");
    }

    #[test]
    fn op_stats_summarise_runs_and_flags() {
        let mut c = cell("3.12.1", "asyncio", &[(1.0, 2.0, 3.0), (3.0, 2.0, 3.0)]);
        c.runs[1].extra["ops"][TASK_OP]["timing_ok"] = json!(false);
        c.runs[1].extra["ops"][TASK_OP]["flag"] = json!("times set-up");
        c.runs[1].extra["ops"][TASK_OP]["doubling_change"] = json!(-0.2);
        let s = &op_stats(&c)[TASK_OP];
        assert_eq!(
            (s.ns_median, s.ns_min, s.ns_max, s.runs),
            (2000.0, 1000.0, 3000.0, 2)
        );
        assert_eq!(
            (s.flagged_runs, s.flag.as_deref()),
            (1, Some("times set-up"))
        );
        assert_eq!(s.doubling_change_worst, -0.2);
        let mut names = vec![
            "tcp_echo_round_trip",
            "gather_100000",
            "plain_call",
            "gather_100",
            "zz",
        ];
        names.sort_by_key(|n| op_order(n));
        assert_eq!(
            names,
            [
                "plain_call",
                "gather_100",
                "gather_100000",
                "tcp_echo_round_trip",
                "zz"
            ]
        );
        assert!(version_key("3.10.13") > version_key("3.9.18"));
    }
}
