//! Services under test end to end: real gunicorn and uvicorn servers driven by the lab's load
//! generator against the mock upstream, checked against Little's law, and nothing of them
//! left running after a normal end, a Ctrl-C or a SIGKILL of the driver. A catalogue of the
//! test's own names built-in servers, as a user's would.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// The upstream's delay, ms: every request to `/upstream` takes at least this long.
const DELAY_MS: f64 = 100.0;
/// Connections the generator holds.
const CONNECTIONS: usize = 100;

/// A catalogue with one `loadgen` scenario over `variants`, closed loop on `/upstream`.
fn catalogue(dir: &Path, variants: &[&str], duration_s: f64) -> PathBuf {
    let list: Vec<String> = variants.iter().map(|v| format!("\"{v}\"")).collect();
    let text = format!(
        r#"[[scenario]]
name = "svc_test"
driver = "loadgen"
title = "services under test, the test's own"
services = ["http"]
variants = [{}]
timeout_s = 60

[scenario.params]
endpoint = "upstream"
delay_ms = {DELAY_MS}
bytes = 64
connections = {CONNECTIONS}
rate_per_s = 0
duration_s = {duration_s}
warmup_s = 0.5
"#,
        list.join(", ")
    );
    let path = dir.join("catalogue.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `run` of the test catalogue's scenario, one round, no warm-up, into `out`.
fn run_args(cat: &Path, out: &Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = ["run", "--scenario", "svc_test", "--warmups", "0"]
        .map(Into::into)
        .to_vec();
    args.extend(["--catalogue".into(), cat.into(), "--out".into(), out.into()]);
    args
}

#[test]
fn upstream_calls_obey_littles_law_and_no_server_survives_the_run() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    // 4 s: the run's fixed costs (connecting, the last calls draining) stay a few percent of it.
    let cat = catalogue(tmp.path(), &["gunicorn_sync", "uvicorn"], 4.0);
    let dir = tmp.path().join("run");
    bin()
        .args(run_args(&cat, &dir))
        .args(["--rounds", "2"])
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let left = wait_for_none(Duration::from_secs(2));
    assert!(left.is_empty(), "server processes left: {left:?}");
    let r = results(&dir);
    let errors = schema_errors(&r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    for c in r["cells"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        assert_eq!(c["status"], "ok", "{id}: {}", c["failure"]);
        for run in c["runs"].as_array().unwrap() {
            let server = &run["extra"]["server"];
            let workers = server["workers"].as_f64().unwrap();
            let threads = server["threads"].as_f64().unwrap();
            let wall = run["inside_wall_s"].as_f64().unwrap();
            let done = run["ops"].as_f64().unwrap() + run["errors"].as_f64().unwrap();
            assert_eq!(run["errors"], 0, "{id}: {}", run["error_samples"]);
            // Every request holds a worker (thread) of a sync server for the whole delay, so
            // W workers answer at most W per delay, plus the ones in flight at the end.
            let in_flight = (workers * threads).min(CONNECTIONS as f64);
            let sync_bound = in_flight * (wall * 1000.0 / DELAY_MS + 1.0);
            match server["kind"].as_str().unwrap() {
                "sync" => assert!(
                    done <= sync_bound,
                    "{id}: {done} answers in {wall:.2} s, above {sync_bound} that {in_flight} workers allow"
                ),
                _ => {
                    // An async worker holds all 100 connections' calls at once: Little's law
                    // gives 100 / 0.1 s, unless its CPU cannot keep up, which its own CPU
                    // share then shows.
                    let bound = CONNECTIONS as f64 * 1000.0 / DELAY_MS;
                    let rate = done / wall;
                    let cpu = server["cpu_s"].as_f64().unwrap() / wall;
                    assert!(
                        rate >= 0.9 * bound || cpu > 0.9,
                        "{id}: {rate:.0}/s, under 90% of Little's bound {bound}/s with its CPU {:.0}% busy",
                        cpu * 100.0
                    );
                }
            }
        }
    }
}

/// Starts a run of uvicorn that lasts long enough to be interrupted, and waits until its
/// server is up.
fn start_long_run(tmp: &Path) -> std::process::Child {
    let cat = catalogue(tmp, &["uvicorn"], 30.0);
    let child = Command::new(env!("CARGO_BIN_EXE_asynclab"))
        .current_dir(root())
        .args(run_args(&cat, &tmp.join("run")))
        .args(["--rounds", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while servers_left().is_empty() {
        assert!(Instant::now() < deadline, "no server started within 120 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Past start-up and warm-up, into the timed load.
    std::thread::sleep(Duration::from_secs(3));
    child
}

#[test]
fn ctrl_c_stops_the_server_under_test() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    let mut child = start_long_run(tmp.path());
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let left = wait_for_none(Duration::from_secs(2));
    assert!(
        left.is_empty(),
        "server processes left after Ctrl-C: {left:?}"
    );
}

#[test]
fn a_sigkilled_drivers_servers_are_gone_by_the_next_start() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    let mut child = start_long_run(tmp.path());
    // SAFETY: signalling the child this test started; no Drop guard of it runs.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
    // The worker and the server's root die with their parents (PR_SET_PDEATHSIG); whatever
    // outlived them is the next run's to sweep.
    let next = tmp.path().join("next");
    std::fs::create_dir_all(&next).unwrap();
    let cat = catalogue(&next, &["uvicorn"], 0.5);
    bin()
        .args(run_args(&cat, &next.join("run")))
        .args(["--rounds", "1"])
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let left = wait_for_none(Duration::from_secs(2));
    assert!(
        left.is_empty(),
        "server processes left after a SIGKILL and a new run: {left:?}"
    );
}
