//! A run held to its study's `[thresholds]` (recorded in `invocation.study`): one check per
//! threshold and cell (or, for a ratio, per setting both variants ran in), each with the figure
//! it read. A threshold no cell answers fails: a gate that checks nothing must not pass.

use crate::results::{Cell, CellSummary, Results};
use crate::threshold::{Metric, Subject, Threshold};

/// One threshold against one cell or setting.
#[derive(Debug, Clone, PartialEq)]
pub struct ThresholdCheck {
    /// The scenario.
    pub scenario: String,
    /// The threshold as written back (`asyncio/sync >= 5`).
    pub threshold: String,
    /// The cell (or, for a ratio, the two cells) it read; what was missing when none.
    pub at: String,
    /// The figure it read.
    pub value: Option<f64>,
    /// Whether the threshold held.
    pub passed: bool,
}

/// A cell's figure.
fn figure(s: &CellSummary, metric: Metric) -> Option<f64> {
    Some(match metric {
        Metric::ThroughputPerS => s.throughput_per_s.median,
        Metric::P50Ms => s.latency_ms.as_ref()?.p50,
        Metric::P99Ms => s.latency_ms.as_ref()?.p99,
        Metric::WallS => s.wall_s.median,
        Metric::CpuS => s.cpu_s.median,
        Metric::RssMib => s.peak_rss_delta_mib.median,
    })
}

/// The checks of every threshold the document's study holds, in the study's order.
pub fn check(results: &Results) -> Vec<ThresholdCheck> {
    let Some(inv) = &results.invocation else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (scenario, exprs) in &inv.study.thresholds {
        let cells: Vec<&Cell> = results
            .cells
            .iter()
            .filter(|c| &c.scenario == scenario)
            .collect();
        for text in exprs {
            let Ok(t) = Threshold::parse(text) else {
                continue; // refused when the study was read
            };
            let mut rows = checks_of(&t, &cells);
            if rows.is_empty() {
                rows.push((format!("no cell of {scenario} it applies to"), None));
            }
            for (at, value) in rows {
                out.push(ThresholdCheck {
                    scenario: scenario.clone(),
                    threshold: t.to_string(),
                    passed: value.is_some_and(|v| t.op.holds(v, t.bound)),
                    at,
                    value,
                });
            }
        }
    }
    out
}

/// (where, figure) for each cell or pair `t` reads.
fn checks_of(t: &Threshold, cells: &[&Cell]) -> Vec<(String, Option<f64>)> {
    match &t.subject {
        Subject::Metric { variant, metric } => cells
            .iter()
            .filter(|c| variant.as_ref().is_none_or(|v| &c.variant == v))
            .map(|c| {
                let v = c.summary.as_ref().and_then(|s| figure(s, *metric));
                (c.id.clone(), v)
            })
            .collect(),
        Subject::Ratio(a, b) => cells
            .iter()
            .filter(|c| &c.variant == a)
            .filter_map(|num| {
                let den = cells
                    .iter()
                    .find(|c| &c.variant == b && c.python == num.python && c.group == num.group)?;
                let median = |c: &Cell| c.summary.as_ref().map(|s| s.throughput_per_s.median);
                let v = match (median(num), median(den)) {
                    (Some(n), Some(d)) if d > 0.0 => Some(n / d),
                    _ => None,
                };
                Some((format!("{} over {}", num.id, den.id), v))
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(thresholds: &[(&str, &str)]) -> Results {
        let mut r = crate::results::quick_fixture();
        crate::analysis::summary::derive(&mut r);
        let mut study = crate::study::Study::default();
        for (s, t) in thresholds {
            study
                .thresholds
                .entry(s.to_string())
                .or_default()
                .push(t.to_string());
        }
        r.invocation = Some(crate::results::Invocation {
            argv: Vec::new(),
            cwd: String::new(),
            study,
        });
        r
    }

    #[test]
    fn a_ratio_reads_each_setting_and_a_metric_each_cell() {
        let r = doc(&[
            ("io_http", "asyncio/sync >= 1"),
            ("io_http", "p99_ms < 1e9"),
        ]);
        let checks = check(&r);
        let io: Vec<&Cell> = r.cells.iter().filter(|c| c.scenario == "io_http").collect();
        let ratio: Vec<_> = checks
            .iter()
            .filter(|c| c.threshold.contains('/'))
            .collect();
        assert!(!ratio.is_empty());
        for c in &ratio {
            assert!(c.value.unwrap() > 1.0 && c.passed, "{c:?}");
        }
        let every = checks
            .iter()
            .filter(|c| c.threshold.starts_with("p99"))
            .count();
        assert_eq!(every, io.len());
        let r = doc(&[("io_http", "asyncio/sync < 1")]);
        assert!(check(&r).iter().all(|c| !c.passed));
    }

    #[test]
    fn a_threshold_nothing_answers_fails() {
        let r = doc(&[("io_http", "nosuch.p99_ms < 5")]);
        let checks = check(&r);
        assert_eq!(checks.len(), 1);
        assert!(!checks[0].passed && checks[0].value.is_none());
    }
}
