//! The mock server's served-request counter read over the network (`GET /__stats`), for a
//! client role whose mock server runs in the server role's container: every run's request count
//! is checked as when the server runs in the driver.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

/// `requests` from `GET /__stats` of the mock server at `addr` (`HOST:PORT`); `None` when it
/// cannot be read.
pub fn requests(addr: &str) -> Option<u64> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request = format!("GET /__stats HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    let stats: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    stats.get("requests")?.as_u64()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_counter_of_a_running_mock_server_is_read() {
        let server =
            crate::services::mock_http::MockHttp::start("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = server.addr().to_string();
        assert_eq!(super::requests(&addr), Some(0));
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        std::io::Write::write_all(
            &mut s,
            b"GET /delay/0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
        let mut out = String::new();
        std::io::Read::read_to_string(&mut s, &mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        assert_eq!(super::requests(&addr), Some(1));
        assert_eq!(super::requests("127.0.0.1:1"), None);
    }
}
