//! Self-check of the delay line: how far past the asked round trip each exchange through it
//! lands, at several round-trip times, against the echo server (part of `asynclab self-check`).
//!
//! One connection, sequential 64-byte round trips, so nothing queues: the overshoot of each is
//! its time minus the asked round trip minus the median direct round trip to the same echo
//! server (the loopback and echo cost the delay line does not add).

use std::fmt;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::delay_line::{DelayLine, DelaySpec};
use super::echo::EchoServer;

/// Round-trip times checked, in ms.
pub const RTTS_MS: [f64; 4] = [0.5, 1.0, 5.0, 50.0];

/// The bound at `rtt_ms`: 0.2 ms or 5% of the round trip, whichever is larger.
pub fn bound_ms(rtt_ms: f64) -> f64 {
    (0.2f64).max(rtt_ms * 0.05)
}

/// Overshoot at one round-trip time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DelayLineCheck {
    /// Round trip asked for, in ms.
    pub rtt_ms: f64,
    /// Round trips timed.
    pub round_trips: usize,
    /// Median overshoot, in ms.
    pub overshoot_p50_ms: f64,
    /// 99th-percentile overshoot, in ms.
    pub overshoot_p99_ms: f64,
    /// Smallest round trip minus the asked one, in ms (negative would be an early delivery).
    pub early_min_ms: f64,
    /// The bound the p99 is held to, in ms ([`bound_ms`]).
    pub bound_ms: f64,
}

impl DelayLineCheck {
    /// Never early, p99 overshoot within the bound.
    pub fn is_fit(&self) -> bool {
        self.early_min_ms >= 0.0 && self.overshoot_p99_ms <= self.bound_ms
    }
}

impl fmt::Display for DelayLineCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "delay line at {} ms: overshoot p50 {:.3} ms, p99 {:.3} ms over {} round trips (bound {:.2} ms at p99){}",
            self.rtt_ms,
            self.overshoot_p50_ms,
            self.overshoot_p99_ms,
            self.round_trips,
            self.bound_ms,
            if self.is_fit() { "" } else { ": NOT FIT" }
        )
    }
}

/// `n` sequential round trips through `addr`, in ms, sorted (one untimed exchange first).
fn round_trips_ms(addr: SocketAddr, n: usize) -> anyhow::Result<Vec<f64>> {
    let mut s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let msg = [7u8; 64];
    let mut back = [0u8; 64];
    s.write_all(&msg)?;
    s.read_exact(&mut back)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        s.write_all(&msg)?;
        s.read_exact(&mut back)?;
        out.push(t.elapsed().as_secs_f64() * 1e3);
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Checks the delay line at every [`RTTS_MS`], about 2 s of round trips each.
pub fn run() -> anyhow::Result<Vec<DelayLineCheck>> {
    let any = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let echo = EchoServer::start(any)?;
    let direct = quantile(&round_trips_ms(echo.addr(), 500)?, 0.5);
    RTTS_MS
        .iter()
        .map(|&rtt_ms| {
            let n = ((2000.0 / rtt_ms) as usize).clamp(40, 2000);
            let line = DelayLine::start(
                any,
                echo.addr(),
                DelaySpec::rtt(Duration::from_secs_f64(rtt_ms / 1e3)),
            )?;
            let trips = round_trips_ms(line.addr(), n)?;
            let over = |q: f64| (quantile(&trips, q) - direct - rtt_ms).max(0.0);
            Ok(DelayLineCheck {
                rtt_ms,
                round_trips: n,
                overshoot_p50_ms: over(0.5),
                overshoot_p99_ms: over(0.99),
                early_min_ms: trips[0] - rtt_ms,
                bound_ms: bound_ms(rtt_ms),
            })
        })
        .collect()
}
