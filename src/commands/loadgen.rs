//! `asynclab loadgen` (hidden): the worker of a `loadgen` cell. It speaks the workers'
//! protocol (docs/protocol.md) so the runner treats it as any worker, and in it starts the
//! service under test, warms it up, drives it with [`crate::loadgen`] between `go` and `done`,
//! and reports the requests' latencies and the server tree's CPU and memory.
//!
//! Set-up (untimed): start the server on a free loopback port, pinned to its own CPUs (under
//! `--hosts containers`, in the server role's container on its address, with its CPU set:
//! [`crate::hosts::exec`]), with the services' addresses in its environment; wait for `GET
//! /plain`; send the cell's endpoint `warmup_s` of closed-loop load over its connections (pools
//! filled, code paths warm); with `hold`, open that many keep-alive connections
//! ([`crate::loadgen::hold`]), hold them idle and read the server tree's RSS before and after,
//! and the timed load becomes a trickle across them. Then `ready`; on `go` the timed load;
//! `done`; the result; the server is stopped (SIGTERM, then SIGKILL of its tree) whatever
//! happened. A cell with `clients` is a WebSocket room instead: after the server answers,
//! `fanout_cell.rs` runs it.

use std::os::fd::FromRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Map, Value};

use super::loadgen_cell::{
    own_cpu_s, server_cores, server_figures, settled_rss_mib, Cell, Ctl, MemoryWatch,
};
use crate::catalogue::Server;
use crate::hosts::exec::ServerRole;
use crate::loadgen::{self, hold, Endpoint, Load};
use crate::services::under_test::{self, Launch, RunningServer};

/// How long a server may take to answer its first `GET /plain`.
const START_TIMEOUT: Duration = Duration::from_secs(60);

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
    /// The server role's container, address and CPUs, as JSON (`--hosts containers`): the
    /// server starts there instead of beside this process.
    #[arg(long)]
    pub server_role: Option<String>,
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
    let role: Option<ServerRole> = args
        .server_role
        .as_deref()
        .map(serde_json::from_str)
        .transpose()?;
    // In the server role's container, its CPU set is the server's.
    let server_cpus = match &role {
        Some(r) => r.cpus.clone(),
        None => crate::affinity::parse_cpus(&args.server_cpus)?,
    };
    let cell = Cell::read(&params, &server, server_cores(&server_cpus))?;
    let port = under_test::free_port()?;
    let host = role.as_ref().map_or("127.0.0.1", |r| r.address.as_str());
    let addr = std::net::SocketAddr::new(host.parse()?, port);
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
            host,
            port,
            cell.workers,
            cell.threads,
            cell.keep_alive_s,
        ),
        dir: args.dir.clone(),
        env,
        cpus: if role.is_some() {
            Vec::new()
        } else {
            server_cpus.clone()
        },
        log: args
            .log_dir
            .join(format!("{}-{}.log", server.name, std::process::id())),
        owner: under_test::owner_value(std::os::unix::process::parent_id() as i32),
    };
    let mut running = match &role {
        Some(r) => RunningServer::adopt(crate::hosts::exec::start(r, &launch)?, &launch),
        None => RunningServer::start(&launch)?,
    };
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
    ctl.ready_and_wait_for_go(&running)?;
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
    // The client's connections close before the server is stopped: a server that waits for
    // its open keep-alive connections on SIGTERM (gunicorn's gthread worker) would otherwise
    // wait out its graceful timeout. The runtime owns the connections' tasks.
    drop(senders);
    drop(rt);
    drop(running);
    Ok(())
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
