//! Turns a cell's runs into its summary (medians with intervals, pooled latency percentiles)
//! and the warnings a reader should see.

use super::matrix::CellSpec;
use crate::results::{CellSummary, LatencySummary, RunRecord};
use crate::stats;

/// Summary and warnings of a cell from its measured runs.
/// Percentiles of pooled latencies (unsorted input), or None when there are none.
pub fn latency_summary(kind: &str, mut latencies: Vec<f64>) -> Option<LatencySummary> {
    if latencies.is_empty() {
        return None;
    }
    latencies.sort_by(f64::total_cmp);
    let p = stats::percentiles_sorted(&latencies, &[50.0, 95.0, 99.0, 100.0]);
    Some(LatencySummary {
        kind: kind.to_string(),
        count: latencies.len(),
        p50: p[0],
        p95: p[1],
        p99: p[2],
        max: p[3],
    })
}

pub fn summarize_cell(spec: &CellSpec, runs: &[RunRecord]) -> (CellSummary, Vec<String>) {
    let col = |f: fn(&RunRecord) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
    let throughput = col(|r| r.throughput_per_s);
    let pooled: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.latencies_ms.iter().copied())
        .collect();
    let latency_hist = stats::hdr::record(&runs[0].latency_kind, &pooled);
    let latency_ms = latency_summary(&runs[0].latency_kind, pooled);
    let mut names: Vec<&String> = runs.iter().flat_map(|r| r.latency_sets_ms.keys()).collect();
    names.sort();
    names.dedup();
    let latency_sets_hist = names
        .iter()
        .filter_map(|name| {
            let pooled: Vec<f64> = runs
                .iter()
                .flat_map(|r| r.latency_sets_ms.get(*name).into_iter().flatten().copied())
                .collect();
            stats::hdr::record(name, &pooled).map(|h| ((*name).clone(), h))
        })
        .collect();
    let latency_sets_ms = names
        .into_iter()
        .filter_map(|name| {
            let pooled = runs
                .iter()
                .flat_map(|r| r.latency_sets_ms.get(name).into_iter().flatten().copied())
                .collect();
            latency_summary(name, pooled).map(|s| (name.clone(), s))
        })
        .collect();
    let mut warnings = stats::warnings(&format!("{} throughput", spec.id), &throughput);
    if spec.check_server_requests {
        for r in runs {
            if let Some(served) = r.server_requests {
                if served != r.ops + r.errors {
                    warnings.push(format!(
                        "{}: round {} reported {} requests but the mock server served {} — the variant's count is not trustworthy",
                        spec.id,
                        r.round + 1,
                        r.ops + r.errors,
                        served
                    ));
                }
            }
        }
    }
    let summary = CellSummary {
        rounds: runs.len(),
        throughput_per_s: stats::summarize(&throughput),
        wall_s: stats::summarize(&col(|r| r.wall_s)),
        cpu_s: stats::summarize(&col(|r| r.cpu_s)),
        peak_rss_delta_mib: stats::summarize(&col(|r| r.peak_rss_delta_mib)),
        latency_ms,
        latency_sets_ms,
        latency_hist,
        latency_sets_hist,
        ops: runs.iter().map(|r| r.ops).sum(),
        errors: runs.iter().map(|r| r.errors).sum(),
    };
    (summary, warnings)
}
