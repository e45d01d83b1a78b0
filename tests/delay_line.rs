//! Tests of the delay line (src/services/delay_line.rs) in front of the echo server: the round
//! trip it adds is the one asked (never less, and not a multiple or a fraction of it), jitter has
//! its shape, a thousand concurrent connections lose and reorder nothing, and dropping it closes
//! everything.
//!
//! These bounds catch wrong delays (doubled, one direction only, wrong units), not timer
//! precision: CI shares its cores with the build and the other tests, and saw a 5 ms line's
//! median 0.63 ms over. The accuracy targets (0.2 ms or 5% across 0.5-50 ms, mock p99 overshoot
//! 0.5 ms at 1,000 concurrent) are `make bench`'s self-check, run alone.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use asynclab::services::delay_line::{DelayLine, DelaySpec, JitterShape};
use asynclab::services::echo::EchoServer;

use crate::common::{self, alone};

fn any_port() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// `n` sequential 64-byte round trips through `addr`, in ms, sorted.
fn round_trips_ms(addr: SocketAddr, n: usize) -> Vec<f64> {
    let mut s = connect(addr);
    let msg = [7u8; 64];
    let mut back = [0u8; 64];
    // One untimed exchange: the proxy's upstream connection is made on accept.
    s.write_all(&msg).unwrap();
    s.read_exact(&mut back).unwrap();
    let mut out: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            s.write_all(&msg).unwrap();
            s.read_exact(&mut back).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn the_added_round_trip_is_what_was_asked_from_1_to_50_ms() {
    let _alone = alone();
    let echo = EchoServer::start(any_port()).unwrap();
    let direct = quantile(&round_trips_ms(echo.addr(), 200), 0.5);
    for (rtt_ms, n) in [(1.0, 200), (5.0, 100), (20.0, 40), (50.0, 20)] {
        let spec = DelaySpec::rtt(Duration::from_secs_f64(rtt_ms / 1e3));
        let line = DelayLine::start(any_port(), echo.addr(), spec).unwrap();
        let trips = round_trips_ms(line.addr(), n);
        let p50 = quantile(&trips, 0.5);
        // Never less than asked (a delay line does not deliver early), and beyond the direct
        // loopback round trip at most 2 ms or 20% over it, whichever is larger: far under what a
        // doubled delay would add, far over a busy machine's wake-up lateness (0.1-0.3 ms quiet,
        // 0.63 ms seen under CI's load). The precise bound is `make bench`'s.
        let slack = (2.0f64).max(rtt_ms * 0.2);
        assert!(
            trips[0] >= rtt_ms,
            "{rtt_ms} ms: fastest {:.3} ms",
            trips[0]
        );
        assert!(
            p50 - direct <= rtt_ms + slack,
            "{rtt_ms} ms: p50 {p50:.3} ms (direct {direct:.3} ms), more than {slack} ms over"
        );
        assert_eq!(line.stats().connections.load(Ordering::Relaxed), 1);
    }
}

#[test]
fn uniform_jitter_spreads_round_trips_over_its_range() {
    let _alone = alone();
    let echo = EchoServer::start(any_port()).unwrap();
    // How late this machine delivers a 10 ms round trip now: the same line without jitter.
    // A slowed host put the jittered median 1.5 ms over its 12 ms (13.504) and failed CI on a
    // fixed allowance, so the bounds below are taken from this line's median instead.
    let plain = DelayLine::start(
        any_port(),
        echo.addr(),
        DelaySpec {
            rtt: Duration::from_millis(10),
            jitter: Duration::ZERO,
            shape: JitterShape::Uniform,
            bandwidth_bytes_per_s: None,
        },
    )
    .unwrap();
    let late = (quantile(&round_trips_ms(plain.addr(), 300), 0.5) - 10.0).max(0.0);
    drop(plain);
    // Each direction: 5 ms + U[0, 2 ms]; a round trip is the sum of two: 10–14 ms, median 12.
    let spec = DelaySpec {
        rtt: Duration::from_millis(10),
        jitter: Duration::from_millis(1),
        shape: JitterShape::Uniform,
        bandwidth_bytes_per_s: None,
    };
    let line = DelayLine::start(any_port(), echo.addr(), spec).unwrap();
    let trips = round_trips_ms(line.addr(), 300);
    let (p01, p50, p99) = (
        quantile(&trips, 0.01),
        quantile(&trips, 0.5),
        quantile(&trips, 0.99),
    );
    assert!(trips[0] >= 10.0, "fastest {:.3}", trips[0]);
    // The sum of two uniforms is triangular on [10, 14]: median 12, 1% below 10.57, 1% above
    // 13.43. Jitter on one direction only would put the median at 11 and the p1-p99 spread
    // under 2 ms. Each upper bound is the expected value, the sampling error on 300 draws
    // (0.4 ms at the median, 0.9 ms at the tails), the lateness the plain line measured, and
    // about 0.5 ms more for lateness moving between the two lines: p1 ≤ 10.57 + 0.9 + 0.53 +
    // late, p50 ≤ 12 + 0.4 + 0.6 + late. The lower bounds stay fixed, so a late machine (late
    // over 0.5 ms) no longer tells one-direction jitter by its median. The upper tail has only
    // a floor: lateness gathers there (p99 16.8 ms with two spinning processes beside it).
    assert!(
        (10.0..=12.0 + late).contains(&p01),
        "p1 {p01:.3} (late {late:.3})"
    );
    assert!(
        (11.5..=13.0 + late).contains(&p50),
        "p50 {p50:.3} (late {late:.3})"
    );
    assert!(p99 >= 13.0, "p99 {p99:.3}");
    // Spread, not a shift: without jitter p1 and p99 lie within a few tenths of a ms.
    assert!(p99 - p01 >= 2.0, "p1 {p01:.3} to p99 {p99:.3}: no spread");
}

#[test]
fn a_thousand_concurrent_connections_lose_and_reorder_nothing() {
    let _alone = alone();
    let echo = EchoServer::start(any_port()).unwrap();
    let spec = DelaySpec::rtt(Duration::from_millis(2));
    let line = DelayLine::start(any_port(), echo.addr(), spec).unwrap();
    let addr = line.addr();
    let conns = 1000;
    let bytes = 16 * 1024;
    let handles: Vec<_> = (0..conns)
        .map(|c: usize| {
            std::thread::Builder::new()
                .stack_size(128 * 1024)
                .spawn(move || {
                    let payload: Vec<u8> =
                        (0..bytes).map(|i| ((i * 31 + c * 7) % 251) as u8).collect();
                    let mut s = connect(addr);
                    let mut w = s.try_clone().unwrap();
                    let sent = payload.clone();
                    let writer = std::thread::Builder::new()
                        .stack_size(64 * 1024)
                        .spawn(move || {
                            for chunk in sent.chunks(1000) {
                                w.write_all(chunk).unwrap();
                            }
                        })
                        .unwrap();
                    let mut back = vec![0u8; bytes];
                    s.read_exact(&mut back).unwrap();
                    writer.join().unwrap();
                    back == payload
                })
                .unwrap()
        })
        .collect();
    let intact = handles.into_iter().map(|h| h.join().unwrap());
    assert_eq!(
        intact.filter(|ok| *ok).count(),
        conns,
        "every connection's bytes back, in order"
    );
    let stats = line.stats();
    assert_eq!(stats.connections.load(Ordering::Relaxed), conns as u64);
    assert_eq!(
        stats.bytes_up.load(Ordering::Relaxed),
        (conns * bytes) as u64
    );
    // Every byte that went up came back down (the client read them all before returning).
    let deadline = Instant::now() + Duration::from_secs(5);
    while stats.bytes_down.load(Ordering::Relaxed) < (conns * bytes) as u64
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        stats.bytes_down.load(Ordering::Relaxed),
        (conns * bytes) as u64
    );
    assert_eq!(stats.upstream_failures.load(Ordering::Relaxed), 0);
}

