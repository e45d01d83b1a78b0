//! Open-loop rate sweeps: per variant, latency against offered rate, and the knee where the
//! variant saturates.
//!
//! A cell runs open loop when its `rate_per_s` parameter is positive (workloads/openloop.py).
//! Cells that differ only in `rate_per_s` form one [`Sweep`] (scenario × variant × interpreter
//! × the other parameters). A point is **saturated** when the variant did not keep up:
//!
//! * its achieved rate (median over rounds of the worker's `achieved_rate_per_s`, requests
//!   actually sent per second) is below [`ACHIEVED_MIN_FRACTION`] of the offered rate, or
//! * its corrected p99 exceeds [`P99_MAX_FACTOR`] × the reference latency: the scenario's
//!   `delay_ms` (what a request costs at the server; for a service, only on its `upstream`
//!   endpoint) or, without one, the uncorrected p50 at the sweep's lowest rate (at least
//!   [`REFERENCE_FLOOR_MS`]), or
//! * the cell failed or has no measurement.
//!
//! The **knee** is the highest offered rate sustained below the lowest saturated one: `reached`
//! when some rate saturated after a sustained one, `not_reached` when none saturated (the
//! knee lies above the highest rate tried), `below_lowest_rate` when even the lowest did.
//!
//! The sweep types are part of the results document ([`crate::results::Sweep`]). The runner's
//! `--rates auto` batches (`runner::sweep`) are handed this rule by the `run` command; which
//! cells form one sweep ([`sweep_key`]) is the catalogue's.

use std::collections::BTreeMap;

use serde_json::Value;

pub use crate::catalogue::{offered_rate, sweep_key, sweep_rate, SweepKey, RATE_PARAM};
use crate::results::{Cell, CellStatus, Knee, Sweep, SweepPoint};
use crate::stats::median;

/// A point is saturated when it achieved less than this fraction of the offered rate.
pub const ACHIEVED_MIN_FRACTION: f64 = 0.9;
/// ... or when its corrected p99 exceeds this many reference latencies.
pub const P99_MAX_FACTOR: f64 = 10.0;
/// Smallest reference latency when it comes from a measurement (no `delay_ms`), ms.
pub const REFERENCE_FLOOR_MS: f64 = 1.0;

/// One open-loop figure of every measured run that reported it.
fn per_run(cell: &Cell, figure: impl Fn(&crate::extras::Extras) -> Option<f64>) -> Vec<f64> {
    super::measured::MeasuredRuns::of(cell)
        .iter()
        .filter_map(|r| figure(&r.extra))
        .collect()
}

/// A cell's point; saturation is judged later, once the reference is known.
fn point(cell: &Cell, offered: f64) -> SweepPoint {
    let s = cell.summary.as_ref();
    let corrected = s.and_then(|s| s.latency_ms.as_ref());
    let uncorrected = s.and_then(|s| s.latency_sets_ms.get("uncorrected"));
    let achieved = per_run(cell, |e| e.achieved_rate_per_s);
    SweepPoint {
        cell_id: cell.id.clone(),
        offered_rate_per_s: offered,
        achieved_rate_per_s: (!achieved.is_empty()).then(|| median(&achieved)),
        corrected_p50_ms: corrected.map(|l| l.p50),
        corrected_p99_ms: corrected.map(|l| l.p99),
        corrected_p99_9_ms: s.and_then(|s| s.latency_hist.as_ref()).map(|h| h.p99_9_ms),
        uncorrected_p50_ms: uncorrected.map(|l| l.p50),
        uncorrected_p99_ms: uncorrected.map(|l| l.p99),
        abandoned: per_run(cell, |e| e.abandoned.map(|a| a as f64))
            .iter()
            .sum::<f64>() as u64,
        saturated: false,
        reason: None,
    }
}

