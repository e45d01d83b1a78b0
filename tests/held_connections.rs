//! Held connections, checked against a known answer: the memory per held keep-alive connection
//! the lab reads for each server (the `connections` scenario at 1,000 connections) agrees
//! within 10% with scripts/bare_held_connections.py, which starts the same server and holds the
//! same connections with nothing of the lab's (Python sockets, its own /proc reading); and the
//! run leaves no server behind.
//!
//! Both run each server with one worker process. With several, which worker accepts a
//! connection is a race, and a worker the warm-up did not reach starts its threads and grows its
//! heap while the measured connections open: a fixed cost of a few hundred KiB that lands in
//! one reading and not the other by chance, and at 1,000 connections moves either figure by
//! several percent. One worker leaves the two procedures as the only difference.

use crate::common;

use std::path::PathBuf;

use common::*;

/// Connections held.
const HOLD: u64 = 1000;
/// Largest relative difference allowed between the lab's figure and the bare script's.
const TOLERANCE: f64 = 0.10;

/// The Python 3.12 environment `make envs` builds.
fn env_python() -> PathBuf {
    std::fs::read_dir(root().join(".venvs"))
        .expect(".venvs: run `make envs` first")
        .flatten()
        .map(|e| e.path().join("bin/python"))
        .find(|p| {
            p.parent()
                .and_then(|b| b.parent())
                .and_then(|d| d.file_name())
                .is_some_and(|n| n.to_string_lossy().starts_with("cpython-3.12"))
                && p.exists()
        })
        .expect("no .venvs/cpython-3.12*: run `make envs` first")
}

#[test]
fn memory_per_held_connection_agrees_with_a_bare_script_for_every_server() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args(["run", "--scenario", "connections", "--python", "3.12"])
        .args(["--rounds", "1", "--param", &format!("hold={HOLD}")])
        .args(["--param", "workers=1"])
        .args(["--param", "duration_s=1", "--max-foreign-cores", "100"])
        .arg("--out")
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(600))
        .assert()
        .success();
    assert_eq!(
        wait_for_none(std::time::Duration::from_secs(10)),
        Vec::<i32>::new(),
        "server processes left behind after the run"
    );
    let doc = results(&dir);
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let python = env_python();
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6, "every server of the scenario ran");
    for cell in cells {
        let variant = cell["variant"].as_str().unwrap();
        let run = cell["runs"].as_array().unwrap().last().unwrap();
        let held = &run["extra"]["held"];
        let server = &run["extra"]["server"];
        assert_eq!(held["asked"], HOLD, "{variant}");
        let cpus: Vec<String> = server["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.to_string())
            .collect();
        let bare = std::process::Command::new(&python)
            .arg(root().join("scripts/bare_held_connections.py"))
            .args([variant, &HOLD.to_string()])
            .args(["--workers", &server["workers"].to_string()])
            .args(["--threads", &server["threads"].to_string()])
            .args(["--cpus", &cpus.join(",")])
            .output()
            .unwrap();
        assert!(
            bare.status.success(),
            "{variant}: {}",
            String::from_utf8_lossy(&bare.stderr)
        );
        let bare: serde_json::Value = serde_json::from_slice(&bare.stdout).unwrap();
        if variant == "gunicorn_sync" {
            // Its sync workers close every connection after the answer: nothing to hold.
            assert_eq!(held["open_after_idle"], 0, "{variant}: {held}");
            assert_eq!(bare["held"], 0, "{variant}: {bare}");
            assert!(held["kib_per_connection"].is_null(), "{variant}: {held}");
            continue;
        }
        // A gthread worker keeps at most worker_connections - threads (996) alive; every other
        // server holds them all. Either way both must hold the same connections.
        let limit = if variant == "gunicorn_gthread" {
            1000 - server["threads"].as_u64().unwrap()
        } else {
            HOLD
        };
        assert_eq!(held["open_at_end"], limit, "{variant}: {held}");
        assert_eq!(bare["held"], limit, "{variant}: {bare}");
        let lab = held["kib_per_connection"].as_f64().unwrap();
        let own = bare["per_connection_kib"].as_f64().unwrap();
        assert!(
            own > 0.0 && (lab / own - 1.0).abs() <= TOLERANCE,
            "{variant}: the lab read {lab:.2} KiB per held connection, the bare script {own:.2}: more than {:.0}% apart",
            TOLERANCE * 100.0
        );
        eprintln!("{variant}: lab {lab:.2} KiB, bare {own:.2} KiB per held connection");
    }
}
