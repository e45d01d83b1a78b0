//! Tests of the mock HTTP server fixture, over raw TCP with hand-written HTTP/1.1.

use crate::common::alone;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use asynclab::services::mock_http::{serve, MockHttp, ServerStats, MAX_BODY_BYTES};

/// Any free port on loopback.
fn any_port() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

/// A parsed response.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Conn {
            reader: BufReader::new(stream),
        }
    }

    fn send(&mut self, method: &str, target: &str) {
        let req = format!("{method} {target} HTTP/1.1\r\nHost: test\r\n\r\n");
        self.reader.get_mut().write_all(req.as_bytes()).unwrap();
    }

    fn read(&mut self) -> Resp {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let mut parts = line.split_whitespace();
        assert_eq!(parts.next(), Some("HTTP/1.1"), "status line: {line:?}");
        let status: u16 = parts.next().unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            let (k, v) = trimmed.split_once(':').unwrap();
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let mut resp = Resp {
            status,
            headers,
            body: Vec::new(),
        };
        // 204 and 304 carry no body (and no content-length); everything else says its length.
        let len: usize = match resp.status {
            204 | 304 => 0,
            _ => resp
                .header("content-length")
                .expect("content-length")
                .parse()
                .unwrap(),
        };
        resp.body = vec![0; len];
        self.reader.read_exact(&mut resp.body).unwrap();
        resp
    }

    fn get(&mut self, target: &str) -> Resp {
        self.send("GET", target);
        self.read()
    }
}

/// GET on a fresh connection.
fn get(addr: SocketAddr, target: &str) -> Resp {
    Conn::open(addr).get(target)
}

/// Reads `"requests": n` from `/__stats`.
fn stats(conn: &mut Conn) -> serde_json::Value {
    let resp = conn.get("/__stats");
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    serde_json::from_slice(&resp.body).unwrap()
}

#[test]
fn delay_is_never_early_and_not_much_late() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    assert_eq!(conn.get("/delay/0").status, 200); // connection set up, not timed
    let start = Instant::now();
    let resp = conn.get("/delay/100");
    let elapsed = start.elapsed();
    assert_eq!(resp.status, 200);
    assert!(elapsed >= Duration::from_millis(100), "{elapsed:?}");
    // Generous: a busy 2-core box (parallel cargo builds) can delay the wake-up.
    assert!(elapsed < Duration::from_millis(150), "{elapsed:?}");
}

#[test]
fn fractional_delay_is_never_early() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    for _ in 0..5 {
        let start = Instant::now();
        assert_eq!(conn.get("/delay/0.5").status, 200);
        assert!(start.elapsed() >= Duration::from_micros(500));
    }
    let start = Instant::now();
    assert_eq!(conn.get("/delay/20.25").status, 200);
    assert!(start.elapsed() >= Duration::from_micros(20_250));
}

#[test]
fn body_size_is_exact() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    for n in [0usize, 1, 1000, 65_537, 1 << 20] {
        let resp = conn.get(&format!("/delay/0?bytes={n}"));
        assert_eq!(resp.status, 200);
        assert_eq!(resp.body.len(), n);
        assert_eq!(resp.header("content-length"), Some(n.to_string().as_str()));
        assert_eq!(
            resp.header("content-type"),
            Some("application/octet-stream")
        );
    }
    let resp = conn.get(&format!("/delay/0?bytes={}", MAX_BODY_BYTES + 1));
    assert_eq!(resp.status, 400);
}

#[test]
fn status_code_is_honoured() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    for status in [200u16, 201, 404, 500, 503] {
        let resp = conn.get(&format!("/delay/1?status={status}&bytes=3"));
        assert_eq!(resp.status, status);
        assert_eq!(resp.body.len(), 3);
    }
    let resp = conn.get("/delay/0?status=204");
    assert_eq!(resp.status, 204);
    assert!(resp.body.is_empty());
    assert_eq!(server.requests_served(), 6);
}

#[test]
fn keep_alive_serves_two_requests_on_one_connection() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    let first = conn.get("/delay/1?bytes=5");
    let second = conn.get("/delay/1?bytes=7");
    assert_eq!((first.status, first.body.len()), (200, 5));
    assert_eq!((second.status, second.body.len()), (200, 7));
    assert_ne!(second.header("connection"), Some("close"));
    let s = stats(&mut conn);
    assert_eq!(s["requests"], 2);
    assert_eq!(s["connections"], 1);
    assert_eq!(server.connections_accepted(), 1);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    conn.send("GET", "/delay/20?bytes=1");
    conn.send("GET", "/delay/0?bytes=2");
    assert_eq!(conn.read().body.len(), 1);
    assert_eq!(conn.read().body.len(), 2);
}