/// Why a point is saturated, or None when the variant kept up.
pub fn saturation(p: &SweepPoint, reference_ms: Option<f64>, failed: bool) -> Option<String> {
    if failed {
        return Some("the cell failed".into());
    }
    let Some(achieved) = p.achieved_rate_per_s else {
        return Some("no measurement".into());
    };
    if achieved < ACHIEVED_MIN_FRACTION * p.offered_rate_per_s {
        return Some(format!(
            "achieved {:.1}/s, under {:.0}% of the offered {}/s",
            achieved,
            ACHIEVED_MIN_FRACTION * 100.0,
            p.offered_rate_per_s
        ));
    }
    match (p.corrected_p99_ms, reference_ms) {
        (Some(p99), Some(r)) if p99 > P99_MAX_FACTOR * r => Some(format!(
            "corrected p99 {p99:.1} ms, over {P99_MAX_FACTOR} × the reference {r} ms"
        )),
        _ => None,
    }
}

/// Knee, knee rate and first saturated rate of points sorted by rate.
pub fn knee(points: &[SweepPoint]) -> (Knee, Option<f64>, Option<f64>) {
    match points.iter().position(|p| p.saturated) {
        None => (Knee::NotReached, None, None),
        Some(0) => (
            Knee::BelowLowestRate,
            None,
            Some(points[0].offered_rate_per_s),
        ),
        Some(k) => (
            Knee::Reached,
            Some(points[k - 1].offered_rate_per_s),
            Some(points[k].offered_rate_per_s),
        ),
    }
}

