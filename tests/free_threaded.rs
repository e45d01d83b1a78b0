//! A free-threaded CPython (3.14t, else 3.13t), where the machine has one: found by `--python
//! 3.14t`, labelled `t` in the results, its workers run with the GIL off, so pure-Python work on
//! threads runs in parallel. Ignored by plain `cargo test`; `.ci/run` runs it where `asynclab
//! doctor` finds such a build and lists it as not run, with the reason, where it does not.

mod common;

use std::time::Duration;

use common::*;

#[test]
#[ignore = "needs a free-threaded CPython (python3.14t or 3.13t; `uv python install 3.14t`): .ci/run runs it where `asynclab doctor` finds one"]
fn threads_run_pure_python_in_parallel_on_a_free_threaded_build() {
    let spec = ["3.14t", "3.13t"]
        .into_iter()
        .find(|v| asynclab::python::find_interpreter(v).is_ok())
        .expect("no free-threaded CPython: this test runs only where one is installed");
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args(["run", "--scenario", "cpu", "--python", spec])
        .args(["--param", "n=50000", "--rounds", "3", "--warmups", "1"])
        .args(["--max-foreign-cores", "100", "--out"])
        .arg(&dir)
        .timeout(Duration::from_secs(1800))
        .assert()
        .success();
    let r = results(&dir);
    assert_eq!(schema_errors(&r), Vec::<String>::new());
    let py = &r["env"]["pythons"][0];
    assert!(py["version"].as_str().unwrap().ends_with('t'), "{py}");
    assert_eq!(py["gil_disabled_build"], true, "{py}");
    assert_eq!(py["gil_enabled"], false, "{py}");
    let cell = |variant: &str| {
        r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["variant"] == variant)
            .unwrap_or_else(|| panic!("no {variant} cell"))
            .clone()
    };
    let throughput = |variant: &str| {
        let c = cell(variant);
        assert_eq!(c["status"], "ok", "{}: {}", c["id"], c["failure"]);
        c["summary"]["throughput_per_s"]["median"].as_f64().unwrap()
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let speedup = throughput("threads") / throughput("sync");
    // Without the GIL, threads are bounded by the cores, not by one.
    if let Err(claim) = within_parallel_limit(&dir, ("cpu", ""), "threads", "sync", cores) {
        panic!("{claim} on {cores} cores");
    }
    if cores >= 2.0 {
        assert!(
            speedup > 1.2,
            "threads only {speedup:.2}× sync with the GIL off"
        );
    }
}
