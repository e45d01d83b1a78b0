//! Stage 2 of `asynclab run`: starts the servers the planned scenarios need (mock HTTP, TCP
//! echo, PostgreSQL) and, for every network distance the plan's cells ask for, a delay line
//! in front of each service they use; hands out the addresses; dropping [`Services`] stops them.
//! While the mock server or a delay line runs, it holds the CPU wake-up latency request
//! ([`WakeHold`]) their timers need. A driver that is the client role of `--hosts containers`
//! starts no mock server: it uses the server role's, and measures the round trips to the other
//! roles first.

use std::sync::Arc;

use anyhow::Context;

use super::plan::RunPlan;
use crate::catalogue::Service;
use crate::hosts::{round_trip, Deployed};
use crate::results::DelayLineRecord;
use crate::runner::matrix::Network;
use crate::runner::process::{RoleProcess, Routes, ServiceAddrs};
use crate::services::delay_line::{DelayLine, DelaySpec, JitterShape};
use crate::services::echo::EchoServer;
use crate::services::mock_http::MockHttp;
use crate::services::postgres::{PgBackend, Postgres};
use crate::services::wake_hold::WakeHold;

/// The running services (guards that stop them when dropped) and their addresses.
pub struct Services {
    // Fields drop in declaration order: the delay lines, PostgreSQL, echo, then HTTP, the
    // reverse of starting.
    /// The delay lines, with the service each stands in front of.
    pub lines: Vec<(Service, DelayLine)>,
    /// PostgreSQL, when a scenario needs it.
    pub pg: Option<Postgres>,
    /// The TCP echo server, when a scenario needs it.
    pub echo: Option<EchoServer>,
    /// The mock HTTP server, when a scenario needs it.
    pub http: Option<MockHttp>,
    /// Where the workers find them, per network distance.
    pub routes: Routes,
    /// The 0 µs CPU wake-up latency request, held while the mock server's delays or a delay
    /// line's releases are timed (their precision depends on how fast an idle CPU wakes).
    pub wake: WakeHold,
    /// A service the plan needs that could not be had, when the run may go on without it.
    pub missing: Option<Missing>,
    /// Where the roles ran, when apart (`--hosts containers`), with the round trips measured.
    pub hosts: Option<crate::results::HostsRecord>,
    /// The other roles' process trees, when apart: their CPU is the lab's.
    pub roles: Vec<RoleProcess>,
    /// Where services under test start, when the server is a role of its own.
    pub server_role: Option<crate::hosts::exec::ServerRole>,
}

/// A service that could not be started, and why (the error's one line, with its fix).
#[derive(Debug, Clone)]
pub struct Missing {
    /// The service.
    pub service: Service,
    /// Why, and the fix.
    pub reason: String,
}

impl Services {
    /// Root pids of the services that run as processes (PostgreSQL's): their CPU time is the
    /// lab's own, not interference.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids = self.pg.as_ref().map(|p| p.pids()).unwrap_or_default();
        pids.extend(self.roles.iter().map(|r| r.pid));
        pids
    }

    /// The services the placement could not pin: PostgreSQL in a container or at DATABASE_URL
    /// does not inherit the driver's CPU mask.
    pub fn not_placed(&self) -> Option<String> {
        let pg = self.pg.as_ref().filter(|p| !p.is_local())?;
        Some(format!(
            "PostgreSQL ({}) runs where its host puts it",
            pg.describe()
        ))
    }

    /// What the delay lines add, for results.json.
    pub fn delay_line_records(&self) -> Vec<DelayLineRecord> {
        self.lines
            .iter()
            .map(|(service, line)| {
                let spec = line.spec();
                DelayLineRecord {
                    service: service.name().to_string(),
                    rtt_ms: spec.rtt.as_secs_f64() * 1e3,
                    jitter_ms: spec.jitter.as_secs_f64() * 1e3,
                }
            })
            .collect()
    }

    /// Reads the mock server's served-request counter, when it runs: in this process, or over
    /// the network in the server role's container.
    pub fn http_requests(&self) -> Option<Arc<dyn Fn() -> Option<u64> + Send + Sync>> {
        if let Some(h) = &self.http {
            let stats = h.stats();
            return Some(Arc::new(move || Some(stats.requests())));
        }
        let url = self
            .hosts
            .as_ref()
            .and(self.routes.direct.http_url.as_ref())?;
        let addr = url.trim_start_matches("http://").to_string();
        Some(Arc::new(move || crate::hosts::stats::requests(&addr)))
    }
}

