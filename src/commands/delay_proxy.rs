//! `asynclab delay-proxy`: the delay line alone, in front of any TCP service, until Ctrl-C.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use clap::Args;

use crate::error::UsageError;
use crate::services::delay_line::{self, DelaySpec, JitterShape};

/// `asynclab delay-proxy`.
#[derive(Debug, Args, Clone)]
pub struct DelayProxyArgs {
    /// The service to forward to, HOST:PORT.
    #[arg(long)]
    pub upstream: String,
    /// Round-trip time to add, in ms (each direction gets half); fractions allowed.
    #[arg(long)]
    pub rtt_ms: f64,
    /// Jitter per direction, in ms: the mean of the uniform draw, or the normal's deviation.
    #[arg(long, default_value_t = 0.0)]
    pub jitter_ms: f64,
    /// How jitter is drawn.
    #[arg(long, value_enum, default_value = "uniform")]
    pub jitter: JitterShape,
    /// Bandwidth cap per direction of each connection, in Mbit/s (none by default).
    #[arg(long)]
    pub bandwidth_mbit: Option<f64>,
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to bind; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
}

/// Checks a duration flag in ms: finite, not negative, at most an hour.
fn millis(flag: &'static str, ms: f64) -> Result<Duration, UsageError> {
    if ms.is_finite() && (0.0..=3_600_000.0).contains(&ms) {
        return Ok(Duration::from_secs_f64(ms / 1e3));
    }
    Err(UsageError::Flag {
        flag,
        message: format!("{ms} is not a delay in ms; give a number from 0 to 3600000, e.g. 5"),
    })
}

/// Serves until interrupted; a bad flag or an unresolvable upstream is one line.
pub fn execute(args: &DelayProxyArgs) -> anyhow::Result<i32> {
    let upstream: SocketAddr = args
        .upstream
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| UsageError::Flag {
            flag: "--upstream",
            message: format!(
                "'{}' is not HOST:PORT of a reachable name, e.g. 127.0.0.1:5432",
                args.upstream
            ),
        })?;
    let bandwidth = match args.bandwidth_mbit {
        None => None,
        Some(m) if m.is_finite() && m > 0.0 => Some((m * 1e6 / 8.0) as u64),
        Some(m) => {
            return Err(UsageError::Flag {
                flag: "--bandwidth-mbit",
                message: format!("{m} is not a bandwidth; give Mbit/s above 0, e.g. 100"),
            }
            .into())
        }
    };
    let spec = DelaySpec {
        rtt: millis("--rtt-ms", args.rtt_ms)?,
        jitter: millis("--jitter-ms", args.jitter_ms)?,
        shape: args.jitter,
        bandwidth_bytes_per_s: bandwidth,
    };
    let hold = crate::services::wake_hold::WakeHold::acquire();
    eprintln!("asynclab: CPU wake-up latency {}", hold.detail);
    delay_line::run_standalone(SocketAddr::new(args.host, args.port), upstream, spec)?;
    Ok(0)
}
