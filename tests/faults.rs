//! A workload that crashes, aborts, hangs or fails in setup marks its cell failed with the
//! tail of its stderr; the matrix goes on, nothing measured is lost, nothing is left running.
//! SIGINT and SIGTERM stop a run the same way, each reported by name with its own exit code.

use crate::common;

use std::time::{Duration, Instant};

use common::*;

#[test]
fn failing_workloads_mark_their_cells_and_the_matrix_goes_on() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let started = Instant::now();
    let assert = bin()
        .args([
            "run",
            "--scenario",
            "faults",
            "--rounds",
            "2",
            "--warmups",
            "0",
            "--out",
        ])
        .arg(&dir)
        .args(test_workloads_args())
        .timeout(Duration::from_secs(120))
        .assert();
    let output = assert.get_output();
    assert_eq!(
        output.status.code(),
        Some(1),
        "failed cells give exit 1: {output:?}"
    );
    let r = results(&dir);
    let cell = |v: &str| {
        r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["variant"] == v)
            .unwrap()
            .clone()
    };
    assert_eq!(cell("ok")["status"], "ok");
    assert_eq!(
        cell("ok")["runs"].as_array().unwrap().len(),
        2,
        "healthy cell measured every round"
    );
    let failure = |v: &str| cell(v)["failure"].as_str().unwrap_or("").to_string();
    assert!(
        failure("crash").contains("deliberate crash in run"),
        "{}",
        failure("crash")
    );
    assert!(
        failure("crash").contains("marker-crash-stderr"),
        "stderr tail kept: {}",
        failure("crash")
    );
    assert!(
        failure("abort").contains("crashed") && failure("abort").contains("marker-abort-stderr"),
        "{}",
        failure("abort")
    );
    assert!(
        failure("hang").contains("hung") && failure("hang").contains("3 s"),
        "{}",
        failure("hang")
    );
    assert!(
        failure("setup_error").contains("deliberate setup failure"),
        "{}",
        failure("setup_error")
    );
    for v in ["crash", "abort", "hang", "setup_error"] {
        assert_eq!(cell(v)["status"], "failed", "{v}");
        assert_eq!(
            cell(v)["runs"].as_array().unwrap().len(),
            0,
            "{v} is not retried"
        );
    }
    // One hang of 3 s plus start-ups; a second hang round would mean failed cells are retried.
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        processes_with("faults.py").is_empty(),
        "no worker left running"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("hang (failed)"), "{summary}");
    // Written like any file (0666 less the umask the driver inherited), not a temp file's 0600.
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
        .unwrap();
    for f in ["results.json", "summary.md", "results.csv", "report.html"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask, "{f}: {mode:o}");
    }
}

/// Starts a run of the `sleepy` scenario, sends `signal` once its worker runs, and returns the
/// driver's exit code and stderr after checking that it stopped in time, killed its worker and
/// kept the results.
///
/// The worker is found by its script's name, so these runs take turns (one lock).
fn interrupt_a_run(signal: i32, name: &str) -> (Option<i32>, String) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let exe = assert_cmd::cargo::cargo_bin("asynclab");
    let mut child = std::process::Command::new(exe)
        .current_dir(root())
        .args([
            "run",
            "--scenario",
            "sleepy",
            "--rounds",
            "1",
            "--warmups",
            "0",
            "--out",
        ])
        .arg(&dir)
        .args(test_workloads_args())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the worker is running, then send the signal (as a terminal or `kill` would).
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_with("sleepy.py").is_empty() {
        assert!(Instant::now() < deadline, "worker never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "driver did not stop after {name}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(processes_with("sleepy.py").is_empty(), "worker killed");
    assert!(dir.join("results.json").is_file(), "results kept");
    (status.code(), stderr)
}

#[test]
fn ctrl_c_stops_workers_keeps_results_and_exits_130() {
    let (code, stderr) = interrupt_a_run(libc::SIGINT, "Ctrl-C");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted by SIGINT (Ctrl-C)"),
        "{stderr}"
    );
}

#[test]
fn sigterm_stops_workers_keeps_results_and_exits_143() {
    let (code, stderr) = interrupt_a_run(libc::SIGTERM, "SIGTERM");
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM:"), "{stderr}");
    assert!(!stderr.contains("Ctrl-C"), "{stderr}");
}

#[test]
fn setup_and_imports_are_outside_the_timing_and_the_memory_delta() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args([
            "run",
            "--scenario",
            "handshake",
            "--rounds",
            "2",
            "--warmups",
            "0",
            "--out",
        ])
        .arg(&dir)
        .args(test_workloads_args())
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let r = results(&dir);
    for run in r["cells"][0]["runs"].as_array().unwrap() {
        let wall = run["wall_s"].as_f64().unwrap();
        let delta = run["peak_rss_delta_mib"].as_f64().unwrap();
        let baseline = run["baseline_rss_mib"].as_f64().unwrap();
        // The run sleeps 50 ms; setup's 500 ms sleep must not be in it.
        assert!((0.05..0.4).contains(&wall), "wall {wall}");
        // The run touches 32 MiB; setup's 64 MiB belongs to the baseline.
        assert!((28.0..48.0).contains(&delta), "delta {delta} MiB");
        assert!(
            baseline > 64.0,
            "baseline {baseline} MiB includes setup's block"
        );
    }
}
