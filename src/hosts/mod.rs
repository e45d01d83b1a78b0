//! Where each role of a run runs: the client (the driver and its workers), the server (the mock
//! HTTP and echo servers) and the database (PostgreSQL). By default all three share this machine;
//! `--hosts containers` puts each in its own container on a private network of the Docker engine
//! ([`containers`]), with its own address and CPU set, so the traffic between roles crosses a
//! real network stack. [`round_trip`] measures that distance; [`sweep`] removes what a killed
//! driver left on the engine; [`exec`] starts services under test in the server role.

pub mod containers;
pub mod exec;
pub mod round_trip;
pub mod stats;
pub mod sweep;

use serde::{Deserialize, Serialize};

use crate::catalogue::Service;
use crate::results::HostsRecord;

/// `--hosts`: where the roles run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Hosts {
    /// Every role on this machine (the default).
    #[default]
    Local,
    /// Each role in its own container on a private network of the Docker engine.
    Containers,
}

/// The services a role runs: the server role the mock HTTP and echo servers, the database role
/// PostgreSQL.
pub fn serves(role: &str) -> &'static [Service] {
    match role {
        "server" => &[Service::Http, Service::Echo],
        "database" => &[Service::Postgres],
        _ => &[],
    }
}

/// Environment variable through which a driver running as the client role learns where the
/// other roles are (a JSON [`Deployed`]).
pub const DEPLOYED_ENV: &str = "ASYNCLAB_DEPLOYED";

/// What the client role is told: where the server and the database answer, and the record of
/// the deployment it adds its round trips to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deployed {
    /// The mock HTTP server, `http://ADDRESS:PORT`.
    pub http_url: String,
    /// The TCP echo server, `ADDRESS:PORT`.
    pub echo_addr: String,
    /// PostgreSQL, `postgresql://...`.
    pub database_url: String,
    /// The roles' containers, images and CPU sets (round trips still empty).
    pub record: HostsRecord,
    /// The host pid of each other role's container (its init), whose process tree the client
    /// reads in /proc: it shares this machine's pid namespace.
    pub role_pids: Vec<(String, i32)>,
}

impl Deployed {
    /// Where services under test start: the server role's container, address and CPUs.
    pub fn server_role(&self) -> Option<exec::ServerRole> {
        let r = self.record.roles.iter().find(|r| r.role == "server")?;
        Some(exec::ServerRole {
            container: r.container.clone(),
            address: r.address.clone(),
            cpus: r.cpus.clone(),
        })
    }

    /// The deployment named by [`DEPLOYED_ENV`], when this driver is a client role.
    pub fn from_env() -> anyhow::Result<Option<Deployed>> {
        match std::env::var(DEPLOYED_ENV) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                anyhow::anyhow!("{DEPLOYED_ENV} is not a deployment the lab wrote: {e}")
            }),
            Err(_) => Ok(None),
        }
    }
}
