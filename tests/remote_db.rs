//! The remote database end to end: `db_remote` with a delay line of 5 ms between the workers
//! and a real PostgreSQL, checked against Little's law at that RTT (each request is 3 sequential
//! queries, so no variant can exceed concurrency ÷ (3 × RTT)), the reference client beside it,
//! the schema, and the report's network section; and the network parameters' one-line errors.

use crate::common;

use std::time::Duration;

use common::*;

const RTT_MS: f64 = 5.0;
const CONCURRENCY: f64 = 10.0;
const PER_REQUEST: f64 = 3.0;

/// Requests per second Little's law allows at `RTT_MS`: every request holds its connection for
/// at least three round trips (service time only adds to that).
fn littles_bound_per_s() -> f64 {
    CONCURRENCY / (PER_REQUEST * RTT_MS / 1e3)
}

#[test]
fn db_remote_through_a_5_ms_delay_line_obeys_littles_law() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args([
            "run",
            "--scenario",
            "db_remote",
            "--param",
            "rtt_ms=0,5",
            "--param",
            "concurrency=10",
            "--param",
            "queries=150",
            "--rounds",
            "2",
            "--warmups",
            "0",
            // Correctness, not speed: a busy CI machine must not leave cells inconclusive.
            "--max-foreign-cores",
            "100",
            "--out",
        ])
        .arg(&dir)
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    let r = results(&dir);
    let errors = schema_errors(&r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");

    // One delay line, before PostgreSQL, with the round trip asked.
    let lines = r["method"]["delay_lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["service"], "postgres");
    assert_eq!(lines[0]["rtt_ms"].as_f64(), Some(RTT_MS));

    let bound = littles_bound_per_s();
    let cells = r["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8, "4 variants × 2 RTTs");
    for c in cells {
        assert_eq!(c["status"], "ok", "{}: {}", c["id"], c["failure"]);
        let s = &c["summary"];
        assert_eq!(s["errors"], 0, "{}", c["id"]);
        let rtt = c["params"]["rtt_ms"].as_f64().unwrap();
        let tput = s["throughput_per_s"]["median"].as_f64().unwrap();
        let p50_ms = s["latency_ms"]["p50"].as_f64().unwrap();
        // The fastest request of every run of the cell.
        let fastest = c["runs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|run| run["latencies_ms"].as_array().unwrap().iter())
            .filter_map(|v| v.as_f64())
            .fold(f64::INFINITY, f64::min);
        if rtt == RTT_MS {
            // Never faster than three round trips per request, nor than Little's law allows
            // (2% for the clock edges of a short run).
            assert!(
                fastest >= PER_REQUEST * RTT_MS,
                "{}: a request took {fastest} ms",
                c["id"]
            );
            assert!(
                tput <= bound * 1.02,
                "{}: {tput}/s over Little's bound {bound}/s",
                c["id"]
            );
            // And the line adds its round trip, not several: some request finished within
            // twice its three round trips. (Not "throughput at least half the bound": on a
            // slowed host psycopg3_async ran 311/s against 667/s, its worker, PostgreSQL and
            // the delay line sharing one CPU, a cap of the machine's speed, not of the line.)
            assert!(
                fastest < 2.0 * PER_REQUEST * RTT_MS,
                "{}: the fastest request took {fastest} ms through a {RTT_MS} ms line ({tput}/s)",
                c["id"]
            );
            // The summary's median, computed apart from the runs' samples, agrees.
            assert!(
                p50_ms >= PER_REQUEST * RTT_MS,
                "{}: p50 {p50_ms} ms",
                c["id"]
            );
        } else {
            // Without the delay line no request waits for it: the fastest is quicker than its
            // three round trips through the line would be. (Not "throughput over the line's
            // bound": on a slowed host psycopg3_async at rtt 0 ran 658/s against that 667/s,
            // bound by the one CPU it shares with PostgreSQL, not by any delay.)
            assert!(
                fastest < PER_REQUEST * RTT_MS,
                "{}: the fastest request at rtt 0 took {fastest} ms, as long as {PER_REQUEST} round trips of {RTT_MS} ms ({tput}/s)",
                c["id"]
            );
        }
    }

    // The reference client ran at both settings with the same bound.
    let ceilings = r["ceilings"].as_array().unwrap();
    assert_eq!(ceilings.len(), 2, "{ceilings:?}");
    for rec in ceilings {
        assert_eq!(rec["client"], "tokio-postgres");
        assert!(rec.get("failure").is_none(), "{}", rec["failure"]);
        let t = rec["throughput_per_s"]["median"].as_f64().unwrap();
        if rec["params"]["rtt_ms"].as_f64() == Some(RTT_MS) {
            assert!(t <= bound * 1.02 && t >= bound * 0.5, "reference {t}/s");
        }
        for run in rec["runs"].as_array().unwrap() {
            assert_eq!(run["errors"], 0);
            assert_eq!(run["ops"], 150);
        }
    }

    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("db_remote: throughput against the round trip to the service"),
        "{summary}"
    );
    assert!(summary.contains("crossover"), "{summary}");
    assert!(summary.contains("Rust reference ceiling"));
    let charts: Vec<String> = std::fs::read_dir(dir.join("charts"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        charts
            .iter()
            .any(|n| n.starts_with("network_throughput-db_remote")),
        "{charts:?}"
    );
}

#[test]
fn network_parameters_get_one_line_errors() {
    let _alone = alone();
    for (args, needle) in [
        (["--scenario", "db", "--param", "rtt_ms=-1"], "rtt_ms=-1"),
        (
            ["--scenario", "db", "--param", "jitter_ms=x"],
            "jitter_ms=x",
        ),
        (["--scenario", "cpu", "--param", "rtt_ms=5"], "rtt_ms"),
    ] {
        let assert = bin()
            .arg("run")
            .args(args)
            .arg("--dry-run")
            .timeout(Duration::from_secs(60))
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