#[test]
fn counter_counts_delay_requests_only() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    for _ in 0..3 {
        assert_eq!(conn.get("/delay/0").status, 200);
    }
    assert_eq!(stats(&mut conn)["requests"], 3);
    assert_eq!(stats(&mut conn)["requests"], 3); // /__stats is not counted
    assert_eq!(conn.get("/nothing").status, 404);
    assert_eq!(conn.get("/delay").status, 404);
    assert_eq!(conn.get("/delay/x").status, 400);
    conn.send("POST", "/delay/0");
    let resp = conn.read();
    assert_eq!(resp.status, 405);
    assert_eq!(resp.header("allow"), Some("GET"));
    assert_eq!(stats(&mut conn)["requests"], 3);
    assert_eq!(server.requests_served(), 3);
}

#[test]
fn count_is_visible_once_the_response_is_read() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let before = server.requests_served();
    assert_eq!(get(server.addr(), "/delay/30").status, 200);
    assert_eq!(server.requests_served(), before + 1);
}

#[test]
fn bad_queries_are_400_with_one_line() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    for target in [
        "/delay/abc",
        "/delay/-1",
        "/delay/NaN",
        "/delay/10?bytes=x",
        "/delay/10?bytes=-5",
        "/delay/10?status=99",
        "/delay/10?status=abc",
        "/delay/10?byte=1",
        "/delay/10?bytes=1&bytes=2",
        "/delay/10?bytes=99999999999999999999999",
    ] {
        let resp = conn.get(target);
        assert_eq!(resp.status, 400, "{target}");
        let text = resp.text();
        assert_eq!(text.trim_end().lines().count(), 1, "{target}: {text:?}");
        assert!(text.ends_with('\n'));
    }
    assert_eq!(server.requests_served(), 0);
}

#[test]
fn port_in_use_names_the_address_and_the_fix() {
    let _alone = alone();
    let taken = TcpListener::bind(any_port()).unwrap();
    let addr = taken.local_addr().unwrap();
    let err = MockHttp::start(addr).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "port {} on 127.0.0.1 is in use: choose another with --port, or 0 for any free port",
            addr.port()
        )
    );
    assert!(!err.contains('\n'));
}

#[test]
fn url_and_addr_agree() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    assert_ne!(server.addr().port(), 0);
    assert_eq!(
        server.url(),
        format!("http://127.0.0.1:{}", server.addr().port())
    );
}

#[test]
fn drop_shuts_down_even_with_an_idle_keep_alive_connection() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let addr = server.addr();
    let mut conn = Conn::open(addr);
    assert_eq!(conn.get("/delay/0").status, 200);
    let start = Instant::now();
    drop(server);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_nothing_listens(addr);
    // The idle connection was closed: EOF.
    let mut rest = Vec::new();
    assert_eq!(conn.reader.read_to_end(&mut rest).unwrap(), 0);
}

#[test]
fn drop_lets_an_in_flight_request_finish() {
    let _alone = alone();
    let server = MockHttp::start(any_port()).unwrap();
    let mut conn = Conn::open(server.addr());
    conn.send("GET", "/delay/200?bytes=4");
    std::thread::sleep(Duration::from_millis(50)); // the request is being delayed
    drop(server);
    let resp = conn.read();
    assert_eq!((resp.status, resp.body.len()), (200, 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_on_a_given_listener_until_shutdown() {
    let _alone = alone();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind(any_port()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stats = Arc::new(ServerStats::new());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, stats.clone(), async {
        let _ = rx.await;
    }));

    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /delay/5?bytes=2 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8_lossy(&raw);
    assert!(raw.starts_with("HTTP/1.1 200 OK\r\n"), "{raw}");
    assert!(raw.ends_with("\r\n\r\n\0\0"), "{raw:?}");
    assert_eq!(stats.requests(), 1);

    tx.send(()).unwrap();
    server.await.unwrap().unwrap();
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

/// Connecting to `addr` is refused. A connection whose source port happened to be `addr`'s own
/// (TCP simultaneous open onto itself, possible once the port is free) is not a listener.
fn assert_nothing_listens(addr: SocketAddr) {
    match TcpStream::connect(addr) {
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}"),
        Ok(s) => assert_eq!(
            s.local_addr().unwrap(),
            s.peer_addr().unwrap(),
            "something still listens on {addr} after drop"
        ),
    }
}
