//! `asynclab loadgen` (hidden): the worker of a `loadgen` cell. It speaks the workers'
//! protocol (docs/protocol.md) so the runner treats it as any worker, and in it starts the
//! service under test, warms it up, drives it with [`crate::loadgen`] between `go` and `done`,
//! and reports the requests' latencies and the server tree's CPU and memory.
//!
//! Set-up (untimed): start the server on a free loopback port, pinned to its own CPUs, with
//! the services' addresses in its environment; wait for `GET /plain`; send the cell's endpoint
//! `warmup_s` of closed-loop load over its connections (pools filled, code paths warm); with
//! `hold`, open that many keep-alive connections ([`crate::loadgen::hold`]), hold them idle and
//! read the server tree's RSS before and after, and the timed load becomes a trickle across
//! them. Then `ready`; on `go` the timed load; `done`; the result; the server is stopped
//! (SIGTERM, then SIGKILL of its tree) whatever happened.

use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Map, Value};

use crate::catalogue::servers::Count;
use crate::catalogue::Server;
use crate::loadgen::{self, hold, Endpoint, Load};
use crate::services::under_test::{self, Launch, RunningServer};

/// How long a server may take to answer its first `GET /plain`.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the server tree's memory is read during the timed load.
const MEMORY_EVERY: Duration = Duration::from_millis(100);

/// `asynclab loadgen`: started by the runner, never by hand.
#[derive(Debug, Args, Clone)]
pub struct LoadgenArgs {
    /// The `[[server]]` to start, as JSON.
    #[arg(long)]
    pub server: String,
    /// Its app folder.
    #[arg(long)]
    pub dir: PathBuf,
    /// CPUs to pin it to (comma-separated; empty: not pinned).
    #[arg(long, default_value = "")]
    pub server_cpus: String,
    /// The environment's Python, the command's `{python}`.
    #[arg(long)]
    pub python: PathBuf,
    /// The cell's parameters, a JSON object.
    #[arg(long)]
    pub params: String,
    /// The services' addresses, a JSON object.
    #[arg(long)]
    pub services: String,
    /// Where the server's output goes.
    #[arg(long)]
    pub log_dir: PathBuf,
    /// The control pipe to the driver.
    #[arg(long, default_value_t = 3)]
    pub ctl_fd: i32,
}

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

