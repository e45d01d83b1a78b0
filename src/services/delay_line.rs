//! The delay line: a TCP proxy that puts a network distance between the workers and a service.
//!
//! Each byte read from one side is released to the other at its arrival time plus half the
//! round-trip time (and a jitter sample, and the time a bandwidth cap needs to send it), in
//! order: a delay line, not a throttle, so every connection and every chunk in flight is
//! delayed at once and throughput follows Little's law. Release times never go backwards
//! (TCP does not reorder), so jitter samples that would overtake an earlier chunk wait for it.
//! Release waits use [`super::precise_timer`], not tokio's 1 ms timer wheel.
//!
//! Same shape as the other servers: [`serve`] takes a bound listener and a shutdown future;
//! [`DelayLine`] runs it in the background and stops it on drop.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::background::{accept_until, BackgroundServer};
use super::precise_timer::sleep_until;

/// Largest chunk read at once; one read becomes one delayed write.
const CHUNK_BYTES: usize = 64 * 1024;
/// Chunks in flight per direction before reading stops (backpressure): 64 MiB at most.
const CHUNKS_IN_FLIGHT: usize = 1024;

/// The distribution jitter is drawn from, added to each chunk's one-way delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JitterShape {
    /// Uniform on [0, 2 × jitter]: mean jitter, never below the base delay.
    Uniform,
    /// Normal with mean 0 and standard deviation jitter, cut at −delay (never negative).
    Normal,
}

/// What the delay line adds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelaySpec {
    /// The round trip added to every exchange; each direction gets half.
    pub rtt: Duration,
    /// Jitter scale (see [`JitterShape`]) per direction; zero for none.
    pub jitter: Duration,
    /// How jitter is drawn.
    pub shape: JitterShape,
    /// Bandwidth cap per direction of each connection, bytes per second; `None` for none.
    pub bandwidth_bytes_per_s: Option<u64>,
}

impl DelaySpec {
    /// A fixed round trip, no jitter, no cap.
    pub fn rtt(rtt: Duration) -> DelaySpec {
        DelaySpec {
            rtt,
            jitter: Duration::ZERO,
            shape: JitterShape::Uniform,
            bandwidth_bytes_per_s: None,
        }
    }

    /// The one-way delay of a chunk, with a jitter sample drawn from `rng`.
    fn one_way(&self, rng: &mut SplitMix) -> Duration {
        let base = self.rtt.as_secs_f64() / 2.0;
        let j = self.jitter.as_secs_f64();
        let extra = match self.shape {
            _ if j == 0.0 => 0.0,
            JitterShape::Uniform => rng.unit() * 2.0 * j,
            JitterShape::Normal => rng.normal() * j,
        };
        Duration::from_secs_f64((base + extra).max(0.0))
    }
}

/// What the delay line has carried, for tests and the report.
#[derive(Debug, Default)]
pub struct DelayStats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Bytes carried from the clients to the upstream.
    pub bytes_up: AtomicU64,
    /// Bytes carried from the upstream to the clients.
    pub bytes_down: AtomicU64,
    /// Clients dropped because the upstream refused the connection.
    pub upstream_failures: AtomicU64,
}

/// A small, fast generator for jitter (SplitMix64); seeded per connection.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform on [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Reads `from` and hands each chunk with its release time to the writer, in order; an empty
/// chunk marks the end.
async fn read_side(
    mut from: OwnedReadHalf,
    tx: mpsc::Sender<(Instant, Vec<u8>)>,
    spec: DelaySpec,
    mut rng: SplitMix,
) {
    let mut last_release = Instant::now();
    loop {
        let mut buf = vec![0u8; CHUNK_BYTES];
        let n = from.read(&mut buf).await.unwrap_or(0);
        let arrival = Instant::now();
        buf.truncate(n);
        let mut release = (arrival + spec.one_way(&mut rng)).max(last_release);
        if let Some(bw) = spec.bandwidth_bytes_per_s.filter(|&b| b > 0) {
            release = release.max(last_release + Duration::from_secs_f64(n as f64 / bw as f64));
        }
        last_release = release;
        if tx.send((release, buf)).await.is_err() || n == 0 {
            return;
        }
    }
}

