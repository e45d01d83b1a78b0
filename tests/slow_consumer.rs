//! A slow consumer, checked against rooms whose answer is known by construction: Flask-Sock's
//! room sends under one lock with a blocking send, so a client that stops reading must stall the
//! broadcast for everyone, and the slow client must get every message once it reads; the lab's
//! Rust room hands each client an unbounded queue, so the others must be unaffected and the
//! server must hold what the kernel cannot, never more than it owes. The document meets its
//! schema, the report names both effects, and the run leaves no server behind.

use crate::common;

use common::*;

/// A scenario of the two rooms with one slow consumer among 20 clients, owed 20 × 64 KiB a
/// second: the kernel's socket buffers fill within seconds.
const CATALOGUE: &str = r#"
[[scenario]]
name = "slow_pair"
driver = "loadgen"
title = "A slow consumer on a blocking room and a buffering one"
question = "Does a blocking room stall, and does a buffering one keep what it owes?"
services = []
variants = ["ws_flask_sock", "ws_rust_reference"]
timeout_s = 120
decide_by = "none"
warmups = 0
rounds = 1

[scenario.params]
clients = [20]
slow_clients = 1
message_bytes = 65536
rate_per_s = 20
duration_s = 12
hold_s = 1
warmup_s = 1
drain_s = 3
bound_ms = 100
"#;

/// Allocator and bookkeeping room a server's growth may have beyond what it owes, MiB.
const SLACK_MIB: f64 = 2.0;

#[test]
fn a_blocking_room_stalls_and_a_buffering_one_keeps_what_it_owes() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let catalogue = out.path().join("catalogue.toml");
    std::fs::write(&catalogue, CATALOGUE).unwrap();
    let dir = out.path().join("run");
    let run = bin()
        .args(["run", "--scenario", "slow_pair", "--python", "3.12"])
        .arg("--catalogue")
        .arg(&catalogue)
        .args(["--max-foreign-cores", "100", "--out"])
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(300))
        .assert()
        .success();
    let printed = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    assert_eq!(
        wait_for_none(std::time::Duration::from_secs(10)),
        Vec::<i32>::new(),
        "server processes left behind after the run"
    );
    let doc = results(&dir);
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let run = |variant: &str| -> serde_json::Value {
        let cell = doc["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["variant"] == variant)
            .unwrap_or_else(|| panic!("no cell {variant}"));
        assert_eq!(cell["status"], "ok", "{variant}: {cell}");
        cell["runs"].as_array().unwrap().last().unwrap()["extra"].clone()
    };

    let flask = run("ws_flask_sock");
    let (room, slow) = (&flask["fanout"], &flask["slow_consumer"]);
    assert!(
        room["missing"].as_u64().unwrap() > 0,
        "the blocking room went on delivering: {room}"
    );
    assert!(
        slow["per_second"]["max_delivery_ms"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .is_null(),
        "something of the last second reached the other clients: {slow}"
    );
    assert_eq!(slow["received"], slow["owed"], "{slow}");
    assert_eq!(slow["dropped"], 0, "{slow}");

    let rust = run("ws_rust_reference");
    let (room, slow) = (&rust["fanout"], &rust["slow_consumer"]);
    assert_eq!(room["missing"], 0, "{room}");
    assert!(slow["first_late_s"].is_null(), "{slow}");
    assert_eq!(slow["received"], slow["owed"], "{slow}");
    assert_eq!(slow["dropped"], 0, "{slow}");
    let growth = slow["rss_peak_mib"].as_f64().unwrap() - slow["rss_start_mib"].as_f64().unwrap();
    let owed = slow["owed_mib"].as_f64().unwrap();
    assert!(
        growth > 0.0 && growth <= owed + SLACK_MIB,
        "the buffering room grew {growth:.2} MiB for {owed:.2} MiB owed"
    );

    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    for said in [
        "the broadcast stalled for every client",
        "it waited for the slow client",
        "the other clients were unaffected; it kept what the slow client was owed",
    ] {
        assert!(summary.contains(said), "summary.md does not say {said:?}");
    }
    assert!(
        printed.contains("  ws_flask_sock (sync, Python 3.12")
            && printed.contains("the broadcast stalled for every client"),
        "the terminal summary does not say what the blocking room did:\n{printed}"
    );
}
