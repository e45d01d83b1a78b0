//! The distance between roles, measured over the path the cells use: a 64-byte ping-pong with
//! the TCP echo server (client → server) and `SELECT 1` on one connection (client → database),
//! each after warm-up round trips, so a reader sees what every number of the run includes.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::results::RoundTripRecord;

/// Round trips timed per path.
pub const SAMPLES: usize = 200;
/// Round trips before those, not timed (connection set-up, caches, the first wake-ups).
pub const WARMUP: usize = 20;
/// How long one path may take in all.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The record of `samples_ms` timed from `from` to `to` with `probe`.
fn record(from: &str, to: &str, probe: &str, mut samples_ms: Vec<f64>) -> RoundTripRecord {
    samples_ms.sort_by(f64::total_cmp);
    let at = |q: f64| samples_ms[((samples_ms.len() - 1) as f64 * q).round() as usize];
    RoundTripRecord {
        from: from.into(),
        to: to.into(),
        probe: probe.into(),
        samples: samples_ms.len(),
        median_ms: at(0.5),
        p90_ms: at(0.9),
        max_ms: at(1.0),
    }
}

/// 64-byte ping-pongs with the echo server at `addr`; also the address they left from.
pub fn echo(
    from: &str,
    to: &str,
    addr: &str,
) -> anyhow::Result<(RoundTripRecord, std::net::IpAddr)> {
    let mut stream = TcpStream::connect(addr)
        .with_context(|| format!("connecting to the echo server at {addr}"))?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    let ping = [0x5au8; 64];
    let mut pong = [0u8; 64];
    let mut samples = Vec::with_capacity(SAMPLES);
    for i in 0..WARMUP + SAMPLES {
        let t = Instant::now();
        stream.write_all(&ping)?;
        stream
            .read_exact(&mut pong)
            .with_context(|| format!("reading the echo from {addr}"))?;
        if i >= WARMUP {
            samples.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    anyhow::ensure!(
        pong == ping,
        "the echo server at {addr} sent back other bytes"
    );
    let local = stream.local_addr()?.ip();
    Ok((
        record(from, to, "64-byte TCP echo ping-pong", samples),
        local,
    ))
}

/// `SELECT 1` round trips on one connection to `url`.
pub fn postgres(from: &str, to: &str, url: &str) -> anyhow::Result<RoundTripRecord> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let samples = rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .context("connecting to PostgreSQL for its round trip")?;
        let conn = tokio::spawn(connection);
        let mut samples = Vec::with_capacity(SAMPLES);
        for i in 0..WARMUP + SAMPLES {
            let t = Instant::now();
            client.simple_query("SELECT 1").await?;
            if i >= WARMUP {
                samples.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        drop(client);
        let _ = conn.await;
        anyhow::Ok(samples)
    })?;
    Ok(record(from, to, "SELECT 1", samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_sorted_samples() {
        let r = record("a", "b", "p", (1..=11).rev().map(f64::from).collect());
        assert_eq!(
            (r.samples, r.median_ms, r.p90_ms, r.max_ms),
            (11, 6.0, 10.0, 11.0)
        );
    }

    #[test]
    fn an_echo_round_trip_on_loopback_is_timed() {
        let server =
            crate::services::echo::EchoServer::start("127.0.0.1:0".parse().unwrap()).unwrap();
        let (r, from) = echo("client", "server", &server.addr().to_string()).unwrap();
        assert!(from.is_loopback());
        assert_eq!(r.samples, SAMPLES);
        assert!(r.median_ms > 0.0 && r.median_ms <= r.p90_ms && r.p90_ms <= r.max_ms);
    }
}
