//! The asyncio runtime study end to end: asyncio_ops with the deliberately mis-timed case (it
//! must be flagged), the pyperf cross-check and `asynclab cost`; event_loops with a loop that is
//! not installed (skipped, not failed) and CPU pinning; the behaviour checks; flag errors.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::Value;

fn cells(r: &Value) -> &Vec<Value> {
    r["cells"].as_array().unwrap()
}

#[test]
fn asyncio_ops_flags_the_mistimed_case_and_reports_pyperf_and_cost() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let params = [
        "min_time_ms=10",
        "repetitions=2",
        "gather_large=1000",
        "include_mistimed=true",
        "pyperf_processes=1",
        "pyperf_values=1",
    ];
    let mut cmd = bin();
    // What is checked here is each op's figures, not the machine: a busy machine must not turn
    // the cell inconclusive (tests/interference.rs tests that).
    cmd.args(["run", "--scenario", "asyncio_ops", "--rounds", "2"])
        .args(["--max-foreign-cores", "100", "--out"])
        .arg(&dir);
    for p in params {
        cmd.args(["--param", p]);
    }
    cmd.timeout(Duration::from_secs(600)).assert().success();
    let r = results(&dir);
    assert!(schema_errors(&r).is_empty(), "{:#?}", schema_errors(&r));
    let variants: Vec<&str> = cells(&r)
        .iter()
        .map(|c| c["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["ops", "pyperf"]);
    for c in cells(&r) {
        let id = c["id"].as_str().unwrap();
        assert_eq!(c["status"], "ok", "{id}: {}", c["failure"]);
        assert_eq!(c["loop"], "asyncio", "{id}");
        assert!(c["python"].as_str().unwrap().starts_with("3."), "{id}");
        assert_eq!(c["runs"].as_array().unwrap().len(), 2, "{id}");
    }
    assert_eq!(r["method"]["warmups"], 0, "asyncio_ops's catalogue default");
    let ops_cell = &cells(&r)[0];
    for run in ops_cell["runs"].as_array().unwrap() {
        let ops = &run["extra"]["ops"];
        // The loop created inside the timed region must be flagged, in every run.
        let mistimed = &ops["asyncio_run_per_call"];
        assert_eq!(mistimed["timing_ok"], false, "{mistimed}");
        assert_eq!(mistimed["same_work_ok"], false, "{mistimed}");
        assert!(mistimed["same_work_ratio"].as_f64().unwrap() > 1.25);
        for name in [
            "plain_call",
            "create_task_await",
            "queue_put_get",
            "tcp_echo_round_trip",
        ] {
            let row = &ops[name];
            assert!(row["ns_per_op_median"].as_f64().unwrap() > 0.0, "{name}");
            assert!(row["timed_ms_min"].as_f64().unwrap() >= 10.0, "{name}");
            assert!(row["doubling_ok"].is_boolean(), "{name}");
        }
    }
    let pyperf = &cells(&r)[1]["runs"][0]["extra"]["benchmarks"];
    assert!(pyperf["create_task_await"]["mean_ns"].as_f64().unwrap() > 0.0);
    assert!(pyperf["sleep0"]["mean_ns"].as_f64().unwrap() > 0.0);

    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    for needle in [
        "## Per-operation cost (asyncio_ops)",
        "⚠ asyncio.run() per call (deliberately mis-timed) on",
        "times set-up",
        "pyperf cross-check",
        "| create_task + await |",
        "builds, not language versions",
    ] {
        assert!(md.contains(needle), "summary.md lacks {needle:?}:\n{md}");
    }

    let cost = bin()
        .args([
            "cost",
            "--tasks",
            "20",
            "--queue-ops",
            "40",
            "--round-trips",
            "3",
        ])
        .arg(&dir)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&cost.get_output().stdout).to_string();
    let python = ops_cell["python"].as_str().unwrap();
    assert!(
        text.contains(&format!("| {python} | asyncio |")) && text.contains("| base |"),
        "{text}"
    );
}

#[test]
fn event_loops_skip_a_loop_that_is_not_installed_and_pin_cpus() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args([
            "run",
            "--scenario",
            "event_loops",
            "--loop",
            "asyncio,zuvloop",
            "--cpus",
            "0",
            "--rounds",
            "1",
            "--param",
            "callbacks=5000",
            "--param",
            "tasks=2000",
            "--param",
            "batch=500",
            "--param",
            "round_trips=100",
            "--out",
        ])
        .arg(&dir)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let r = results(&dir);
    assert!(schema_errors(&r).is_empty(), "{:#?}", schema_errors(&r));
    assert_eq!(r["method"]["cpus"], serde_json::json!([0]));
    assert_eq!(r["method"]["warmups"], 2, "event_loops's catalogue default");
    assert_eq!(cells(&r).len(), 10, "5 workloads × 2 loops");
    for c in cells(&r) {
        let id = c["id"].as_str().unwrap();
        match c["loop"].as_str().unwrap() {
            "asyncio" => {
                assert_eq!(c["status"], "ok", "{id}: {}", c["failure"]);
                let extra = &c["runs"][0]["extra"];
                assert_eq!(extra["cpus"], serde_json::json!([0]), "{id}: pinned");
                assert!(extra["elapsed_ms"].as_f64().unwrap() > 0.0, "{id}");
                if c["variant"].as_str().unwrap().starts_with("tcp_echo") {
                    assert_eq!(
                        extra["streams"], "asyncio.streams.open_connection",
                        "{id}: asyncio's own streams"
                    );
                }
            }
            "zuvloop" => {
                assert_eq!(c["status"], "skipped", "{id}");
                let why = c["failure"].as_str().unwrap();
                assert!(
                    why.starts_with("loop zuvloop is not installed") && why.contains("3.14"),
                    "{why}"
                );
                assert!(c["runs"].as_array().unwrap().is_empty());
            }
            other => panic!("unexpected loop {other}"),
        }
    }
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("## Event loops (event_loops)"), "{md}");
    assert!(md.contains("zuvloop skipped on "), "{md}");
}

#[test]
fn behaviour_checks_all_hold_and_show_as_rows() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args(["run", "--scenario", "asyncio_behaviour", "--out"])
        .arg(&dir)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let r = results(&dir);
    let c = &cells(&r)[0];
    assert_eq!(c["status"], "ok", "{}", c["failure"]);
    let rows = c["runs"][0]["extra"]["rows"].as_array().unwrap();
    assert!(rows.len() >= 10);
    assert!(rows.iter().all(|row| row["ok"] == true), "{rows:#?}");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("Correctness rows (checks on Python"), "{md}");
    assert!(
        md.contains("| gather: the siblings after the first error |"),
        "{md}"
    );
    assert!(!md.contains("| **NO** |"), "{md}");
}

#[test]
fn bad_loop_and_cpu_flags_name_the_flag() {
    let _alone = alone();
    let cases: [(&[&str], &str); 3] = [
        (&["--loop", "uvlop"], "--loop: unknown event loop 'uvlop'"),
        (
            &["--loop", "uvloop", "--param", "loop=asyncio"],
            "--loop: given together with --param loop",
        ),
        (&["--cpus", "4096"], "--cpus: CPU 4096 does not exist"),
    ];
    for (flags, expected) in cases {
        let out = bin()
            .args(["run", "--scenario", "event_loops"])
            .args(flags)
            .assert()
            .failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(expected), "{flags:?}: {err}");
    }
    let empty = tempfile::tempdir().unwrap();
    let out = bin().arg("cost").arg(empty.path()).assert().failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("cannot read"), "{err}");
}
