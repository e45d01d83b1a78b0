//! The generator's own check (`asynclab self-check`, `make bench`): it drives the Rust mock
//! server, whose answers take a known time, open loop at rates far above what a Python
//! service on one core serves, and must keep the schedule: every request sent, and the p99 of
//! its corrected latency at most [`MAX_OVERSHOOT_P99_MS`] above the server's delay.
//!
//! Placed as a service run places them: the server in a process of its own on the last
//! allowed CPU (`asynclab mock-server`, its own timer thread), the generator's threads on the
//! others. Sharing one process and one timer thread with the server would charge the server's
//! work to the generator.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{run, Endpoint, Load};
use crate::affinity;
use crate::stats::percentile;

/// The rates the check offers when it is given no measured knee, per second: far above what a
/// Python service on one core serves.
pub const RATES_PER_S: [f64; 2] = [5_000.0, 10_000.0];
/// How far above the fastest measured knee the generator must keep its schedule to show it is
/// not what limits a service: the check's rate is this many times that knee.
pub const HEADROOM: f64 = 10.0;
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
    /// The first failure's message, when any request failed.
    pub first_error: Option<String>,
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
        )?;
        match &self.first_error {
            Some(e) => write!(f, "; first failure: {e}"),
            None => Ok(()),
        }
    }
}

/// `asynclab mock-server` on a free loopback port, pinned to `cpus`; stopped (SIGTERM, then
/// waited for) when dropped, and killed with the driver (`PR_SET_PDEATHSIG`).
pub struct ServerProcess {
    child: Child,
    addr: SocketAddr,
}

impl ServerProcess {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its process id.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Starts it pinned to `cpus` (empty: not pinned).
    pub fn start(cpus: &[usize]) -> anyhow::Result<ServerProcess> {
        let me = std::env::current_exe()
            .map_err(|e| anyhow::anyhow!("cannot find the asynclab binary: {e}"))?;
        let mut cmd = Command::new(me);
        cmd.args(["mock-server", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let pin = (!cpus.is_empty()).then(|| affinity::cpu_set(cpus));
        // SAFETY: in_child makes only async-signal-safe calls; the set was built before fork.
        unsafe { cmd.pre_exec(move || affinity::in_child(pin.as_ref())) };
        let mut child = cmd
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot start `asynclab mock-server`: {e}"))?;
        crate::interrupt::register(child.id() as i32);
        let mut first = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut first);
        }
        let addr = first
            .trim()
            .rsplit("http://")
            .next()
            .and_then(|a| a.parse().ok());
        let mut server = ServerProcess {
            child,
            addr: "127.0.0.1:0".parse()?,
        };
        match addr {
            Some(a) => {
                server.addr = a;
                Ok(server)
            }
            None => anyhow::bail!(
                "`asynclab mock-server --port 0` did not say where it listens (first line {:?})",
                first.trim()
            ),
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: kill has no memory-safety preconditions; the child is not yet reaped.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let _ = self.child.wait();
        crate::interrupt::unregister(pid);
    }
}

/// Runs the check at `rate_per_s` for two seconds, the server on the last allowed CPU and
/// this process's threads on the others (all of them on a one-CPU machine); the threads'
/// masks are restored after.
pub fn check(rate_per_s: f64) -> anyhow::Result<GeneratorCheck> {
    let allowed = affinity::allowed_cpus();
    let (server_cpus, own_cpus) = match allowed.split_last() {
        Some((last, rest)) if !rest.is_empty() => (vec![*last], rest.to_vec()),
        _ => (Vec::new(), allowed.clone()),
    };
    let server = ServerProcess::start(&server_cpus)?;
    affinity::pin_all_threads(&own_cpus)?;
    let out = drive(server.addr, rate_per_s);
    affinity::pin_all_threads(&allowed)?;
    drop(server);
    out
}

/// The generator's run against the server at `addr`, judged.
fn drive(addr: SocketAddr, rate_per_s: f64) -> anyhow::Result<GeneratorCheck> {
    let load = Load {
        addr,
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
        first_error: out.error_samples.first().cloned(),
    })
}