impl Cell {
    fn read(p: &Map<String, Value>, server: &Server, cores: usize) -> anyhow::Result<Cell> {
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
        Ok(Cell {
            clients,
            bound_ms: num(p, "bound_ms", 100.0)?,
            broadcast_delay_ms: num(p, "broadcast_delay_ms", 0.0)?,
            drain: Duration::from_secs_f64(num(p, "drain_s", 10.0)?),
            endpoint,
            connections: (num(p, "connections", 10.0)? as usize).max(1),
            rate_per_s,
            hold,
            hold_idle: Duration::from_secs_f64(num(p, "hold_s", 1.0)?),
            open_within: Duration::from_secs_f64(num(p, "open_within_s", 20.0)?.max(0.1)),
            keep_alive_s: match num(p, "keep_alive_s", 0.0)?.ceil() as u64 {
                0 => None,
                s => Some(s),
            },
            duration: Duration::from_secs_f64(num(p, "duration_s", 5.0)?.max(0.1)),
            warmup: Duration::from_secs_f64(num(p, "warmup_s", 1.0)?),
            timeout: Duration::from_secs_f64(num(p, "request_timeout_s", 10.0)?.max(0.1)),
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

/// Connections PostgreSQL keeps for others: the lab's seeding and checks, superusers.
const DB_SPARE_CONNECTIONS: usize = 10;

/// Refuses a server whose pools together would exceed the database's `max_connections`.
fn check_connections(server: &str, total: usize, url: &str) -> anyhow::Result<()> {
    let settings = crate::services::postgres::seed::server_settings(url)?;
    let max: usize = settings
        .iter()
        .find(|(k, _)| k == "max_connections")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(usize::MAX);
    if total + DB_SPARE_CONNECTIONS > max {
        anyhow::bail!(
            "server {server}: its pools would hold {total} database connections, and PostgreSQL allows {max} ({DB_SPARE_CONNECTIONS} kept for the lab): lower db_connections, db_pool or workers"
        );
    }
    Ok(())
}

/// One line on the control pipe.
pub(crate) struct Ctl(std::fs::File);

impl Ctl {
    pub(crate) fn send(&mut self, v: &Value) -> std::io::Result<()> {
        let mut line = v.to_string();
        line.push('\n');
        self.0.write_all(line.as_bytes())
    }

    /// Says `ready` and waits for the runner's `go` on stdin.
    pub(crate) fn ready_and_wait_for_go(&mut self) -> anyhow::Result<()> {
        self.send(&json!({"event": "ready", "pid": std::process::id()}))?;
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        if line.trim() != "go" {
            anyhow::bail!("expected 'go' on stdin, got {:?}", line.trim());
        }
        Ok(())
    }
}

/// Runs one cell; errors go to the driver as an `error` event.
pub fn execute(args: &LoadgenArgs) -> anyhow::Result<i32> {
    // SAFETY: F_GETFD only asks whether the descriptor is open; F_SETFD marks it close-on-exec
    // so the server never holds the pipe (EOF on it means this process is gone).
    if unsafe { libc::fcntl(args.ctl_fd, libc::F_GETFD) } < 0
        || unsafe { libc::fcntl(args.ctl_fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0
    {
        anyhow::bail!(
            "loadgen: ctl fd {} is not open; the runner starts this",
            args.ctl_fd
        );
    }
    // SAFETY: the descriptor is open (checked above) and this process's alone from here on.
    let mut ctl = Ctl(unsafe { std::fs::File::from_raw_fd(args.ctl_fd) });
    match work(args, &mut ctl) {
        Ok(()) => Ok(0),
        Err(e) => {
            let _ = ctl.send(&json!({"event": "error", "message": format!("{e:#}")}));
            eprintln!("loadgen: {e:#}");
            Ok(1)
        }
    }
}

/// Raises this process's open-file limit to its hard limit, for the generator and the server
/// under test (which inherits it): 1,000 connections need more descriptors than the common soft
/// limit of 1,024.
fn raise_fd_limit() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the one struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

fn work(args: &LoadgenArgs, ctl: &mut Ctl) -> anyhow::Result<()> {
    raise_fd_limit();
    let server: Server = serde_json::from_str(&args.server)?;
    let params: Map<String, Value> = serde_json::from_str(&args.params)?;
    let services: Map<String, Value> = serde_json::from_str(&args.services)?;
    let server_cpus = crate::affinity::parse_cpus(&args.server_cpus)?;
    let cores = if server_cpus.is_empty() {
        crate::affinity::allowed_cpus().len().max(1)
    } else {
        server_cpus.len()
    };
    let cell = Cell::read(&params, &server, cores)?;
    let port = under_test::free_port()?;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut env = vec![
        ("ASYNCLAB_DB_POOL".to_string(), cell.db_pool.to_string()),
        (
            "ASYNCLAB_BROADCAST_DELAY_MS".to_string(),
            cell.broadcast_delay_ms.to_string(),
        ),
        (
            "ASYNCLAB_UPSTREAM_POOL".to_string(),
            cell.upstream_pool.to_string(),
        ),
    ];
    if let (Endpoint::Db { .. }, Some(url)) = (
        &cell.endpoint,
        services.get("database_url").and_then(Value::as_str),
    ) {
        check_connections(&server.name, cell.db_pool * cell.workers, url)?;
    }
    for (key, var) in [
        ("database_url", "ASYNCLAB_DATABASE_URL"),
        ("http_url", "ASYNCLAB_UPSTREAM_URL"),
    ] {
        if let Some(v) = services.get(key).and_then(Value::as_str) {
            env.push((var.into(), v.into()));
        }
    }
    std::fs::create_dir_all(&args.log_dir)?;
    let launch = Launch {
        name: server.name.clone(),
        argv: server.argv(
            &args.python.display().to_string(),
            port,
            cell.workers,
            cell.threads,
            cell.keep_alive_s,
        ),
        dir: args.dir.clone(),
        env,
        cpus: server_cpus.clone(),
        log: args
            .log_dir
            .join(format!("{}-{}.log", server.name, std::process::id())),
        owner: under_test::owner_value(std::os::unix::process::parent_id() as i32),
    };
    let mut running = RunningServer::start(&launch)?;
    running.wait_ready(addr, START_TIMEOUT)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if cell.clients > 0 {
        let room = super::fanout_cell::Setting {
            server: &server,
            cell: &cell,
            cpus: &server_cpus,
            addr,
        };
        return room.run(&rt, &mut running, ctl);
    }
    let load = Load {
        addr,
        endpoint: cell.endpoint.clone(),
        connections: cell.connections,
        rate_per_s: cell.rate_per_s,
        duration: cell.duration,
        timeout: cell.timeout,
    };
    if !cell.warmup.is_zero() {
        let warm = rt.block_on(loadgen::run(&Load {
            rate_per_s: 0.0,
            duration: cell.warmup,
            ..load.clone()
        }));
        if warm.samples.is_empty() {
            anyhow::bail!(
                "service {}: no correct answer to {} in {:.1} s of warm-up ({} errors, first: {}); its log: {}",
                server.name,
                load.endpoint.path(),
                cell.warmup.as_secs_f64(),
                warm.errors,
                warm.error_samples.first().map_or("none", String::as_str),
                running.log.display()
            );
        }
    }
    let (held_figures, held) = if cell.hold > 0 {
        let (figures, senders) = hold(&rt, &load, &cell, &mut running)?;
        (Some(figures), Some(senders))
    } else {
        (None, None)
    };
    // The trickle goes across the held connections, request i on connection i mod hold.
    let load = match &held {
        Some(_) => Load {
            connections: cell.hold,
            ..load
        },
        None => load,
    };
    ctl.ready_and_wait_for_go()?;
    let tree_cpu = |r: &RunningServer| crate::runner::sampler::tree_runtime_s(r.pid());
    let cpu_before = tree_cpu(&running);
    let client_before = own_cpu_s();
    let memory = MemoryWatch::start(running.pid());
    let start = Instant::now();
    let (out, senders) = match held {
        Some(senders) => rt.block_on(loadgen::run_over(&load, senders)),
        None => (rt.block_on(loadgen::run(&load)), Vec::new()),
    };
    let inside = start.elapsed();
    ctl.send(&json!({"event": "done"}))?;
    let open_at_end = hold::open_count(&senders);
    let server_cpu_s = tree_cpu(&running) - cpu_before;
    let client_cpu_s = own_cpu_s() - client_before;
    let mem = memory.stop();
    if let Some(status) = running.exited() {
        anyhow::bail!(
            "service {} exited under load ({status}); its log: {}",
            server.name,
            running.log.display()
        );
    }
    let attempted = (out.samples.len() + out.errors).max(1) as f64;
    let mut extra = json!({
        "server": server_figures(&server, &cell, &server_cpus, server_cpu_s, attempted, &mem),
        "client": {
            "connections": cell.connections,
            "connects": out.connects,
            "cpu_s": client_cpu_s,
            "cpu_share": client_cpu_s / inside.as_secs_f64().max(1e-9),
            "max_start_lag_ms": out.max_start_lag_ms,
        },
        "achieved_rate_per_s": out.achieved_rate_per_s(&load),
    });
    if let Some(mut figures) = held_figures {
        figures["open_at_end"] = open_at_end.into();
        extra["held"] = figures;
    }
    let (kind, sets) = if load.rate_per_s > 0.0 {
        let e = extra.as_object_mut().expect("an object");
        e.insert("offered_rate_per_s".into(), load.rate_per_s.into());
        e.insert("scheduled".into(), load.scheduled().into());
        e.insert("abandoned".into(), out.abandoned.into());
        let uncorrected: Vec<f64> = out.samples.iter().map(|s| s.service_ms()).collect();
        ("open-loop-corrected", json!({"uncorrected": uncorrected}))
    } else {
        ("service", json!({}))
    };
    let latencies: Vec<f64> = out.samples.iter().map(|s| s.corrected_ms()).collect();
    ctl.send(&json!({
        "event": "result",
        "ops": out.samples.len(),
        "errors": out.errors,
        "latencies_ms": latencies,
        "latency_kind": kind,
        "inside_wall_s": inside.as_secs_f64(),
        "error_samples": out.error_samples,
        "latency_sets_ms": sets,
        "extra": extra,
    }))?;
    drop(senders);
    drop(running);
    Ok(())
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

/// Opens the cell's `hold` connections (each with one answered request), holds them idle for
/// `hold_s` and reads the server tree's RSS before and after: the held connections as the
/// trickle will use them, and their figures for `extra.held`.
fn hold(
    rt: &tokio::runtime::Runtime,
    load: &Load,
    cell: &Cell,
    running: &mut RunningServer,
) -> anyhow::Result<(Value, Vec<Option<loadgen::Sender>>)> {
    let before = settled_rss_mib(rt, running.pid());
    let opened = rt.block_on(hold::open(load, cell.hold, cell.open_within));
    rt.block_on(async { tokio::time::sleep(cell.hold_idle).await });
    let after = settled_rss_mib(rt, running.pid());
    if let Some(status) = running.exited() {
        anyhow::bail!(
            "service {} exited while {} connections were opened to it ({status}); its log: {}",
            running.name,
            cell.hold,
            running.log.display()
        );
    }
    let open = opened.open();
    let figures = json!({
        "asked": cell.hold,
        "failed": opened.failed,
        "error_samples": opened.error_samples,
        "open_s": opened.elapsed.as_secs_f64(),
        "idle_s": cell.hold_idle.as_secs_f64(),
        "open_after_idle": open,
        "rss_before_mib": before,
        "rss_after_mib": after,
        "kib_per_connection": (open > 0).then(|| (after - before) * 1024.0 / open as f64),
    });
    // The trickle sends request i on slot i mod hold: spread it over the opening order.
    let used = load.scheduled().min(cell.hold);
    Ok((figures, hold::spread(opened.senders, used)))
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
}

impl MemoryWatch {
    pub(crate) fn start(root: i32) -> MemoryWatch {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
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
