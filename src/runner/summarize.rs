//! Turns a cell's runs into its summary (medians with intervals, pooled latency percentiles)
//! and the warnings a reader should see.

use super::matrix::CellSpec;
use crate::results::{CellSummary, LatencySummary, RunRecord};
use crate::stats;

/// Summary and warnings of a cell from its measured runs.
pub fn summarize_cell(spec: &CellSpec, runs: &[RunRecord]) -> (CellSummary, Vec<String>) {
    let col = |f: fn(&RunRecord) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
    let throughput = col(|r| r.throughput_per_s);
    let mut latencies: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.latencies_ms.iter().copied())
        .collect();
    latencies.sort_by(f64::total_cmp);
    let latency_ms = (!latencies.is_empty()).then(|| {
        let p = stats::percentiles_sorted(&latencies, &[50.0, 95.0, 99.0, 100.0]);
        LatencySummary {
            kind: runs[0].latency_kind.clone(),
            count: latencies.len(),
            p50: p[0],
            p95: p[1],
            p99: p[2],
            max: p[3],
        }
    });
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
        ops: runs.iter().map(|r| r.ops).sum(),
        errors: runs.iter().map(|r| r.errors).sum(),
    };
    (summary, warnings)
}
