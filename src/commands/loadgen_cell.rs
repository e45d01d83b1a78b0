//! The parts of a `loadgen` cell's worker that both its forms use (an HTTP load, in
//! `loadgen.rs`; a WebSocket room, in `fanout_cell.rs`): the cell's parameters, the control
//! pipe to the driver, and the server tree's memory and CPU readings.

use std::io::{BufRead, Write};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::catalogue::servers::Count;
use crate::catalogue::Server;
use crate::loadgen::Endpoint;
use crate::services::under_test::RunningServer;

/// How often the server tree's memory is read during the timed load.
const MEMORY_EVERY: Duration = Duration::from_millis(100);

/// The cell's parameters, read with their defaults.
pub(crate) struct Cell {
    pub(crate) endpoint: Endpoint,
    pub(crate) connections: usize,
    pub(crate) rate_per_s: f64,
    pub(crate) duration: Duration,
    pub(crate) warmup: Duration,
    pub(crate) timeout: Duration,
    pub(crate) workers: usize,
    pub(crate) threads: usize,
    pub(crate) db_pool: usize,
    pub(crate) upstream_pool: usize,
    /// Keep-alive connections to open and hold idle before the timed trickle; 0: none.
    pub(crate) hold: usize,
    /// How long they are held idle before the server's memory is read.
    pub(crate) hold_idle: Duration,
    /// How long opening them may take in all.
    pub(crate) open_within: Duration,
    /// The server's idle keep-alive timeout, when the cell sets it.
    pub(crate) keep_alive_s: Option<u64>,
    /// WebSocket clients to join to the server's chat room; 0: an HTTP cell.
    pub(crate) clients: usize,
    /// The delivery latency a room must keep its p99 within, ms.
    pub(crate) bound_ms: f64,
    /// A deliberate delay in the room's broadcast path, ms (the known-answer test's).
    pub(crate) broadcast_delay_ms: f64,
    /// How long deliveries are waited for after the last send.
    pub(crate) drain: Duration,
    /// Clients of the room that never read (slow consumers); 0: every client reads.
    pub(crate) slow_clients: usize,
    /// Bytes of each message sent into the room (padded; 0: as short as its numbers).
    pub(crate) message_bytes: usize,
}

fn num(p: &Map<String, Value>, key: &str, default: f64) -> anyhow::Result<f64> {
    match p.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| anyhow::anyhow!("parameter {key} = {v}: give a number from 0")),
    }
}

/// A parameter without which the load sends nothing or cannot end: refused when 0 (or less
/// than `least`), so a bad value stops the plan instead of starting runs that measure nothing.
fn positive(
    p: &Map<String, Value>,
    key: &str,
    default: f64,
    least: f64,
    what: &str,
) -> anyhow::Result<f64> {
    let v = num(p, key, default)?;
    if v < least {
        anyhow::bail!("parameter {key} = {v}: give {least} or more ({what})");
    }
    Ok(v)
}

/// The cores a server's `cores` rules ("2*cores+1") count: the CPUs it is pinned to, or every
/// CPU this process may use when it is not pinned.
pub(crate) fn server_cores(server_cpus: &[usize]) -> usize {
    if server_cpus.is_empty() {
        crate::affinity::allowed_cpus().len().max(1)
    } else {
        server_cpus.len()
    }
}