/// Writes each chunk to `to` at its release time; at the end marker, half-closes `to`.
async fn write_side(
    mut to: OwnedWriteHalf,
    mut rx: mpsc::Receiver<(Instant, Vec<u8>)>,
    carried: &AtomicU64,
) {
    while let Some((release, chunk)) = rx.recv().await {
        sleep_until(release).await;
        if chunk.is_empty() {
            break;
        }
        if to.write_all(&chunk).await.is_err() {
            return;
        }
        carried.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
    let _ = to.shutdown().await;
}

/// One direction of a connection: reading and delayed writing run concurrently.
async fn pump(
    from: OwnedReadHalf,
    to: OwnedWriteHalf,
    spec: DelaySpec,
    rng: SplitMix,
    carried: &AtomicU64,
) {
    let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
    tokio::join!(read_side(from, tx, spec, rng), write_side(to, rx, carried));
}

/// Carries one client connection to `upstream` and back, both ways delayed.
async fn carry(client: TcpStream, upstream: SocketAddr, spec: DelaySpec, stats: Arc<DelayStats>) {
    let n = stats.connections.fetch_add(1, Ordering::Relaxed);
    let server = match TcpStream::connect(upstream).await {
        Ok(s) => s,
        Err(_) => {
            stats.upstream_failures.fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let seed = n.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ std::process::id() as u64;
    let (client_r, client_w) = client.into_split();
    let (server_r, server_w) = server.into_split();
    tokio::join!(
        pump(client_r, server_w, spec, SplitMix(seed), &stats.bytes_up),
        pump(server_r, client_w, spec, SplitMix(!seed), &stats.bytes_down),
    );
}

/// Proxies every connection accepted on `listener` to `upstream` with `spec`'s delay until
/// `shutdown` completes; then closes the listener and every connection.
pub async fn serve(
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    upstream: SocketAddr,
    spec: DelaySpec,
    stats: Arc<DelayStats>,
) -> io::Result<()> {
    let mut conns = JoinSet::new();
    let result = accept_until("delay line", listener, shutdown, &mut conns, |client| {
        carry(client, upstream, spec, Arc::clone(&stats))
    })
    .await;
    conns.shutdown().await;
    result
}

/// A delay line running in the background; dropping it stops it and closes its connections.
#[derive(Debug)]
pub struct DelayLine {
    server: BackgroundServer,
    stats: Arc<DelayStats>,
    upstream: SocketAddr,
    spec: DelaySpec,
}

impl DelayLine {
    /// Binds `bind` (port 0 for any free port) and proxies to `upstream` with `spec`.
    pub fn start(bind: SocketAddr, upstream: SocketAddr, spec: DelaySpec) -> anyhow::Result<Self> {
        let stats = Arc::new(DelayStats::default());
        let s = Arc::clone(&stats);
        let server = BackgroundServer::start("delay-line", "delay line", bind, move |l, sd| {
            serve(l, sd, upstream, spec, s)
        })?;
        Ok(DelayLine {
            server,
            stats,
            upstream,
            spec,
        })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// Where it forwards to.
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// What it adds.
    pub fn spec(&self) -> DelaySpec {
        self.spec
    }

    /// What it has carried so far.
    pub fn stats(&self) -> &DelayStats {
        &self.stats
    }
}

/// Serves one delay line in the foreground until Ctrl-C or SIGTERM (`asynclab delay-proxy`).
pub fn run_standalone(
    bind: SocketAddr,
    upstream: SocketAddr,
    spec: DelaySpec,
) -> anyhow::Result<()> {
    use std::io::Write as _;
    let runtime = super::background::service_runtime("delay-line")?;
    let listener = {
        let _entered = runtime.enter();
        super::background::bind_listener(bind)?
    };
    let addr = listener.local_addr()?;
    let stats = Arc::new(DelayStats::default());
    println!(
        "delay line listening on {addr}, forwarding to {upstream} with {} ms round trip added; Ctrl-C to stop",
        spec.rtt.as_secs_f64() * 1e3
    );
    let _ = std::io::stdout().flush();
    let shutdown = super::mock_http::shutdown_signal();
    runtime
        .block_on(serve(
            listener,
            shutdown,
            upstream,
            spec,
            Arc::clone(&stats),
        ))
        .map_err(|e| anyhow::anyhow!("delay line on {addr} stopped: accept failed: {e}"))?;
    println!(
        "delay line stopped: {} connections, {} bytes up, {} bytes down, {} refused by the upstream",
        stats.connections.load(Ordering::Relaxed),
        stats.bytes_up.load(Ordering::Relaxed),
        stats.bytes_down.load(Ordering::Relaxed),
        stats.upstream_failures.load(Ordering::Relaxed)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_draws_have_the_asked_shape() {
        let mut rng = SplitMix(7);
        let spec = DelaySpec {
            rtt: Duration::from_millis(10),
            jitter: Duration::from_millis(1),
            shape: JitterShape::Uniform,
            bandwidth_bytes_per_s: None,
        };
        let n = 20_000;
        let draws: Vec<f64> = (0..n)
            .map(|_| spec.one_way(&mut rng).as_secs_f64() * 1e3)
            .collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        // Uniform on [5, 7] ms: mean 6, bounds hold.
        assert!((mean - 6.0).abs() < 0.03, "{mean}");
        assert!(draws.iter().all(|&d| (5.0..7.0).contains(&d)));
        let normal = DelaySpec {
            shape: JitterShape::Normal,
            ..spec
        };
        let draws: Vec<f64> = (0..n)
            .map(|_| normal.one_way(&mut rng).as_secs_f64() * 1e3)
            .collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let sd = (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        // Normal(5 ms, 1 ms): mean and sd within sampling error (±3 standard errors).
        assert!((mean - 5.0).abs() < 0.03, "{mean}");
        assert!((sd - 1.0).abs() < 0.03, "{sd}");
    }
}