/// Starts what the plan's scenarios need, in the order HTTP, echo, PostgreSQL; a service that
/// fails to start stops the ones already running. PostgreSQL that cannot be had is an error
/// under `strict` or when every scenario needs it; otherwise it is [`Services::missing`], no
/// delay line stands before it, and the caller leaves its scenarios out.
///
/// The calling thread is pinned to the placement's service CPUs first: the services' runtime
/// threads and PostgreSQL's processes inherit that mask, and so do the driver's later threads.
pub fn start(
    plan: &RunPlan,
    pg: PgBackend,
    pg_image: &str,
    strict: bool,
    deployed: Option<&Deployed>,
) -> anyhow::Result<Services> {
    let cpus = &plan.placement.service_cpus;
    if !cpus.is_empty() {
        crate::affinity::pin_this_thread(cpus).with_context(|| {
            format!(
                "pinning the driver and services to CPU(s) {cpus:?}; run with --placement unpinned"
            )
        })?;
    }
    let hosts = deployed.map(measure_distances).transpose()?;
    let local = deployed.is_none();
    let http = if local && plan.needs(Service::Http) {
        Some(MockHttp::start("127.0.0.1:0".parse()?).context("starting the mock HTTP server")?)
    } else {
        None
    };
    let echo = if local && plan.needs(Service::Echo) {
        Some(EchoServer::start("127.0.0.1:0".parse()?).context("starting the TCP echo server")?)
    } else {
        None
    };
    let mut missing = None;
    let pg = if plan.needs(Service::Postgres) {
        match Postgres::provide_with(pg, pg_image) {
            Ok(p) => Some(p),
            Err(e) => {
                crate::interrupt::check()?;
                let every = plan
                    .scenarios
                    .iter()
                    .all(|s| s.scenario.services.contains(&Service::Postgres));
                if strict || every {
                    return Err(e);
                }
                missing = Some(Missing {
                    service: Service::Postgres,
                    reason: format!("{e:#}"),
                });
                None
            }
        }
    } else {
        None
    };
    let direct = match deployed {
        Some(d) => ServiceAddrs {
            http_url: plan.needs(Service::Http).then(|| d.http_url.clone()),
            database_url: pg.as_ref().map(|p| p.url().to_string()),
            echo_addr: plan.needs(Service::Echo).then(|| d.echo_addr.clone()),
        },
        None => ServiceAddrs {
            http_url: http.as_ref().map(|h| h.url()),
            database_url: pg.as_ref().map(|p| p.url().to_string()),
            echo_addr: echo.as_ref().map(|e| e.addr().to_string()),
        },
    };
    let wake = if http.is_some() || !networks(plan, missing.as_ref().map(|m| m.service)).is_empty()
    {
        WakeHold::acquire()
    } else {
        WakeHold::none("no mock server or delay line in this run")
    };
    let mut services = Services {
        hosts,
        roles: deployed.map(role_processes).unwrap_or_default(),
        server_role: deployed.and_then(Deployed::server_role),
        missing,
        wake,
        lines: Vec::new(),
        pg,
        echo,
        http,
        routes: Routes {
            direct,
            delayed: Vec::new(),
        },
    };
    let missing = services.missing.as_ref().map(|m| m.service);
    for (network, needs) in networks(plan, missing) {
        let addrs = start_lines(&mut services, network, &needs)?;
        services.routes.delayed.push((network, addrs));
    }
    Ok(services)
}

