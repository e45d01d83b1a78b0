//! The regression gate end to end: `asynclab compare` on a real 5-round run (two
//! interpreters, `tests/data/results/two_pythons.json`) and on copies of it with one
//! cell made worse or every run jittered.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

const FIXTURE: &str = "tests/data/results/two_pythons.json";
const ASYNCIO_312: &str =
    "io_http/asyncio/3.12.1/bytes=1024,concurrency=50,delay_ms=100,requests=50";

fn fixture() -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(FIXTURE)).unwrap()).unwrap()
}

/// Writes `doc` as `dir/name/results.json` and returns the folder.
fn save(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("results.json"), serde_json::to_vec(doc).unwrap()).unwrap();
    d
}

/// Multiplies `field` of every run of the cell `id` by `factor`.
fn scale_cell(doc: &mut Value, id: &str, field: &str, factor: f64) {
    let cell = doc["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["id"] == id)
        .expect("cell in fixture");
    for run in cell["runs"].as_array_mut().unwrap() {
        let v = run[field].as_f64().unwrap();
        run[field] = Value::from(v * factor);
    }
}

/// Runs `asynclab compare ARGS`; (exit code, stdout).
fn compare(args: &[&str]) -> (i32, String) {
    let out = bin().arg("compare").args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 1, "exit {code}: {stderr}\n{stdout}");
    (code, stdout)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_run_compared_with_itself_passes() {
    let (code, out) = compare(&[FIXTURE, FIXTURE]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("metric: throughput_per_s") && out.contains("higher is better"));
    assert!(out.contains("gate: PASS (16 cell(s) compared"), "{out}");
    assert!(!out.contains("REGRESSION"), "{out}");
}

#[test]
fn one_cell_at_half_throughput_fails_and_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixture();
    scale_cell(&mut doc, ASYNCIO_312, "throughput_per_s", 0.5);
    let new = save(tmp.path(), "new", &doc);
    let (code, out) = compare(&[FIXTURE, path(&new)]);
    assert_eq!(code, 1, "{out}");
    let fail = out.split("gate: FAIL").nth(1).expect("a FAIL summary");
    assert!(fail.contains(ASYNCIO_312), "{out}");
    assert_eq!(fail.matches("REGRESSION").count(), 1, "{out}");
    assert!(fail.contains("-50.0%"), "{out}");
}

