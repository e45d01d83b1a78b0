//! A cell's summary (medians with intervals, pooled latency percentiles) and the warnings a
//! reader should see, derived from its measured runs; and [`derive`], which fills every such
//! derived figure of a results document (its cells' summaries and its sweeps).
//!
//! The results document keeps these derived copies for outside readers (docs/protocol.md,
//! "Derived figures"); the lab computes them here only, when a run writes the document and
//! again when a command loads one, so a figure never comes from a stale copy.

use super::measured::MeasuredRuns;
use crate::results::{Cell, CellSummary, LatencySummary, Results, RunRecord};
use crate::stats;

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

/// The summary and warnings of a cell with at least one run, from its measured runs
/// ([`MeasuredRuns`]): when none is clean, all are summarized so the figure is still shown,
/// and the comparisons call the cell inconclusive.
pub fn summarize_cell(cell: &Cell) -> Option<(CellSummary, Vec<String>)> {
    let runs = MeasuredRuns::of(cell);
    if runs.is_empty() {
        return None;
    }
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
    let warnings = round_warnings(cell).into_iter().map(|w| w.text).collect();
    let summary = CellSummary {
        rounds: runs.len(),
        contaminated_runs: runs.contaminated(),
        rounds_without_clean_run: runs.rounds_without_clean_run(),
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
    Some((summary, warnings))
}

/// A cell's warnings about its measured rounds' throughput, by cause (none for a correctness
/// study's); its stored `warnings` are their texts.
pub fn round_warnings(cell: &Cell) -> Vec<stats::RoundWarning> {
    let runs = MeasuredRuns::of(cell);
    // A correctness study's rounds check behaviour; its throughput is never compared.
    if runs.is_empty() || runs.iter().any(|r| r.extra.correctness_rows().is_some()) {
        return Vec::new();
    }
    let throughput: Vec<f64> = runs.iter().map(|r| r.throughput_per_s).collect();
    stats::round_warnings(&format!("{} throughput", cell.id), &throughput)
}

/// Sets a cell's summary and warnings from its runs (none before its first run).
pub fn derive_cell(cell: &mut Cell) {
    let (summary, warnings) = summarize_cell(cell).unzip();
    cell.summary = summary;
    cell.warnings = warnings.unwrap_or_default();
}

/// Reads a results document ([`Results::load`]) and derives its figures again, so every
/// command reads the measurements, never a stored copy of what analysis decides.
pub fn load(dir_or_file: &std::path::Path) -> anyhow::Result<Results> {
    let mut results = Results::load(dir_or_file)?;
    derive(&mut results);
    Ok(results)
}

/// Fills every derived figure of a document from its measurements: each cell's summary and
/// warnings, and the open-loop sweeps.
pub fn derive(results: &mut Results) {
    for c in &mut results.cells {
        derive_cell(c);
    }
    results.sweeps = super::sweep::analyze(&results.cells);
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

#[cfg(test)]
mod derived_copies {
    use super::*;

    /// Every committed results document's stored summaries, warnings and sweeps are exactly
    /// what the analysis derives from its runs: a second implementation, or a rule changed
    /// without the documents, fails here. `ASYNCLAB_REDERIVE=1` rewrites the documents' derived
    /// copies from their runs (measurements untouched) after a deliberate change of rule.
    #[test]
    fn stored_and_derived_copies_agree() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results");
        let mut checked = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let stored = Results::load(&path).unwrap();
            let mut derived = stored.clone();
            derive(&mut derived);
            if std::env::var_os("ASYNCLAB_REDERIVE").is_some() {
                let bytes = crate::export::json::JsonExporter.render(&derived).unwrap();
                std::fs::write(&path, bytes).unwrap();
                checked += 1;
                continue;
            }
            let json = |v: &dyn erased::Json| v.text();
            for (s, d) in stored.cells.iter().zip(&derived.cells) {
                assert_eq!(
                    json(&s.summary),
                    json(&d.summary),
                    "{}: {}",
                    path.display(),
                    s.id
                );
                assert_eq!(s.warnings, d.warnings, "{}: {}", path.display(), s.id);
            }
            assert_eq!(
                json(&stored.sweeps),
                json(&derived.sweeps),
                "{}",
                path.display()
            );
            checked += 1;
        }
        assert!(checked >= 3, "the committed documents: {checked}");
    }

    mod erased {
        /// Serialized as JSON text (NaN-safe: compared as the document stores it).
        pub trait Json {
            fn text(&self) -> String;
        }
        impl<T: serde::Serialize> Json for T {
            fn text(&self) -> String {
                serde_json::to_string(self).unwrap()
            }
        }
    }
}
