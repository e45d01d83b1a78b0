//! Tests of the Rust reference clients (issue 12's ceiling): Little's law against the mock
//! server, one-line errors for unreachable targets, and an exact checksum against a real local
//! PostgreSQL cluster.

use crate::common::alone;

use std::net::{Ipv4Addr, SocketAddr};

use asynclab::reference::{self, ClosedLoop};
use asynclab::services::mock_http::MockHttp;
use asynclab::services::postgres::{PgBackend, Postgres};

/// A loopback port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn http_throughput_obeys_littles_law() {
    let _alone = alone();
    let server = MockHttp::start(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).unwrap();
    let url = format!("{}/delay/10?bytes=1024", server.url());
    let load = ClosedLoop {
        ops: 400,
        concurrency: 20,
    };
    let run = reference::http(&url, load).expect("reference http run");
    eprintln!(
        "http ceiling: {:.0} ops/s over {:.3} s, p50 {:.2} ms, p99 {:.2} ms, {} worker threads, \
         {} connections accepted",
        run.throughput_per_s,
        run.wall_s,
        run.latency_p50_ms,
        run.latency_p99_ms,
        run.worker_threads,
        server.connections_accepted()
    );
    assert_eq!(run.ops, 400, "{run:?}");
    assert_eq!(run.errors, 0, "{run:?}");
    assert_eq!(run.first_error, None);
    assert_eq!(run.checksum, 400 * 1024, "every body read in full");
    // Warm-up is one request per connection slot, then exactly the timed ops.
    assert_eq!(server.requests_served(), 20 + 400);
    // Little's law: 20 requests in flight, each at least 10 ms, give at most 2000/s.
    let bound = 20.0 / 0.010;
    assert!(
        run.throughput_per_s <= bound * 1.02,
        "{:.0}/s beats Little's law ({bound:.0}/s): {run:?}",
        run.throughput_per_s
    );
    // A Rust client on loopback stays close to it; half leaves room for a busy 2-core machine.
    assert!(
        run.throughput_per_s >= bound * 0.5,
        "{:.0}/s is under half of {bound:.0}/s: {run:?}",
        run.throughput_per_s
    );
    assert!(
        run.latency_p50_ms >= 10.0,
        "the server never answers early: {run:?}"
    );
    assert!(run.latency_p99_ms >= run.latency_p50_ms);
    assert!((run.throughput_per_s - run.ops as f64 / run.wall_s).abs() < 1e-6);
    assert!(run.worker_threads >= 1);
}

#[test]
fn http_unreachable_url_is_a_one_line_error_naming_it() {
    let _alone = alone();
    let url = format!("http://127.0.0.1:{}/delay/10", closed_port());
    let err = reference::http(
        &url,
        ClosedLoop {
            ops: 10,
            concurrency: 2,
        },
    )
    .expect_err("nothing listens there");
    let msg = format!("{err:#}");
    eprintln!("{msg}");
    assert!(msg.contains(&url), "{msg}");
    assert!(msg.contains("mock server"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");

    let err = reference::http(
        "https://127.0.0.1:1/",
        ClosedLoop {
            ops: 1,
            concurrency: 1,
        },
    )
    .expect_err("no TLS");
    assert!(format!("{err:#}").contains("only http://"), "{err:#}");
    let err = reference::http(
        &url,
        ClosedLoop {
            ops: 1,
            concurrency: 0,
        },
    )
    .expect_err("no workers");
    assert!(format!("{err:#}").contains("concurrency"), "{err:#}");
}

#[test]
fn postgres_unreachable_is_a_one_line_error_without_the_password() {
    let _alone = alone();
    let port = closed_port();
    let url = format!("postgresql://someone:secret@127.0.0.1:{port}/somedb");
    let err = reference::postgres(
        &url,
        ClosedLoop {
            ops: 1,
            concurrency: 1,
        },
    )
    .expect_err("nothing listens there");
    let msg = format!("{err:#}");
    eprintln!("{msg}");
    assert!(msg.starts_with("reference client: "), "{msg}");
    assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
    assert!(!msg.contains("secret"), "password leaked: {msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn postgres_point_selects_return_every_value() {
    let _alone = alone();
    let pg = Postgres::provide(PgBackend::Local).expect("local cluster");
    let load = ClosedLoop {
        ops: 2000,
        concurrency: 10,
    };
    let run = reference::postgres(pg.url(), load).expect("reference postgres run");
    eprintln!(
        "postgres ceiling: {:.0} ops/s over {:.3} s, p50 {:.3} ms, p99 {:.3} ms, {} worker threads",
        run.throughput_per_s,
        run.wall_s,
        run.latency_p50_ms,
        run.latency_p99_ms,
        run.worker_threads
    );
    // Query i fetches id (i * 7919) % 100000 + 1, whose value the seed made (id * 7919) % 100000.
    let expected: u64 = (0..2000u64)
        .map(|i| (i * 7919) % 100_000 + 1)
        .map(|id| (id * 7919) % 100_000)
        .sum();
    assert_eq!(run.errors, 0, "{run:?}");
    assert_eq!(run.ops, 2000, "{run:?}");
    assert_eq!(run.checksum, expected, "{run:?}");
    assert!(run.throughput_per_s > 0.0, "{run:?}");
    assert!(run.latency_p50_ms > 0.0 && run.latency_p99_ms >= run.latency_p50_ms);
}

#[test]
fn ids_follow_the_python_sequence() {
    let _alone = alone();
    use asynclab::reference::postgres::{item_id, item_value};
    // workloads/dbutil.py: item_id(i) = (i * 7919) % 100000 + 1, item_value(id) = (id * 7919) % 100000.
    assert_eq!(item_id(0), 1);
    assert_eq!(item_id(1), 7920);
    assert_eq!(item_id(100_000), 1);
    assert_eq!(item_value(1), 7919);
    assert_eq!(item_value(100_000), 0);
}