#[test]
fn jitter_within_the_threshold_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixture();
    let factors = [1.03, 0.97, 1.02, 0.98, 1.01];
    for cell in doc["cells"].as_array_mut().unwrap() {
        for (i, run) in cell["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
            let v = run["throughput_per_s"].as_f64().unwrap();
            run["throughput_per_s"] = Value::from(v * factors[i % factors.len()]);
        }
    }
    let new = save(tmp.path(), "jittered", &doc);
    let (code, out) = compare(&[FIXTURE, path(&new)]);
    assert_eq!(code, 0, "{out}");
    // The threshold can be tightened below the jitter: then nothing significant is still a pass.
    let (code, out) = compare(&[FIXTURE, path(&new), "--threshold", "0.01"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn wall_time_is_lower_is_better() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixture();
    scale_cell(&mut doc, ASYNCIO_312, "wall_s", 2.0);
    let new = save(tmp.path(), "slow", &doc);
    let (code, out) = compare(&[FIXTURE, path(&new), "--metric", "wall"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("metric: wall_s") && out.contains("lower is better"),
        "{out}"
    );
    assert!(out.contains("+100.0%"), "{out}");
    // Halving wall time is an improvement, never a failure.
    let mut doc = fixture();
    scale_cell(&mut doc, ASYNCIO_312, "wall_s", 0.5);
    let fast = save(tmp.path(), "fast", &doc);
    let (code, out) = compare(&[FIXTURE, path(&fast), "--metric", "wall"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("better (significant)"), "{out}");
}

#[test]
fn two_interpreters_within_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    // Every 3.12 cell given its 3.11 twin's runs: no change; then one of them halved.
    let mut doc = fixture();
    let cells = doc["cells"].as_array().unwrap().clone();
    for cell in doc["cells"].as_array_mut().unwrap() {
        if cell["python"] == "3.12.1" {
            let twin_id = cell["id"].as_str().unwrap().replace("/3.12.1/", "/3.11.7/");
            let twin = cells.iter().find(|c| c["id"] == twin_id.as_str()).unwrap();
            cell["runs"] = twin["runs"].clone();
            cell["status"] = twin["status"].clone();
        }
    }
    let same = save(tmp.path(), "same", &doc);
    let (code, out) = compare(&[path(&same), "--by", "python", "3.11", "3.12"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("paired t test") && out.contains("(3.11.7 → 3.12.1)"),
        "{out}"
    );
    scale_cell(&mut doc, ASYNCIO_312, "throughput_per_s", 0.5);
    let worse = save(tmp.path(), "worse", &doc);
    let (code, out) = compare(&[path(&worse), "--by", "python", "3.11", "3.12"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("gate: FAIL") && out.contains("io_http/asyncio/"),
        "{out}"
    );
}

#[test]
fn ambiguous_or_missing_values_are_usage_errors() {
    let out = bin()
        .args(["compare", FIXTURE, "--by", "python", "3", "3.12"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("--by python") && err.contains("3.11.7, 3.12.1"),
        "{err}"
    );
    let out = bin().args(["compare", FIXTURE]).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("NEW") && err.contains("--by"), "{err}");
}

const OPS_FIXTURE: &str = "tests/data/results/asyncio_ops_four_pythons.json";

/// The asyncio_ops `ops` cell of the interpreter `python` (a version prefix).
fn ops_cell<'a>(doc: &'a mut Value, python: &str) -> &'a mut Value {
    doc["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["variant"] == "ops" && c["python"].as_str().unwrap().starts_with(python))
        .expect("ops cell in fixture")
}

#[test]
fn interpreters_are_compared_per_operation_and_slower_ops_are_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(OPS_FIXTURE)).unwrap()).unwrap();

    // The real run: every operation is its own line, in ns per op, lower is better.
    let real = save(tmp.path(), "real", &doc);
    let (_, out) = compare(&[path(&real), "--by", "python", "3.10", "3.13"]);
    for op in [
        "create_task_await (ns/op)",
        "sleep0 (ns/op)",
        "tcp_echo_round_trip (ns/op)",
    ] {
        assert!(out.contains(op), "{op} missing:\n{out}");
    }
    assert!(out.contains("compared per operation"), "{out}");

    // 3.13 given 3.12's runs, then one operation made 1.5× slower in every run.
    let mut same = doc.clone();
    let runs = ops_cell(&mut same, "3.12")["runs"].clone();
    ops_cell(&mut same, "3.13")["runs"] = runs;
    let base = save(tmp.path(), "same", &same);
    let (code, out) = compare(&[path(&base), "--by", "python", "3.12", "3.13"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("worse than BASE"), "{out}");

    let slow = |factor: f64| {
        let mut d = same.clone();
        for run in ops_cell(&mut d, "3.13")["runs"].as_array_mut().unwrap() {
            let v = &mut run["extra"]["ops"]["create_task_await"]["ns_per_op_median"];
            *v = Value::from(v.as_f64().unwrap() * factor);
        }
        d
    };
    // 1.5x slower is listed (the upgrade gate's list), whether or not these noisy rounds make
    // it significant; twice as slow is beyond every round's spread and fails the gate.
    let worse = save(tmp.path(), "worse", &slow(1.5));
    let (_, out) = compare(&[path(&worse), "--by", "python", "3.12", "3.13"]);
    let listed = out
        .split("worse than BASE")
        .nth(1)
        .expect("a list of slower ops");
    assert!(
        listed.contains("create_task_await (ns/op): +50.0%"),
        "{out}"
    );
    assert!(
        !listed.contains("sleep0"),
        "only the slowed op is listed:\n{out}"
    );
    let twice = save(tmp.path(), "twice", &slow(2.0));
    let (code, out) = compare(&[path(&twice), "--by", "python", "3.12", "3.13"]);
    assert_eq!(code, 1, "{out}");
    let failing = out.split("gate: FAIL").nth(1).expect("the gate fails");
    assert!(failing.contains("create_task_await (ns/op)"), "{out}");

    // 5% slower is within the 10% threshold: not listed, the gate passes.
    let noise = save(tmp.path(), "noise", &slow(1.05));
    let (code, out) = compare(&[path(&noise), "--by", "python", "3.12", "3.13"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("worse than BASE"), "{out}");
}

#[test]
fn markdown_and_json_formats_parse() {
    let (code, out) = compare(&[FIXTURE, FIXTURE, "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let doc: Value = serde_json::from_str(&out).expect("--format json prints one JSON document");
    assert_eq!(doc["metric"], "throughput_per_s");
    assert_eq!(doc["alpha"], 0.05);
    assert_eq!(doc["gate"], "pass");
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(doc["environment_warnings"].as_array().unwrap().len(), 0);
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 16);
    for c in cells {
        assert_eq!(c["ratio"], 1.0, "a run against itself: {c}");
        assert_eq!(c["outcome"], "unchanged");
        assert!(c["label"].as_str().unwrap().contains('/'));
    }
    let (_, md) = compare(&[FIXTURE, FIXTURE, "--format", "markdown"]);
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 16, "{md}");
    assert!(md.contains("| cell | base | new | change (95% CI) | p | rounds | outcome |\n|---|---|---|---|---|---|---|"));
    assert!(rows.iter().all(|r| r.matches(" | ").count() == 6), "{md}");
    assert!(md.contains("**gate: PASS** (16 cell(s) compared)"), "{md}");
}

#[test]
fn alpha_out_of_range_is_one_line() {
    for bad in ["0", "1", "1.5", "-0.1", "nan"] {
        let out = bin()
            .args(["compare", FIXTURE, FIXTURE, &format!("--alpha={bad}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--alpha {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains("--alpha") && err.contains("strictly between 0 and 1"),
            "{err}"
        );
    }
    // A stricter level turns the one significant change of a halved cell into none.
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixture();
    scale_cell(&mut doc, ASYNCIO_312, "throughput_per_s", 0.5);
    let new = save(tmp.path(), "new", &doc);
    let (code, out) = compare(&[FIXTURE, path(&new), "--alpha", "0.001"]);
    assert_eq!(code, 0, "5 vs 5 rounds cannot reach p ≤ 0.001: {out}");
    assert!(out.contains("significant = p ≤ 0.001"), "{out}");
}

#[test]
fn an_environment_difference_is_one_warning_line() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixture();
    let cores = doc["env"]["cores"].as_u64().unwrap();
    doc["env"]["cores"] = (cores * 4).into();
    let new = save(tmp.path(), "new", &doc);
    let (_, out) = compare(&[FIXTURE, path(&new)]);
    let warnings: Vec<&str> = out.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(
        warnings,
        [format!(
            "warning: core count differs: BASE {cores}, NEW {} (parallel variants scale with cores)",
            cores * 4
        )],
        "{out}"
    );
    let (_, json) = compare(&[FIXTURE, path(&new), "--format", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["environment_warnings"].as_array().unwrap().len(), 1);
    let (_, same) = compare(&[FIXTURE, FIXTURE]);
    assert!(!same.contains("warning: "), "{same}");
}
