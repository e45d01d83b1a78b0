//! Subinterpreters as a concurrency model (the `interpreters` variant, Python 3.14's
//! `concurrent.interpreters`): on 3.14 from its Debian root they run the cpu scenario in
//! parallel, faster than threads by what the cores allow and never past them, and an idle one
//! costs the memory a bare script of its own measures; on 3.12 the cells are skipped with the
//! reason.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::Value;

/// The cell of `scenario`/`variant` on the interpreter whose version starts with `python`.
fn cell<'a>(r: &'a Value, scenario: &str, variant: &str, python: &str) -> &'a Value {
    r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["scenario"] == scenario
                && c["variant"] == variant
                && c["python"].as_str().unwrap().starts_with(python)
        })
        .unwrap_or_else(|| panic!("no {scenario}/{variant} cell on {python}"))
}

fn median(c: &Value, figure: &str) -> f64 {
    c["summary"][figure]["median"].as_f64().unwrap()
}

/// Medians of one `extra` figure over a cell's runs.
fn extra_median(c: &Value, key: &str) -> f64 {
    let mut v: Vec<f64> = c["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["extra"][key].as_f64())
        .collect();
    assert!(!v.is_empty(), "{}: no {key}", c["id"]);
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn interpreters_run_in_parallel_on_3_14_cost_what_a_bare_script_sees_and_skip_on_3_12() {
    let _alone = alone();
    bin()
        .args(["pythons", "add", "3.14"])
        .timeout(Duration::from_secs(900))
        .assert()
        .success();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args([
            "run",
            "--scenario",
            "cpu,memory",
            "--python",
            "3.12,3.14",
            // What the checks below read: interpreters, and what they are held against.
            "--variants",
            "interpreters,sync,threads",
            "--param",
            "n=50000",
            "--param",
            "units=100",
            "--rounds",
            "3",
            "--warmups",
            "1",
            "--max-foreign-cores",
            "100",
            "--out",
        ])
        .arg(&dir)
        .timeout(Duration::from_secs(900))
        .assert()
        .success();
    let r = results(&dir);
    assert_eq!(schema_errors(&r), Vec::<String>::new());

    for scenario in ["cpu", "memory"] {
        let old = cell(&r, scenario, "interpreters", "3.12");
        assert_eq!(old["status"], "skipped", "{}", old["id"]);
        let why = old["failure"].as_str().unwrap();
        assert!(why.contains("Python 3.14 or later"), "{why}");
        let new = cell(&r, scenario, "interpreters", "3.14");
        assert_eq!(new["status"], "ok", "{}: {}", new["id"], new["failure"]);
    }

    // Pure-Python work: threads share one GIL, each interpreter has its own.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let interp = cell(&r, "cpu", "interpreters", "3.14");
    let threads = cell(&r, "cpu", "threads", "3.14");
    let workers = interp["runs"][0]["extra"]["workers"].as_f64().unwrap();
    let over_threads = median(interp, "throughput_per_s") / median(threads, "throughput_per_s");
    // Physics: no more than the workers that can run at once.
    if let Err(claim) = within_parallel_limit(
        &dir,
        ("cpu", "3.14"),
        "interpreters",
        "sync",
        workers.min(cores),
    ) {
        panic!("{claim} with {workers} workers on {cores} cores");
    }
    if cores >= 2.0 {
        assert!(
            over_threads > 1.15,
            "interpreters only {over_threads:.2}× threads on {cores} cores"
        );
    }
    assert!(extra_median(interp, "worker_start_ms") > 0.0);
    assert!(extra_median(interp, "call_overhead_us") > 0.0);

    // Memory per idle interpreter: the lab's peak RSS over its baseline against a bare script.
    let mem = cell(&r, "memory", "interpreters", "3.14");
    let units = mem["params"]["units"].as_f64().unwrap();
    let lab_kib = median(mem, "peak_rss_delta_mib") * 1024.0 / units;
    let python = std::fs::read_dir(root().join(".venvs"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("cpython-3.14."))
        })
        .expect("the 3.14 environment the run built")
        .join("bin/python");
    let bare = std::process::Command::new(python)
        .arg(root().join("scripts/bare_interpreters_memory.py"))
        .arg(format!("{units}"))
        .output()
        .unwrap();
    assert!(bare.status.success(), "{bare:?}");
    let bare: Value = serde_json::from_slice(&bare.stdout).unwrap();
    let bare_kib = bare["per_unit_kib"].as_f64().unwrap();
    assert!(
        (lab_kib / bare_kib - 1.0).abs() <= 0.10,
        "lab {lab_kib:.0} KiB per interpreter, bare script {bare_kib:.0} KiB"
    );
}
