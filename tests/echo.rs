//! Tests of the TCP echo fixture.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use asynclab::services::echo::EchoServer;

fn any_port() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

#[test]
fn round_trip_echoes_the_bytes() {
    let server = EchoServer::start(any_port()).unwrap();
    let mut stream = connect(server.addr());
    for msg in [&b"ping"[..], b"x", b"hello, echo\n"] {
        stream.write_all(msg).unwrap();
        let mut back = vec![0; msg.len()];
        stream.read_exact(&mut back).unwrap();
        assert_eq!(back, msg);
    }
}

#[test]
fn large_payload_comes_back_whole_and_in_order() {
    let server = EchoServer::start(any_port()).unwrap();
    let stream = connect(server.addr());
    let payload: Vec<u8> = (0..(1 << 20)).map(|i: u32| (i % 251) as u8).collect();
    let mut writer = stream.try_clone().unwrap();
    let sent = payload.clone();
    // Write from another thread: the echo fills our receive buffer while we are still sending.
    let sender = std::thread::spawn(move || {
        writer.write_all(&sent).unwrap();
        writer.shutdown(Shutdown::Write).unwrap();
    });
    let mut back = Vec::new();
    (&stream).read_to_end(&mut back).unwrap(); // EOF: the server closes after ours
    sender.join().unwrap();
    assert_eq!(back.len(), payload.len());
    assert!(back == payload);
}

#[test]
fn connections_are_independent() {
    let server = EchoServer::start(any_port()).unwrap();
    let mut a = connect(server.addr());
    let mut b = connect(server.addr());
    a.write_all(b"aaa").unwrap();
    b.write_all(b"bb").unwrap();
    let mut got_b = [0; 2];
    b.read_exact(&mut got_b).unwrap();
    let mut got_a = [0; 3];
    a.read_exact(&mut got_a).unwrap();
    assert_eq!((&got_a, &got_b), (b"aaa", b"bb"));
}

#[test]
fn drop_shuts_down_and_closes_connections() {
    let server = EchoServer::start(any_port()).unwrap();
    let addr = server.addr();
    let mut open = connect(addr);
    drop(server);
    assert_nothing_listens(addr);
    let mut rest = Vec::new();
    assert_eq!(open.read_to_end(&mut rest).unwrap_or(0), 0);
}

#[test]
fn port_in_use_names_the_address() {
    let taken = std::net::TcpListener::bind(any_port()).unwrap();
    let addr = taken.local_addr().unwrap();
    let err = EchoServer::start(addr).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("port {} on 127.0.0.1 is in use", addr.port())),
        "{err}"
    );
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
