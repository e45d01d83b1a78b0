//! Stage 2 of `asynclab run`: starts the servers the planned scenarios need (mock HTTP, TCP
//! echo, PostgreSQL) and hands out their addresses; dropping [`Services`] stops them.

use std::sync::Arc;

use anyhow::Context;

use super::plan::RunPlan;
use crate::catalogue::Service;
use crate::runner::process::ServiceAddrs;
use crate::services::echo::EchoServer;
use crate::services::mock_http::MockHttp;
use crate::services::postgres::{PgBackend, Postgres};

/// The running services (guards that stop them when dropped) and their addresses.
pub struct Services {
    // Fields drop in declaration order: PostgreSQL, echo, then HTTP, the reverse of starting.
    /// PostgreSQL, when a scenario needs it.
    pub pg: Option<Postgres>,
    /// The TCP echo server, when a scenario needs it.
    pub echo: Option<EchoServer>,
    /// The mock HTTP server, when a scenario needs it.
    pub http: Option<MockHttp>,
    /// Where the workers find them.
    pub addrs: ServiceAddrs,
}

impl Services {
    /// Root pids of the services that run as processes (PostgreSQL's): their CPU time is the
    /// lab's own, not interference.
    pub fn pids(&self) -> Vec<i32> {
        self.pg.as_ref().map(|p| p.pids()).unwrap_or_default()
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

    /// Reads the mock server's served-request counter, when it runs.
    pub fn http_requests(&self) -> Option<Arc<dyn Fn() -> u64 + Send + Sync>> {
        self.http.as_ref().map(|h| {
            let stats = h.stats();
            Arc::new(move || stats.requests()) as Arc<dyn Fn() -> u64 + Send + Sync>
        })
    }
}

/// Starts what the plan's scenarios need, in the order HTTP, echo, PostgreSQL; a service that
/// fails to start stops the ones already running.
///
/// The calling thread is pinned to the placement's service CPUs first: the services' runtime
/// threads and PostgreSQL's processes inherit that mask, and so do the driver's later threads.
pub fn start(plan: &RunPlan, pg: PgBackend, pg_image: &str) -> anyhow::Result<Services> {
    let cpus = &plan.placement.service_cpus;
    if !cpus.is_empty() {
        crate::runner::affinity::pin_this_thread(cpus).with_context(|| {
            format!(
                "pinning the driver and services to CPU(s) {cpus:?}; run with --placement unpinned"
            )
        })?;
    }
    let http = if plan.needs(Service::Http) {
        Some(MockHttp::start("127.0.0.1:0".parse()?).context("starting the mock HTTP server")?)
    } else {
        None
    };
    let echo = if plan.needs(Service::Echo) {
        Some(EchoServer::start("127.0.0.1:0".parse()?).context("starting the TCP echo server")?)
    } else {
        None
    };
    let pg = if plan.needs(Service::Postgres) {
        Some(Postgres::provide_with(pg, pg_image)?)
    } else {
        None
    };
    let addrs = ServiceAddrs {
        http_url: http.as_ref().map(|h| h.url()),
        database_url: pg.as_ref().map(|p| p.url().to_string()),
        echo_addr: echo.as_ref().map(|e| e.addr().to_string()),
    };
    Ok(Services {
        pg,
        echo,
        http,
        addrs,
    })
}
