//! The lab's load generator against known answers: Little's law on a server whose every
//! answer takes a fixed time (the Rust mock server), the offered rate kept when the server
//! keeps up, and corrected latency growing past uncorrected when it cannot.

use crate::common::alone;

use std::net::SocketAddr;
use std::time::Duration;

use asynclab::loadgen::{self, Endpoint, Load, Outcome};
use asynclab::services::mock_http::MockHttp;

fn run(load: &Load) -> Outcome {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(loadgen::run(load))
}

fn load(addr: SocketAddr, delay_ms: f64, connections: usize, rate_per_s: f64) -> Load {
    Load {
        addr,
        endpoint: Endpoint::Status {
            path: format!("/delay/{delay_ms}"),
        },
        connections,
        rate_per_s,
        duration: Duration::from_secs(2),
        timeout: Duration::from_secs(10),
    }
}

fn p99(xs: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = xs.collect();
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * 0.99).ceil() as usize).clamp(1, v.len()) - 1]
}

#[test]
fn closed_loop_throughput_obeys_littles_law() {
    let _alone = alone();
    let server = MockHttp::start("127.0.0.1:0".parse().unwrap()).unwrap();
    // 50 connections, each answer 100 ms: at most 50 / 0.1 s = 500 per second. Every request
    // takes at least 100 ms, so 2 s hold at most 20 per connection plus the one in flight.
    let l = load(server.addr(), 100.0, 50, 0.0);
    let out = run(&l);
    assert_eq!(out.errors, 0, "{:?}", out.error_samples);
    let ops = out.samples.len();
    assert!(
        ops <= 50 * 21,
        "{ops} answers: more than 100 ms each allows"
    );
    assert!(
        ops >= 900,
        "{ops} answers: under 90% of Little's bound of 1000"
    );
    assert!(out.samples.iter().all(|s| s.service_ms() >= 100.0));
    assert_eq!(out.connects, 50, "keep-alive: one connection each");
    assert_eq!(server.requests_served() as usize, ops + out.abandoned);
}

#[test]
fn open_loop_keeps_the_offered_rate_when_the_server_keeps_up() {
    let _alone = alone();
    let server = MockHttp::start("127.0.0.1:0".parse().unwrap()).unwrap();
    // 20 connections of 10 ms answers carry up to 2,000 per second; 200 are offered.
    let l = load(server.addr(), 10.0, 20, 200.0);
    let out = run(&l);
    assert_eq!(out.errors + out.abandoned, 0, "{:?}", out.error_samples);
    assert_eq!(out.samples.len(), l.scheduled());
    let achieved = out.achieved_rate_per_s(&l);
    assert!(
        (achieved / 200.0 - 1.0).abs() < 0.05,
        "achieved {achieved}/s of 200/s offered"
    );
    for s in &out.samples {
        assert!(s.corrected_ms() >= s.service_ms());
    }
}

#[test]
fn corrected_latency_grows_past_uncorrected_when_the_server_cannot_keep_up() {
    let _alone = alone();
    let server = MockHttp::start("127.0.0.1:0".parse().unwrap()).unwrap();
    // 2 connections of 50 ms answers carry 40 per second; 100 are offered, so requests queue
    // behind their connection: from its send each still takes about 50 ms, from its intended
    // start ever longer (coordinated omission is what the uncorrected figure hides).
    let l = load(server.addr(), 50.0, 2, 100.0);
    let out = run(&l);
    assert_eq!(out.errors, 0, "{:?}", out.error_samples);
    let corrected = p99(out.samples.iter().map(|s| s.corrected_ms()));
    let uncorrected = p99(out.samples.iter().map(|s| s.service_ms()));
    assert!(uncorrected < 100.0, "uncorrected p99 {uncorrected} ms");
    assert!(
        corrected > 5.0 * uncorrected,
        "corrected p99 {corrected} ms against uncorrected {uncorrected} ms"
    );
    assert!(out.achieved_rate_per_s(&l) < 60.0);
}
