//! Open-loop load end to end: a stalling server shows in the corrected p99 and not in the
//! uncorrected one; a `--rates` sweep gives every variant its points and knee, the summary's
//! sweep tables and the load chart; bad `--rates` flags are refused with the fix.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::Value;

fn run(dir: &std::path::Path, extra: &[&str]) -> Value {
    bin()
        .args([
            "run",
            "--scenario",
            "io_http",
            "--rounds",
            "1",
            "--warmups",
            "0",
        ])
        .args(extra)
        .arg("--out")
        .arg(dir)
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    results(dir)
}

fn f(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

/// Every variant with one request in flight, 50 requests/s (interval I = 20 ms) for 3 s: 150
/// requests of 5 ms each, so a variant keeps up with ease. With `stall_every=100`, request 100
/// asks for S = 1000 ms instead. Request 100 + j (j >= 1) was intended at t + j·I but cannot
/// start before t + S, the stall's end, so its corrected latency is at least S − j·I whatever
/// the service time: the stall and the two requests behind it are all >= S − 2I = 960 ms.
/// That is 3 of 150 values, which puts the corrected p99 (linear interpolation at rank
/// 149 × 0.99 = 147.51 of 0..149) at or above 960 ms. Uncorrected, only the stalled request
/// itself is slow, the rank-147 and rank-148 values are ordinary requests, and the p99 stays
/// far below S (bound S/4, generous for a busy machine). Without stalls both latencies are
/// the same request but for the hand-off to a worker and timer lateness: medians within 5 ms.
#[test]
fn a_stalled_server_grows_the_corrected_p99_not_the_uncorrected_one() {
    let _alone = alone();
    let (stall_ms, interval_ms) = (1000.0, 20.0);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let r = run(
        out.as_path(),
        &[
            "--param",
            "rate_per_s=50",
            "--param",
            "duration_s=3",
            "--param",
            "delay_ms=5",
            "--param",
            "concurrency=1",
            "--param",
            "stall_every=0,100",
            "--param",
            "stall_ms=1000",
        ],
    );
    let errors = schema_errors(&r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let cells = r["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8, "4 variants × stall_every 0 and 100");
    for c in cells {
        let id = c["id"].as_str().unwrap();
        assert_eq!(c["status"], "ok", "{id}: {}", c["failure"]);
        let s = &c["summary"];
        assert_eq!(s["errors"], 0, "{id}");
        assert_eq!(s["ops"], 150, "{id}: 50/s × 3 s");
        assert_eq!(s["latency_ms"]["kind"], "open-loop-corrected", "{id}");
        let run = &c["runs"][0];
        assert_eq!(
            run["server_requests"], 150,
            "{id}: the server saw every request"
        );
        assert_eq!(f(run, "/extra/offered_rate_per_s"), 50.0);
        assert_eq!(f(run, "/extra/abandoned"), 0.0, "{id}");

        // The HdrHistogram holds every value and decodes to the stored percentiles.
        let hist = &s["latency_hist"];
        assert_eq!(hist["count"], 150, "{id}");
        let decoded = asynclab::stats::hdr::decode(hist["v2_base64"].as_str().unwrap()).unwrap();
        assert_eq!(decoded.len(), 150);
        let p999_ms = decoded.value_at_quantile(0.999) as f64 / 1000.0;
        assert_eq!(p999_ms, f(hist, "/p99_9_ms"), "{id}");
        assert_eq!(s["latency_sets_hist"]["uncorrected"]["count"], 150, "{id}");

        let corrected_p99 = f(s, "/latency_ms/p99");
        let uncorrected_p99 = f(s, "/latency_sets_ms/uncorrected/p99");
        let (c50, u50) = (
            f(s, "/latency_ms/p50"),
            f(s, "/latency_sets_ms/uncorrected/p50"),
        );
        eprintln!("{id}: corrected p50 {c50:.1} p99 {corrected_p99:.1}, uncorrected p50 {u50:.1} p99 {uncorrected_p99:.1}");
        if c["params"]["stall_every"] == 100 {
            assert!(
                corrected_p99 >= stall_ms - 2.0 * interval_ms,
                "{id}: corrected p99 {corrected_p99:.1} ms < S − 2I"
            );
            assert!(
                uncorrected_p99 < stall_ms / 4.0,
                "{id}: uncorrected p99 {uncorrected_p99:.1} ms should not see the stall"
            );
            assert!(corrected_p99 > 3.0 * uncorrected_p99, "{id}");
        } else {
            assert!(
                (c50 - u50).abs() < 5.0,
                "{id}: without stalls corrected p50 {c50:.2} ≈ uncorrected p50 {u50:.2}"
            );
            assert!(
                corrected_p99 < (stall_ms - 2.0 * interval_ms) / 3.0,
                "{id}: without stalls the corrected p99 {corrected_p99:.1} ms stays low"
            );
        }
    }
}

#[test]
fn a_rate_sweep_gives_each_variant_points_a_knee_a_table_and_a_chart() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    // A variant that reaches its knee and one that does not are what the sweep's tables,
    // knees and chart need; every variant's open-loop latencies are the test above's.
    let r = run(
        out.as_path(),
        &[
            "--rates",
            "10,20,40",
            "--param",
            "duration_s=2",
            "--variants",
            "sync,asyncio",
        ],
    );
    let errors = schema_errors(&r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let sweeps = r["sweeps"].as_array().unwrap();
    let variants: Vec<&str> = sweeps
        .iter()
        .map(|s| s["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["sync", "asyncio"]);
    for s in sweeps {
        let v = s["variant"].as_str().unwrap();
        let offered: Vec<f64> = s["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| f(p, "/offered_rate_per_s"))
            .collect();
        assert_eq!(offered, [10.0, 20.0, 40.0], "{v}");
        assert!(
            s["knee"].is_string() && s.get("knee_rate_per_s").is_some(),
            "{v}"
        );
        assert_eq!(f(s, "/reference_ms"), 100.0, "{v}: the server delay");
        for p in s["points"].as_array().unwrap() {
            let achieved = f(p, "/achieved_rate_per_s");
            assert!(
                achieved <= f(p, "/offered_rate_per_s") * 1.01,
                "{v}: sent faster than scheduled"
            );
        }
    }
    // One request at a time against a 100 ms delay cannot exceed 10/s (Little's law): sync
    // keeps up (within 90%) at 10/s and saturates at 20/s, so its knee is 10/s; asyncio (50 in
    // flight, up to 500/s) keeps up to 40/s, so its knee lies above the rates tried
    // (`--rates auto` doubles until every variant saturates; the README's sweep does).
    assert_eq!(sweeps[0]["knee"], "reached", "{}", sweeps[0]);
    assert_eq!(f(&sweeps[0], "/knee_rate_per_s"), 10.0, "{}", sweeps[0]);
    assert!(f(&sweeps[0], "/points/1/achieved_rate_per_s") <= 10.0 * 1.02);
    for s in &sweeps[1..] {
        assert_eq!(s["knee"], "not_reached", "{s}");
    }

    let md = std::fs::read_to_string(out.as_path().join("summary.md")).unwrap();
    assert!(md.contains("## io_http: open-loop rate sweep"), "{md}");
    assert!(md.contains("**sync** (concurrency=1, Python"), "{md}");
    assert!(md.contains("knee at 10/s (saturated at 20/s)"), "{md}");
    assert_eq!(md.matches("| offered /s | achieved /s |").count(), 2);
    // Open-loop throughput tracks the offered rate, not the variant: nothing to decide.
    assert!(!md.contains("## Decision table"), "{md}");
    // Every pooled percentile carries its round-to-round spread.
    for c in r["cells"].as_array().unwrap() {
        let l = &c["summary"]["latency_ms"];
        assert!(
            f(l, "/p99_over_rounds/min") <= f(l, "/p99_over_rounds/max"),
            "{}",
            c["id"]
        );
    }
    let chart = out.as_path().join("charts/load_sweep-io_http.svg");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("offered rate, requests per second"));
    assert!(out
        .as_path()
        .join("charts/load_sweep-io_http.png")
        .is_file());

    // `report` rebuilds the sweeps and the table from the cells alone, identically.
    bin().arg("report").arg(out.as_path()).assert().success();
    let again = std::fs::read_to_string(out.as_path().join("summary.md")).unwrap();
    assert_eq!(again, md);
    assert_eq!(results(out.as_path())["sweeps"], r["sweeps"]);
}

fn refused(args: &[&str], needles: &[&str]) {
    let out = bin().args(args).assert().failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for n in needles {
        assert!(stderr.contains(n), "{n:?} missing from: {stderr}");
    }
}

#[test]
fn bad_rates_are_refused_with_the_fix() {
    let _alone = alone();
    refused(
        &["run", "--scenario", "io_http", "--rates", "12.5"],
        &["--rates", "'12.5' is not a rate", "--rates auto"],
    );
    refused(
        &["run", "--scenario", "cpu", "--rates", "50"],
        &["--rates", "scenario cpu has no rate_per_s"],
    );
    refused(
        &[
            "run",
            "--scenario",
            "io_http",
            "--rates",
            "50",
            "--param",
            "rate_per_s=10",
        ],
        &["--rates", "--param rate_per_s"],
    );
}