/// The other roles' process trees, with the services each runs.
fn role_processes(d: &Deployed) -> Vec<RoleProcess> {
    d.role_pids
        .iter()
        .map(|(role, pid)| RoleProcess {
            role: role.clone(),
            pid: *pid,
            serves: crate::hosts::serves(role).to_vec(),
        })
        .collect()
}

/// The round trips from this client role to the server (TCP echo) and the database (`SELECT
/// 1`), and the deployment's record with the client's own address filled in.
fn measure_distances(d: &Deployed) -> anyhow::Result<crate::results::HostsRecord> {
    let (to_server, client_ip) = round_trip::echo("client", "server", &d.echo_addr)
        .context("--hosts containers: timing the round trip to the server role")?;
    let to_database = round_trip::postgres("client", "database", &d.database_url)
        .context("--hosts containers: timing the round trip to the database role")?;
    let mut record = d.record.clone();
    for r in record.roles.iter_mut().filter(|r| r.role == "client") {
        r.address = client_ip.to_string();
    }
    record.round_trips = vec![to_server, to_database];
    Ok(record)
}

/// Every network distance the plan's cells ask for, with the services those cells use; the
/// cells of scenarios that need the `missing` service are left out.
fn networks(plan: &RunPlan, missing: Option<Service>) -> Vec<(Network, Vec<Service>)> {
    let mut out: Vec<(Network, Vec<Service>)> = Vec::new();
    let runs = |s: &&super::plan::PlannedScenario| {
        missing.is_none_or(|m| !s.scenario.services.contains(&m))
    };
    for spec in plan.scenarios.iter().filter(runs).flat_map(|s| &s.specs) {
        let Some(network) = spec.network else {
            continue;
        };
        let i = match out.iter().position(|(n, _)| *n == network) {
            Some(i) => i,
            None => {
                out.push((network, Vec::new()));
                out.len() - 1
            }
        };
        for service in &spec.services {
            if !out[i].1.contains(service) {
                out[i].1.push(*service);
            }
        }
    }
    out
}

/// Starts one delay line with `network` in front of each of `needs`; the addresses through them.
fn start_lines(
    services: &mut Services,
    network: Network,
    needs: &[Service],
) -> anyhow::Result<ServiceAddrs> {
    let spec = DelaySpec {
        rtt: std::time::Duration::from_secs_f64(network.rtt_ms / 1e3),
        jitter: std::time::Duration::from_secs_f64(network.jitter_ms / 1e3),
        shape: JitterShape::Uniform,
        bandwidth_bytes_per_s: None,
    };
    let mut addrs = ServiceAddrs::default();
    for service in needs {
        let direct = &services.routes.direct;
        let upstream = match service {
            Service::Http => direct
                .http_url
                .as_deref()
                .map(|u| u.trim_start_matches("http://").parse())
                .transpose()?,
            Service::Echo => direct.echo_addr.as_deref().map(str::parse).transpose()?,
            Service::Postgres => match &services.pg {
                Some(pg) => Some(crate::services::postgres::external::tcp_upstream(pg.url())?),
                None => None,
            },
        };
        let Some(upstream) = upstream else { continue };
        let line = DelayLine::start("127.0.0.1:0".parse()?, upstream, spec).with_context(|| {
            format!(
                "starting a delay line ({}) before the {} service",
                network.describe(),
                service.name()
            )
        })?;
        let at = line.addr();
        match service {
            Service::Http => addrs.http_url = Some(format!("http://{at}")),
            Service::Echo => addrs.echo_addr = Some(at.to_string()),
            Service::Postgres => {
                let url = services.pg.as_ref().map(|p| p.url()).unwrap_or_default();
                addrs.database_url = Some(crate::services::postgres::external::via(url, at)?);
            }
        }
        services.lines.push((*service, line));
    }
    Ok(addrs)
}