/// The fastest knee among `sweeps`, per second, and the sweep it belongs to: a reached knee's
/// sustained rate, or the highest rate a sweep that never saturated carried (its knee is at
/// least that). None when no sweep sustained any rate.
pub fn fastest_knee(sweeps: &[Sweep]) -> Option<(f64, &Sweep)> {
    sweeps
        .iter()
        .filter_map(|s| match s.knee {
            Knee::Reached => s.knee_rate_per_s.map(|r| (r, s)),
            Knee::NotReached => s.points.last().map(|p| (p.offered_rate_per_s, s)),
            Knee::BelowLowestRate => None,
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// What a request costs at the server, ms: the cell's `delay_ms` when its requests wait for it,
/// which a service cell's do only on its `upstream` endpoint (its `/db` and `/cpu` ignore it).
fn server_delay_ms(cell: &Cell) -> Option<f64> {
    let waits = match cell.params.get("endpoint").and_then(Value::as_str) {
        Some(endpoint) => endpoint == "upstream",
        None => true,
    };
    cell.params
        .get("delay_ms")
        .and_then(Value::as_f64)
        .filter(|d| waits && *d > 0.0)
}

/// The sweeps in a set of cells, in first-seen order (skipped cells, closed-loop cells,
/// held-connections cells and sweeps with no measured cell at all are left out; one open-loop cell is a sweep of one
/// point).
pub fn analyze(cells: &[Cell]) -> Vec<Sweep> {
    let mut keys: Vec<SweepKey> = Vec::new();
    let mut groups: BTreeMap<SweepKey, Vec<&Cell>> = BTreeMap::new();
    for c in cells {
        if c.status == CellStatus::Skipped || sweep_rate(&c.params).is_none() {
            continue;
        }
        let key = sweep_key(&c.scenario, &c.variant, &c.python, &c.params);
        if !groups.contains_key(&key) {
            keys.push(key.clone());
        }
        groups.entry(key).or_default().push(c);
    }
    keys.retain(|k| groups[k].iter().any(|c| c.summary.is_some()));
    keys.iter()
        .map(|k| {
            let cells = &groups[k];
            let mut points: Vec<(SweepPoint, bool)> = cells
                .iter()
                .map(|c| {
                    let failed = c.status == CellStatus::Failed || c.summary.is_none();
                    (point(c, sweep_rate(&c.params).unwrap_or(0.0)), failed)
                })
                .collect();
            points.sort_by(|a, b| a.0.offered_rate_per_s.total_cmp(&b.0.offered_rate_per_s));
            let first = cells[0];
            let reference_ms = server_delay_ms(first).or_else(|| {
                points
                    .iter()
                    .find_map(|(p, _)| p.uncorrected_p50_ms)
                    .map(|p50| p50.max(REFERENCE_FLOOR_MS))
            });
            let points: Vec<SweepPoint> = points
                .into_iter()
                .map(|(mut p, failed)| {
                    p.reason = saturation(&p, reference_ms, failed);
                    p.saturated = p.reason.is_some();
                    p
                })
                .collect();
            let (knee, knee_rate_per_s, saturated_rate_per_s) = knee(&points);
            let mut params = first.params.clone();
            params.remove(RATE_PARAM);
            Sweep {
                scenario: first.scenario.clone(),
                variant: first.variant.clone(),
                python: first.python.clone(),
                params,
                reference_ms,
                points,
                knee,
                knee_rate_per_s,
                saturated_rate_per_s,
            }
        })
        .collect()
}

/// The sweeps of `cells` that saturated at some rate: where `--rates auto` stops.
pub fn saturated(cells: &[Cell]) -> Vec<SweepKey> {
    analyze(cells)
        .iter()
        .filter(|s| s.saturated_rate_per_s.is_some())
        .map(|s| sweep_key(&s.scenario, &s.variant, &s.python, &s.params))
        .collect()
}

/// Parameter keys whose values differ between sweeps (what tells them apart in a label).
pub fn varying_params(sweeps: &[&Sweep]) -> Vec<String> {
    let mut keys: Vec<String> = sweeps
        .iter()
        .flat_map(|s| s.params.keys().cloned())
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| {
            sweeps
                .iter()
                .any(|s| s.params.get(k) != sweeps[0].params.get(k))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(params: serde_json::Value) -> Cell {
        serde_json::from_value(serde_json::json!({
            "id": "c", "scenario": "s", "variant": "v", "python": "3.12", "params": params,
            "group": "", "status": "ok", "runs": [], "loop": null, "failure": null,
            "summary": null, "warnings": [],
        }))
        .unwrap()
    }

    #[test]
    fn delay_ms_is_the_reference_only_where_requests_wait_for_it() {
        use serde_json::json;
        assert_eq!(
            server_delay_ms(&cell(json!({"delay_ms": 100}))),
            Some(100.0)
        );
        let upstream = json!({"delay_ms": 100, "endpoint": "upstream"});
        assert_eq!(server_delay_ms(&cell(upstream)), Some(100.0));
        let db = json!({"delay_ms": 100, "endpoint": "db"});
        assert_eq!(server_delay_ms(&cell(db)), None);
        assert_eq!(server_delay_ms(&cell(json!({"delay_ms": 0}))), None);
    }

    fn sweep(variant: &str, rates: &[f64], first_saturated: Option<usize>) -> Sweep {
        let points: Vec<SweepPoint> = rates
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                serde_json::from_value(serde_json::json!({
                    "cell_id": format!("{variant}-{r}"), "offered_rate_per_s": r,
                    "achieved_rate_per_s": r, "abandoned": 0,
                    "saturated": first_saturated.is_some_and(|k| i >= k), "reason": null,
                }))
                .unwrap()
            })
            .collect();
        let (knee, knee_rate_per_s, saturated_rate_per_s) = knee(&points);
        Sweep {
            scenario: "service".into(),
            variant: variant.into(),
            python: "3.12".into(),
            params: BTreeMap::new(),
            reference_ms: None,
            points,
            knee,
            knee_rate_per_s,
            saturated_rate_per_s,
        }
    }

    #[test]
    fn the_fastest_knee_counts_a_sweep_that_never_saturated_at_its_highest_rate() {
        let sweeps = [
            sweep("slow", &[10.0, 20.0, 40.0], Some(2)),
            sweep("fast", &[10.0, 20.0, 40.0, 80.0], Some(3)),
            sweep("at_once", &[10.0, 20.0], Some(0)),
        ];
        let (rate, s) = fastest_knee(&sweeps).unwrap();
        assert_eq!((rate, s.variant.as_str()), (40.0, "fast"));
        let unbounded = [sweeps[0].clone(), sweep("unbounded", &[10.0, 50.0], None)];
        let (rate, s) = fastest_knee(&unbounded).unwrap();
        assert_eq!((rate, s.variant.as_str()), (50.0, "unbounded"));
        assert!(fastest_knee(&sweeps[2..]).is_none());
    }
}
