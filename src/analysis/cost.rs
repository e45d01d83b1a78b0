//! What `asynclab cost` computes: asyncio time per request from per-operation figures, per
//! interpreter and event loop, and the share of a request an interpreter upgrade would save.

use anyhow::Context;

use super::ops::{has_ops, loop_of, op_stats, version_key};
use crate::results::{Cell, CellStatus};

/// The op names the per-request mix is made of.
pub const TASK_OP: &str = "create_task_await";
/// Queue put/get pair.
pub const QUEUE_OP: &str = "queue_put_get";
/// TCP echo round trip.
pub const ECHO_OP: &str = "tcp_echo_round_trip";

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
    for c in cells
        .iter()
        .filter(|c| has_ops(c) && c.status != CellStatus::Skipped)
    {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ops::{op_order, op_stats};
    use crate::results::Cell;
    use serde_json::{json, Value};

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
            "id": format!("asyncio_ops/ops/{python}/loop={event_loop}"), "scenario": "asyncio_ops",
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
        c.runs[0].extra.ops.as_mut().unwrap().remove(ECHO_OP);
        let err = cost_rows(&[c], mix, 20.0, None).unwrap_err().to_string();
        assert!(err.contains("tcp_echo_round_trip"), "{err}");
    }

    #[test]
    fn op_stats_summarise_runs_and_flags() {
        let mut c = cell("3.12.1", "asyncio", &[(1.0, 2.0, 3.0), (3.0, 2.0, 3.0)]);
        let op = c.runs[1]
            .extra
            .ops
            .as_mut()
            .unwrap()
            .get_mut(TASK_OP)
            .unwrap();
        op.timing_ok = Some(false);
        op.flag = Some("times set-up".into());
        op.doubling_change = Some(-0.2);
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
