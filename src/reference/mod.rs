//! The Rust reference clients that give the ceiling a Python variant is a fraction of.
//!
//! Issue 12: the same closed-loop load the Python workloads run, driven from Rust: [`http`]
//! (reqwest against the mock server, one GET per op) and [`postgres`] (tokio-postgres, one point
//! select per op). Both measure like the Python harness: `concurrency` workers pull the next op
//! index from one shared counter until `ops` are taken, the timed region starts when the workers
//! start and ends when the last one finishes, per-op latency is taken around each op, and
//! throughput is successful ops / wall time.
//!
//! Outside the timed region: the tokio runtime (multi-thread, one worker per CPU in the calling
//! thread's affinity mask, so the ceiling uses what the Python workers may use), connection
//! set-up and warm-up (one op per connection before the clock starts).
//!
//! Call these from a plain thread: they build and block on their own runtime, and refuse to run
//! inside another one.

pub mod http;
pub mod postgres;

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;

pub use self::http::http;
pub use self::postgres::postgres;

/// A closed-loop load: `ops` operations by `concurrency` workers, each starting its next op as
/// soon as its last one ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClosedLoop {
    /// Operations in the timed region (warm-up not included).
    pub ops: u64,
    /// Concurrent workers, each with its own connection; at least 1.
    pub concurrency: usize,
}

pub use crate::results::CeilingRun;

/// One op's result: what it adds to the checksum, and whether it failed (with why).
pub(crate) struct OpResult {
    /// Added to [`CeilingRun::checksum`] whether or not the op failed.
    pub checksum: u64,
    /// `Err(message)` for a failed op.
    pub outcome: Result<(), String>,
}

/// A worker of the closed loop: owns its connection and runs ops on it one at a time.
pub(crate) trait Worker: Send + 'static {
    /// Runs op `index` (0-based, the same sequence the Python workloads use).
    fn op(&mut self, index: u64) -> impl Future<Output = OpResult> + Send + '_;
}

/// What one worker task saw.
#[derive(Default)]
struct Tally {
    latencies_ms: Vec<f64>,
    errors: u64,
    checksum: u64,
    first_error: Option<String>,
}

/// Worker threads for the client's runtime: CPUs in the calling thread's affinity mask, at least 1.
pub fn worker_threads() -> usize {
    crate::affinity::allowed_cpus().len().max(1)
}

/// Checks the load and builds the client's runtime (outside any timed region).
pub(crate) fn runtime(load: ClosedLoop) -> anyhow::Result<(tokio::runtime::Runtime, usize)> {
    if load.concurrency == 0 {
        anyhow::bail!("reference client: concurrency must be at least 1, got 0");
    }
    if tokio::runtime::Handle::try_current().is_ok() {
        anyhow::bail!(
            "reference client: called inside a tokio runtime; call it from a plain thread \
             (e.g. tokio::task::spawn_blocking), it builds its own"
        );
    }
    let threads = worker_threads();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("asynclab-ceiling")
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("reference client: cannot start a tokio runtime: {e}"))?;
    Ok((rt, threads))
}

/// The timed region: one task per worker, each pulling op indices from a shared counter until
/// `ops` are taken. Runs on the current runtime; `worker_threads` is recorded in the result.
pub(crate) async fn closed_loop<W: Worker>(
    workers: Vec<W>,
    ops: u64,
    worker_threads: usize,
) -> anyhow::Result<CeilingRun> {
    let next = Arc::new(AtomicU64::new(0));
    // Room for every latency a task is likely to record, so the loop does not reallocate.
    let per_task = (ops / workers.len().max(1) as u64 + 1) as usize;
    let mut tasks = JoinSet::new();
    let start = Instant::now();
    for mut worker in workers {
        let next = Arc::clone(&next);
        tasks.spawn(async move {
            let mut tally = Tally {
                latencies_ms: Vec::with_capacity(per_task),
                ..Tally::default()
            };
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= ops {
                    break;
                }
                let t0 = Instant::now();
                let result = worker.op(index).await;
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                tally.checksum += result.checksum;
                match result.outcome {
                    Ok(()) => tally.latencies_ms.push(ms),
                    Err(message) => {
                        tally.errors += 1;
                        tally.first_error.get_or_insert(message);
                    }
                }
            }
            tally
        });
    }
    let mut tallies = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        tallies.push(
            joined.map_err(|e| anyhow::anyhow!("reference client: a worker task failed: {e}"))?,
        );
    }
    let wall_s = start.elapsed().as_secs_f64();
    let mut latencies = Vec::with_capacity(ops as usize);
    let (mut errors, mut checksum, mut first_error) = (0, 0, None);
    for t in tallies {
        latencies.extend(t.latencies_ms);
        errors += t.errors;
        checksum += t.checksum;
        first_error = first_error.or(t.first_error);
    }
    latencies.sort_by(f64::total_cmp);
    let p = crate::stats::percentiles_sorted(&latencies, &[50.0, 99.0]);
    let done = latencies.len() as u64;
    Ok(CeilingRun {
        ops: done,
        errors,
        wall_s,
        throughput_per_s: if wall_s > 0.0 {
            done as f64 / wall_s
        } else {
            0.0
        },
        latency_p50_ms: p[0],
        latency_p99_ms: p[1],
        checksum,
        worker_threads,
        first_error,
    })
}

/// The innermost cause of an error chain (e.g. `Connection refused (os error 111)`), which is
/// what a one-line message needs after it has named the target itself.
pub(crate) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