#[test]
fn dropping_it_closes_its_connections_and_its_port() {
    let _alone = alone();
    let echo = EchoServer::start(any_port()).unwrap();
    let line = DelayLine::start(
        any_port(),
        echo.addr(),
        DelaySpec::rtt(Duration::from_millis(1)),
    )
    .unwrap();
    let addr = line.addr();
    let mut s = connect(addr);
    s.write_all(b"ping").unwrap();
    let mut back = [0u8; 4];
    s.read_exact(&mut back).unwrap();
    drop(line);
    let mut rest = Vec::new();
    // The connection ends (EOF or reset), it does not hang.
    let _ = s.read_to_end(&mut rest);
    assert!(TcpStream::connect(addr).is_err(), "the port still accepts");
}

#[test]
fn an_upstream_that_refuses_drops_the_client_and_is_counted() {
    let _alone = alone();
    // A port nothing listens on: bind, read the port, close.
    let dead = std::net::TcpListener::bind(any_port())
        .unwrap()
        .local_addr()
        .unwrap();
    let line =
        DelayLine::start(any_port(), dead, DelaySpec::rtt(Duration::from_millis(1))).unwrap();
    let mut s = connect(line.addr());
    let mut buf = [0u8; 1];
    assert_eq!(s.read(&mut buf).unwrap_or(0), 0, "closed, not served");
    assert_eq!(line.stats().upstream_failures.load(Ordering::Relaxed), 1);
}

#[test]
fn delay_proxy_flags_are_checked_in_one_line() {
    let _alone = alone();
    for (args, want) in [
        (
            &["--upstream", "127.0.0.1:1", "--rtt-ms=-1"][..],
            "--rtt-ms: -1 is not a delay",
        ),
        (
            &["--upstream", "nowhere", "--rtt-ms", "5"][..],
            "--upstream: 'nowhere' is not HOST:PORT",
        ),
        (
            &[
                "--upstream",
                "127.0.0.1:1",
                "--rtt-ms",
                "5",
                "--bandwidth-mbit",
                "0",
            ][..],
            "--bandwidth-mbit: 0 is not a bandwidth",
        ),
    ] {
        let out = common::bin()
            .arg("delay-proxy")
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn delay_proxy_serves_until_ctrl_c_and_says_what_it_carried() {
    let _alone = alone();
    let echo = EchoServer::start(any_port()).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("asynclab"))
        .args([
            "delay-proxy",
            "--upstream",
            &echo.addr().to_string(),
            "--rtt-ms",
            "2",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = Vec::new();
    let mut b = [0u8; 1];
    while out.read(&mut b).unwrap() == 1 && b[0] != b'\n' {
        first.push(b[0]);
    }
    let first = String::from_utf8(first).unwrap();
    let addr: SocketAddr = first
        .split_whitespace()
        .nth(4)
        .and_then(|a| a.trim_end_matches(',').parse().ok())
        .unwrap_or_else(|| panic!("no address in {first:?}"));
    let trips = round_trips_ms(addr, 5);
    assert!(trips[0] >= 2.0, "{trips:?}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        rest.contains("delay line stopped: 1 connections, 384 bytes up"),
        "{rest}"
    );
}
