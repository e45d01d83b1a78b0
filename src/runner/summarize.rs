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
        p50_over_rounds: None,
        p99_over_rounds: None,
    })
}

/// Pooled percentiles of one latency set, with each round's own p50 and p99 summarized over
/// the rounds that recorded any (so the interval reflects round-to-round spread).
fn latency_with_rounds(kind: &str, per_round: &[&[f64]]) -> Option<LatencySummary> {
    let pooled: Vec<f64> = per_round.iter().flat_map(|r| r.iter().copied()).collect();
    let mut s = latency_summary(kind, pooled)?;
    let mut p50s = Vec::new();
    let mut p99s = Vec::new();
    for round in per_round.iter().filter(|r| !r.is_empty()) {
        let mut sorted = round.to_vec();
        sorted.sort_by(f64::total_cmp);
        let p = stats::percentiles_sorted(&sorted, &[50.0, 99.0]);
        p50s.push(p[0]);
        p99s.push(p[1]);
    }
    s.p50_over_rounds = Some(stats::summarize(&p50s));
    s.p99_over_rounds = Some(stats::summarize(&p99s));
    Some(s)
}

///
/// Contaminated runs (the machine interfered) are left out; when no run is clean, all are
/// summarized so the figure is still shown, and the analysis calls the cell inconclusive.
pub fn summarize_cell(spec: &CellSpec, all: &[RunRecord]) -> (CellSummary, Vec<String>) {
    let runs = crate::results::measured_runs(all);
    let clean = all.iter().filter(|r| r.is_clean()).count();
    let rounds_of = |rs: &mut dyn Iterator<Item = &RunRecord>| {
        rs.map(|r| r.round)
            .collect::<std::collections::BTreeSet<_>>()
    };
    let rounds_without_clean_run = rounds_of(&mut all.iter())
        .difference(&rounds_of(&mut all.iter().filter(|r| r.is_clean())))
        .count();
    let col = |f: fn(&RunRecord) -> f64| runs.iter().map(|r| f(r)).collect::<Vec<f64>>();
    let throughput = col(|r| r.throughput_per_s);
    let pooled: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.latencies_ms.iter().copied())
        .collect();
    let latency_hist = stats::hdr::record(&runs[0].latency_kind, &pooled);
    let main_rounds: Vec<&[f64]> = runs.iter().map(|r| r.latencies_ms.as_slice()).collect();
    let latency_ms = latency_with_rounds(&runs[0].latency_kind, &main_rounds);
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
            let per_round: Vec<&[f64]> = runs
                .iter()
                .map(|r| {
                    r.latency_sets_ms
                        .get(name)
                        .map_or(&[][..], |v| v.as_slice())
                })
                .collect();
            latency_with_rounds(name, &per_round).map(|s| (name.clone(), s))
        })
        .collect();
    let mut warnings = stats::warnings(&format!("{} throughput", spec.id), &throughput);
    if spec.check_server_requests {
        for r in &runs {
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
        contaminated_runs: all.len() - clean,
        rounds_without_clean_run,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_percentiles_carry_each_rounds_spread() {
        let fast: Vec<f64> = (1..=100).map(f64::from).collect();
        let slow: Vec<f64> = fast.iter().map(|x| x * 3.0).collect();
        let s = latency_with_rounds("service", &[&fast, &[], &slow]).unwrap();
        assert_eq!(s.count, 200);
        let p99 = s.p99_over_rounds.unwrap();
        // The empty round is left out; each remaining round gives its own p99.
        assert_eq!(p99.n, 2);
        assert!((p99.min - 99.01).abs() < 1e-9, "{p99:?}");
        assert!((p99.max - 297.03).abs() < 1e-9, "{p99:?}");
        let p50 = s.p50_over_rounds.unwrap();
        assert!(p50.min <= s.p50 && s.p50 <= p50.max, "{p50:?} vs {}", s.p50);
    }

    #[test]
    fn no_latencies_no_summary() {
        assert!(latency_with_rounds("service", &[&[], &[]]).is_none());
    }
}