impl Cell {
    /// A cell's parameters read against its server; the plan reads every cell this way before
    /// the run, so a parameter a cell would refuse is refused before anything is measured.
    pub(crate) fn read(
        p: &Map<String, Value>,
        server: &Server,
        cores: usize,
    ) -> anyhow::Result<Cell> {
        let name = p.get("endpoint").and_then(Value::as_str).unwrap_or("plain");
        let endpoint = Endpoint::new(
            name,
            num(p, "queries", 1.0)? as usize,
            num(p, "delay_ms", 10.0)?,
            num(p, "bytes", 64.0)? as usize,
            num(p, "items", 100.0)? as usize,
        )
        .ok_or_else(|| {
            anyhow::anyhow!(
                "parameter endpoint = {name:?}: give one of {}",
                Endpoint::NAMES.join(", ")
            )
        })?;
        // 0 (or absent) takes the server's rule; a string is a rule of its own ("4*cores").
        let count = |key: &str, rule: &Count| -> anyhow::Result<usize> {
            let bad = |r: &Count| {
                anyhow::anyhow!(
                    "server {}: {key} = {r:?}: give a number from 1 or a rule like \"2*cores+1\"",
                    server.name
                )
            };
            match p.get(key) {
                Some(Value::String(r)) => {
                    let own = Count::Rule(r.clone());
                    own.resolve(cores)
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| bad(&own))
                }
                _ => match num(p, key, 0.0)? as usize {
                    0 => rule.resolve(cores).ok_or_else(|| bad(rule)),
                    n => Ok(n),
                },
            }
        };
        let workers = count("workers", &server.workers)?;
        // Equal resources: `db_connections` > 0 is the server's total, split over its workers.
        let db_pool = match num(p, "db_connections", 0.0)? as usize {
            0 => count("db_pool", &server.db_pool)?,
            total if total < workers => anyhow::bail!(
                "server {}: db_connections = {total} is fewer than its {workers} worker processes; give at least {workers}, or fewer workers",
                server.name
            ),
            total if total % workers != 0 => anyhow::bail!(
                "server {}: db_connections = {total} does not split evenly over its {workers} worker processes; give a multiple of {workers} so every server holds the same total",
                server.name
            ),
            total => total / workers,
        };
        let hold = num(p, "hold", 0.0)? as usize;
        let rate_per_s = num(p, "rate_per_s", 0.0)?;
        if hold > 0 && rate_per_s <= 0.0 {
            anyhow::bail!(
                "parameter hold = {hold} needs rate_per_s > 0: the open-loop trickle sent across the held connections"
            );
        }
        let clients = num(p, "clients", 0.0)? as usize;
        if clients > 0 && rate_per_s <= 0.0 {
            anyhow::bail!(
                "parameter clients = {clients} needs rate_per_s > 0: the messages per second sent into the room"
            );
        }
        let slow_clients = num(p, "slow_clients", 0.0)? as usize;
        if slow_clients > 0 && slow_clients >= clients {
            anyhow::bail!(
                "parameter slow_clients = {slow_clients} needs clients above it: the room's other clients are the ones whose deliveries are measured"
            );
        }
        Ok(Cell {
            clients,
            slow_clients,
            message_bytes: num(p, "message_bytes", 0.0)? as usize,
            bound_ms: num(p, "bound_ms", 100.0)?,
            broadcast_delay_ms: num(p, "broadcast_delay_ms", 0.0)?,
            drain: Duration::from_secs_f64(num(p, "drain_s", 10.0)?),
            endpoint,
            connections: positive(
                p,
                "connections",
                10.0,
                1.0,
                "the connections the load is sent over",
            )? as usize,
            rate_per_s,
            hold,
            hold_idle: Duration::from_secs_f64(num(p, "hold_s", 1.0)?),
            open_within: Duration::from_secs_f64(positive(
                p,
                "open_within_s",
                20.0,
                0.1,
                "seconds to open the held connections in",
            )?),
            keep_alive_s: match num(p, "keep_alive_s", 0.0)?.ceil() as u64 {
                0 => None,
                s => Some(s),
            },
            duration: Duration::from_secs_f64(positive(
                p,
                "duration_s",
                5.0,
                0.1,
                "seconds of timed load",
            )?),
            warmup: Duration::from_secs_f64(num(p, "warmup_s", 1.0)?),
            timeout: Duration::from_secs_f64(positive(
                p,
                "request_timeout_s",
                10.0,
                0.1,
                "seconds a request may take",
            )?),
            workers,
            threads: count("threads", &server.threads)?,
            db_pool,
            upstream_pool: count(
                "upstream_pool",
                server.upstream_pool.as_ref().unwrap_or(&server.threads),
            )?,
        })
    }
}

/// One line on the control pipe.
pub(crate) struct Ctl(pub(crate) std::fs::File);

impl Ctl {
    pub(crate) fn send(&mut self, v: &Value) -> std::io::Result<()> {
        let mut line = v.to_string();
        line.push('\n');
        self.0.write_all(line.as_bytes())
    }

    /// Says `ready`, naming the server's root when it is not this process's child (`adopted`,
    /// docs/protocol.md), and waits for the runner's `go` on stdin.
    pub(crate) fn ready_and_wait_for_go(&mut self, server: &RunningServer) -> anyhow::Result<()> {
        let mut ready = json!({"event": "ready", "pid": std::process::id()});
        if server.adopted() {
            ready["adopted"] = json!([server.pid()]);
        }
        self.send(&ready)?;
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        if line.trim() != "go" {
            anyhow::bail!("expected 'go' on stdin, got {:?}", line.trim());
        }
        Ok(())
    }
}

/// The server's figures of one run (`extra.server`); `attempted`: the requests or messages its
/// CPU time is divided by.
pub(crate) fn server_figures(
    server: &Server,
    cell: &Cell,
    cpus: &[usize],
    cpu_s: f64,
    attempted: f64,
    mem: &Memory,
) -> Value {
    json!({
        "name": server.name,
        "kind": server.kind.name(),
        "workers": cell.workers,
        "threads": cell.threads,
        "db_pool_per_worker": cell.db_pool,
        "upstream_pool_per_worker": cell.upstream_pool,
        "cpus": cpus,
        "cpu_s": cpu_s,
        "cpu_ms_per_request": cpu_s * 1000.0 / attempted.max(1.0),
        "rss_mib": mem.peak_tree_mib,
        "processes": mem.processes,
        "rss_per_process_mib": mem.per_process_mib,
    })
}

/// Readings of the server tree's summed RSS taken to find its level.
const RSS_READINGS: usize = 5;

