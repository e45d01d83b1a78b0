//! The generator's own check (`asynclab self-check`, `make bench`): it drives the Rust mock
//! server, whose answers take a known time, open loop at a rate far above what a Python
//! service on one core serves, and must keep the schedule: every request sent, and the p99 of
//! its corrected latency at most [`MAX_OVERSHOOT_P99_MS`] above the server's delay.

use std::time::Duration;

use super::{run, Endpoint, Load};
use crate::services::mock_http::MockHttp;
use crate::stats::percentile;

/// The rates the check offers, per second.
pub const RATES_PER_S: [f64; 2] = [5_000.0, 10_000.0];
/// Keep-alive connections it holds.
pub const CONNECTIONS: usize = 100;
/// The mock server's delay per answer, ms.
pub const DELAY_MS: f64 = 1.0;
/// How far above the delay the corrected p99 may be, ms.
pub const MAX_OVERSHOOT_P99_MS: f64 = 1.0;

/// One rate's outcome.
#[derive(Debug, Clone)]
pub struct GeneratorCheck {
    /// Offered, per second.
    pub rate_per_s: f64,
    /// Sent per second.
    pub achieved_per_s: f64,
    /// Failed or never sent.
    pub lost: usize,
    /// p99 of corrected latency minus the delay, ms.
    pub overshoot_p99_ms: f64,
    /// The generator's CPU share of one CPU.
    pub cpu_share: f64,
}

impl GeneratorCheck {
    /// Whether it kept the schedule.
    pub fn is_fit(&self) -> bool {
        self.lost == 0 && self.overshoot_p99_ms <= MAX_OVERSHOOT_P99_MS
    }
}

impl std::fmt::Display for GeneratorCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "load generator at {:.0}/s over {CONNECTIONS} connections to a {DELAY_MS} ms server: sent {:.0}/s, {} lost, corrected p99 {:.3} ms above the delay, its CPU {:.0}% of one: {} (bound {MAX_OVERSHOOT_P99_MS} ms)",
            self.rate_per_s,
            self.achieved_per_s,
            self.lost,
            self.overshoot_p99_ms,
            self.cpu_share * 100.0,
            if self.is_fit() { "fit" } else { "NOT FIT" }
        )
    }
}

/// Runs the check at `rate_per_s` for two seconds.
pub fn check(rate_per_s: f64) -> anyhow::Result<GeneratorCheck> {
    let server = MockHttp::start("127.0.0.1:0".parse()?)?;
    let load = Load {
        addr: server.addr(),
        endpoint: Endpoint::Status {
            path: format!("/delay/{DELAY_MS}"),
        },
        connections: CONNECTIONS,
        rate_per_s,
        duration: Duration::from_secs(2),
        timeout: Duration::from_secs(10),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cpu =
        || crate::procfs::PidStat::read(std::process::id() as i32).map_or(0.0, |s| s.cpu_s(false));
    let before = cpu();
    let out = rt.block_on(run(&load));
    // The mock server runs on threads of this process too: its share is counted here.
    let cpu_share = (cpu() - before) / out.elapsed.as_secs_f64().max(1e-9);
    let mut over: Vec<f64> = out
        .samples
        .iter()
        .map(|s| s.corrected_ms() - DELAY_MS)
        .collect();
    over.sort_by(f64::total_cmp);
    Ok(GeneratorCheck {
        rate_per_s,
        achieved_per_s: out.achieved_rate_per_s(&load),
        lost: out.errors + out.abandoned,
        overshoot_p99_ms: if over.is_empty() {
            f64::INFINITY
        } else {
            percentile::percentile(&over, 99.0)
        },
        cpu_share,
    })
}
