//! A results document as a pyperf 2.x benchmark suite (`pyperf compare_to`, `stats`, `hist`
//! read it): one benchmark per cell, named by the cell id, one pyperf run per clean run of
//! the cell with one value each, **wall seconds per operation** (`wall_s / ops`, unit
//! `second`; metadata `asynclab_value` says so). Contaminated runs are left out, as in every
//! summary; the lab keeps no warm-up values, so no run has `warmups`. Cells without a clean
//! run with operations (failed, skipped, inconclusive throughout) get no benchmark: pyperf
//! needs at least one value.
//!
//! Layout (pyperf's `_bench.py`, format version "1.0"): `{"version": "1.0", "metadata":
//! {...}, "benchmarks": [{"metadata": {"name": ..., "unit": "second", ...}, "runs":
//! [{"metadata": {...}, "values": [...]}]}]}`. Metadata values are non-empty one-line strings
//! or numbers.

use serde_json::{json, Map, Value};

use crate::analysis::measured::MeasuredRuns;
use crate::results::{Cell, Results};

/// What every value is, in the benchmarks' metadata.
pub const VALUE_MEANING: &str = "wall seconds per operation (wall_s / ops) of one clean run";

/// One-line, non-empty metadata text (pyperf rejects newlines and empty strings).
fn text(s: &str) -> Option<Value> {
    let one = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!one.is_empty()).then_some(Value::String(one))
}

fn put(m: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        m.insert(key.into(), v);
    }
}

/// The benchmark of one cell; None without a clean run that completed operations (pyperf has
/// no way to mark a busy machine's figures inconclusive, so they are not exported).
fn benchmark(doc: &Results, c: &Cell) -> Option<Value> {
    let measured = MeasuredRuns::of(c);
    let runs: Vec<Value> = measured
        .iter()
        .filter(|_| measured.clean())
        .filter(|r| r.ops > 0 && r.wall_s > 0.0)
        .map(|r| {
            json!({
                "metadata": {"asynclab_round": r.round, "loops": 1, "duration": r.wall_s},
                "values": [r.wall_s / r.ops as f64],
            })
        })
        .collect();
    if runs.is_empty() {
        return None;
    }
    let mut m = Map::new();
    put(&mut m, "name", text(&c.id));
    m.insert("unit".into(), "second".into());
    m.insert("asynclab_value".into(), VALUE_MEANING.into());
    put(&mut m, "asynclab_scenario", text(&c.scenario));
    put(&mut m, "asynclab_variant", text(&c.variant));
    put(&mut m, "python_version", text(&c.python));
    if let Some(p) = doc.env.pythons.iter().find(|p| p.version == c.python) {
        put(&mut m, "python_implementation", text(&p.implementation));
        put(&mut m, "python_executable", text(&p.executable));
        put(&mut m, "python_compiler", text(&p.compiler));
    }
    Some(json!({"metadata": m, "runs": runs}))
}

/// The suite: the machine's metadata and one benchmark per cell with clean runs.
pub fn suite(doc: &Results) -> Value {
    let e = &doc.env;
    let mut m = Map::new();
    put(&mut m, "cpu_model_name", text(&e.cpu_model));
    m.insert("cpu_count".into(), e.cores.into());
    put(&mut m, "platform", text(&format!("Linux-{}", e.kernel)));
    put(&mut m, "date", text(&doc.started_at));
    put(&mut m, "asynclab_generated_by", text(&doc.generated_by));
    put(&mut m, "asynclab_git_commit", text(&e.git_commit));
    put(
        &mut m,
        "asynclab_postgres",
        e.postgres.as_deref().and_then(text),
    );
    m.insert("asynclab_rounds".into(), doc.method.rounds.into());
    m.insert(
        "asynclab_quick".into(),
        (if doc.method.quick { "yes" } else { "no" }).into(),
    );
    let benchmarks: Vec<Value> = doc.cells.iter().filter_map(|c| benchmark(doc, c)).collect();
    json!({"version": "1.0", "metadata": m, "benchmarks": benchmarks})
}

/// The cells left out of the suite (no clean run with operations), by id.
pub fn left_out(doc: &Results) -> Vec<&str> {
    doc.cells
        .iter()
        .filter(|c| benchmark(doc, c).is_none())
        .map(|c| c.id.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_benchmark_per_cell_and_one_value_per_clean_run() {
        let mut doc = crate::results::quick_fixture();
        let s = suite(&doc);
        assert_eq!(s["version"], "1.0");
        let b = s["benchmarks"].as_array().unwrap();
        assert_eq!(b.len(), doc.cells.len());
        let first = doc.cells[0].clone();
        assert_eq!(b[0]["metadata"]["name"], first.id.as_str());
        assert_eq!(b[0]["metadata"]["unit"], "second");
        let runs = b[0]["runs"].as_array().unwrap();
        assert_eq!(runs.len(), first.runs.len());
        let v = runs[0]["values"][0].as_f64().unwrap();
        assert!((v - first.runs[0].wall_s / first.runs[0].ops as f64).abs() < 1e-12);
        // A contaminated run is no value.
        doc.cells[0].runs[0].interference = Some(crate::results::Interference {
            foreign_cpu_s: 2.0,
            foreign_cores: 0.5,
            steal_s: 0.0,
            kernel_cpu_s: 0.0,
            involuntary_switches: 0,
            probe_before_ms: 5.0,
            probe_after_ms: 5.0,
            contaminated: true,
            reason: Some("busy".into()),
        });
        let s = suite(&doc);
        assert_eq!(
            s["benchmarks"][0]["runs"].as_array().unwrap().len(),
            first.runs.len() - 1
        );
    }
}