/// The median of [`RSS_READINGS`] readings of the tree's summed RSS, MiB, [`MEMORY_EVERY`]
/// apart, with the runtime driven between them (so connections' tasks see what arrives).
pub(crate) fn settled_rss_mib(rt: &tokio::runtime::Runtime, root: i32) -> f64 {
    let v: Vec<f64> = (0..RSS_READINGS)
        .map(|_| {
            rt.block_on(async { tokio::time::sleep(MEMORY_EVERY).await });
            tree_rss_mib(root)
        })
        .collect();
    crate::stats::median(&v)
}

/// The summed RSS of `root` and its descendants, MiB.
fn tree_rss_mib(root: i32) -> f64 {
    crate::procfs::tree(root)
        .iter()
        .map(|&p| crate::procfs::status(p, "VmRSS").unwrap_or(0) as f64 / 1024.0)
        .sum()
}

/// This process's CPU seconds (user + system).
pub(crate) fn own_cpu_s() -> f64 {
    crate::procfs::PidStat::read(std::process::id() as i32).map_or(0.0, |s| s.cpu_s(false))
}

/// The server tree's memory, read every [`MEMORY_EVERY`] on a thread of its own.
pub(crate) struct MemoryWatch {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<Memory>,
}

/// What [`MemoryWatch`] saw.
#[derive(Default)]
pub(crate) struct Memory {
    /// The largest sum of the tree's RSS at one reading, MiB.
    peak_tree_mib: f64,
    /// Processes in the tree at the last reading.
    processes: usize,
    /// Each process's largest RSS, MiB, largest first.
    per_process_mib: Vec<f64>,
    /// The tree's largest summed RSS in each whole second from the start, MiB (None: no
    /// reading in that second).
    pub(crate) per_second_mib: Vec<Option<f64>>,
}

impl Memory {
    /// The largest summed RSS of the tree at any reading, MiB.
    pub(crate) fn peak_mib(&self) -> f64 {
        self.peak_tree_mib
    }
}

impl MemoryWatch {
    pub(crate) fn start(root: i32) -> MemoryWatch {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let mut m = Memory::default();
            let mut per: std::collections::BTreeMap<i32, f64> = Default::default();
            loop {
                let tree = crate::procfs::tree(root);
                let mut sum = 0.0;
                for &p in &tree {
                    let mib = crate::procfs::status(p, "VmRSS").unwrap_or(0) as f64 / 1024.0;
                    sum += mib;
                    let e = per.entry(p).or_default();
                    *e = e.max(mib);
                }
                m.peak_tree_mib = m.peak_tree_mib.max(sum);
                let second = start.elapsed().as_secs() as usize;
                if m.per_second_mib.len() <= second {
                    m.per_second_mib.resize(second + 1, None);
                }
                let slot = &mut m.per_second_mib[second];
                *slot = Some(slot.map_or(sum, |s| s.max(sum)));
                m.processes = tree.len();
                if flag.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(MEMORY_EVERY);
            }
            m.per_process_mib = per.into_values().collect();
            m.per_process_mib.sort_by(|a, b| b.total_cmp(a));
            m
        });
        MemoryWatch { stop, handle }
    }

    pub(crate) fn stop(self) -> Memory {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        serde_json::from_value(json!({
            "name": "s", "title": "t", "kind": "sync",
            "command": ["{python}", "{port}"],
            "workers": "2*cores+1", "db_pool": 4,
        }))
        .unwrap()
    }

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_load_that_would_send_nothing_is_refused() {
        for (key, value) in [
            ("connections", 0.0),
            ("duration_s", 0.0),
            ("request_timeout_s", 0.0),
            ("open_within_s", 0.0),
        ] {
            let err = Cell::read(&params(json!({ key: value })), &server(), 2)
                .err()
                .unwrap_or_else(|| panic!("{key} = {value} was taken"))
                .to_string();
            assert!(err.contains(&format!("parameter {key} = 0")), "{err}");
        }
        let one = Cell::read(&params(json!({"connections": 1})), &server(), 2).unwrap();
        assert_eq!(one.connections, 1);
    }

    #[test]
    fn db_connections_split_evenly_over_the_workers_or_are_refused() {
        let own = Cell::read(&params(json!({})), &server(), 2).unwrap();
        assert_eq!((own.workers, own.db_pool), (5, 4));
        let equal = Cell::read(&params(json!({"db_connections": 20})), &server(), 2).unwrap();
        assert_eq!((equal.workers, equal.db_pool), (5, 4));
        let equal = Cell::read(&params(json!({"db_connections": 12})), &server(), 1).unwrap();
        assert_eq!((equal.workers, equal.db_pool), (3, 4));
        let uneven = Cell::read(&params(json!({"db_connections": 12})), &server(), 2)
            .err()
            .unwrap()
            .to_string();
        assert!(uneven.contains("multiple of 5"), "{uneven}");
        let err = Cell::read(&params(json!({"db_connections": 2})), &server(), 2)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("server s") && err.contains("at least 5"),
            "{err}"
        );
    }
}
