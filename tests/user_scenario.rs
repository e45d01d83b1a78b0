//! A scenario the lab has never heard of, in a catalogue of its own, gets the report sections
//! its extras call for: per-operation figures give the per-operation table and chart, with no
//! change to the lab.

use crate::common;

use std::time::Duration;

use common::*;

const SCRIPT: &str = r#""""A user's own study: two operations timed per run, reported as per-operation figures."""

import time

import harness


class TwoOps(harness.Workload):
    def __init__(self, params, services):
        super().__init__(params, services)
        self.n = int(params["iterations"])

    def run(self):
        ops = {}
        for name in ("plain_call", "sum_of_ten"):
            start = time.perf_counter_ns()
            for _ in range(self.n):
                if name == "sum_of_ten":
                    sum(range(10))
            ns = (time.perf_counter_ns() - start) / self.n
            ops[name] = {"ns_per_op_median": ns, "ns_per_op_stddev": 0.0, "timing_ok": True}
        return harness.Outcome(ops=len(ops), extra={"ops": ops})


PARAMS = {"iterations": 20000}
VARIANTS = {"ops": TwoOps}
"#;

const CATALOGUE: &str = r#"
[[scenario]]
name = "my_ops"
script = "my_ops.py"
title = "Two operations of my own, per interpreter"
question = "What does sum(range(10)) cost on each interpreter?"
variants = ["ops"]
decide_by = "none"
"#;

#[test]
fn a_new_scenario_with_per_operation_figures_gets_their_table_and_chart() {
    let tmp = tempfile::tempdir().unwrap();
    let wl = tmp.path().join("workloads");
    std::fs::create_dir_all(&wl).unwrap();
    std::fs::write(wl.join("my_ops.py"), SCRIPT).unwrap();
    std::fs::write(wl.join("catalogue.toml"), CATALOGUE).unwrap();
    for shared in [
        "harness.py",
        "harness_models.py",
        "harness_interpreters.py",
        "harness_outcome.py",
        "openloop.py",
    ] {
        std::os::unix::fs::symlink(root().join("workloads").join(shared), wl.join(shared)).unwrap();
    }
    std::os::unix::fs::symlink(
        root().join("tests/data/workloads/requirements"),
        wl.join("requirements"),
    )
    .unwrap();
    let dir = tmp.path().join("run");
    bin()
        .args([
            "run",
            "--scenario",
            "my_ops",
            "--rounds",
            "2",
            "--warmups",
            "0",
        ])
        .arg("--workloads")
        .arg(&wl)
        .args([
            "--venvs",
            "target/test-venvs",
            "--python",
            "3.11,3.12",
            "--out",
        ])
        .arg(&dir)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("## Per-operation cost (my_ops)"), "{md}");
    assert!(
        md.contains("| sum_of_ten |"),
        "the operation has its row: {md}"
    );
    assert!(
        md.contains("What does sum(range(10)) cost"),
        "the catalogue's question reaches the report"
    );
    let charts: Vec<String> = std::fs::read_dir(dir.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        charts
            .iter()
            .any(|c| c.starts_with("ops-python-") && c.ends_with("my_ops.svg")),
        "per-operation chart by interpreter: {charts:?}"
    );
}
