//! The three roles in containers on one Docker engine: a private bridge network, PostgreSQL
//! (the database role), the mock HTTP and echo servers and the services under test (the server
//! role: `asynclab mock-server`, and services started in it by [`super::exec`]) and the driver
//! itself with its workers (the client role), each with its own address and CPU set. The image
//! is the one `compose/build-image.sh` builds from Debian's packages; the lab's binary, the
//! interpreters and the environments are bind-mounted into the client and server roles at the
//! paths they have here, so the engine must run on this machine. Everything is labelled with its
//! owner ([`super::sweep`]) and removed when the [`Deployment`] drops.

use std::collections::HashMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use futures_util::StreamExt as _;
use testcontainers::bollard::container::LogOutput;
use testcontainers::bollard::errors::Error::DockerResponseServerError;
use testcontainers::bollard::models::{ContainerCreateBody, HostConfig, NetworkCreateRequest};
use testcontainers::bollard::query_parameters::{
    CreateContainerOptionsBuilder, KillContainerOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder,
};

use super::sweep::LABEL_OWNER;
use super::Deployed;
use crate::interrupt;
use crate::results::{HostsRecord, RoleRecord};
use crate::services::postgres::container::{
    owner_label, probe, server_command, Engine, REMOVE_TIMEOUT, STARTUP_TIMEOUT,
};
use crate::services::postgres::local::{DATABASE, USER};

/// The mock HTTP server's port in the server role.
pub const HTTP_PORT: u16 = 8080;
/// The echo server's port in the server role.
pub const ECHO_PORT: u16 = 7007;
/// Label holding the deployment's token, on its network and containers.
pub const LABEL_DEPLOYMENT: &str = "asynclab.deployment";
/// Label holding a container's role.
pub const LABEL_ROLE: &str = "asynclab.role";
/// Where the client role finds the engine (the default socket, which the load generator's
/// cleared environment falls back to).
const ENGINE_SOCKET: &str = "/var/run/docker.sock";
/// How long the client role may take to write what it measured after a Ctrl-C.
const STOP_GRACE: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(50);

/// Each role's CPU set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleCpus {
    /// The driver and its workers.
    pub client: Vec<usize>,
    /// The mock servers.
    pub server: Vec<usize>,
    /// PostgreSQL.
    pub database: Vec<usize>,
}

impl RoleCpus {
    /// The client on the first of `allowed`, the server on the second, the database on the
    /// third, or beside the server when there are two; every role on the one CPU there is.
    pub fn split(allowed: &[usize]) -> RoleCpus {
        let at = |i: usize| vec![allowed[i.min(allowed.len() - 1)]];
        RoleCpus {
            client: at(0),
            server: at(1),
            database: at(2),
        }
    }
}

/// What the deployment runs: the image, the CPU sets, the lab's binary and the host paths the
/// client role needs (mounted at the same paths).
#[derive(Debug, Clone)]
pub struct Spec {
    /// The image every role runs.
    pub image: String,
    /// Each role's CPUs.
    pub cpus: RoleCpus,
    /// This lab's binary.
    pub exe: PathBuf,
    /// Host paths mounted read-write into the client role (its working folder, the results).
    pub rw: Vec<PathBuf>,
    /// Host paths mounted read-only (the interpreters).
    pub ro: Vec<PathBuf>,
}

/// One role's container: what it runs, where, with what.
struct Role<'a> {
    /// `client`, `server` or `database`.
    name: &'a str,
    cpus: &'a [usize],
    /// The image's entrypoint when `None`.
    entrypoint: Option<String>,
    cmd: Vec<String>,
    env: Vec<String>,
    /// `HOST:CONTAINER[:ro]` mounts.
    binds: Vec<String>,
    workdir: Option<String>,
    /// Share this machine's pid namespace, so the client reads the other roles' processes in
    /// /proc (with the capability to read their memory maps) and counts the machine's CPU as it
    /// does without containers.
    host_pids: bool,
}

/// A running deployment of the server and database roles; dropping it removes every container
/// and the network.
pub struct Deployment {
    token: String,
    network: String,
    containers: Vec<String>,
    image_id: String,
    roles: Vec<RoleRecord>,
    database_url: String,
    server_ip: String,
    /// Each started role's init, by its host pid.
    pids: Vec<(String, i32)>,
    // Declared last: its runtime must outlive the calls above.
    engine: Engine,
}

/// The container's address on `network`, once it runs.
async fn address(
    docker: &testcontainers::bollard::Docker,
    name: &str,
    network: &str,
) -> anyhow::Result<String> {
    let info = docker.inspect_container(name, None).await?;
    info.network_settings
        .and_then(|s| s.networks)
        .and_then(|mut n| n.remove(network))
        .and_then(|e| e.ip_address)
        .filter(|ip| !ip.is_empty())
        .ok_or_else(|| anyhow::anyhow!("container {name} has no address on {network}"))
}

impl Deployment {
    /// Creates the network and starts the database and server roles, waiting until both
    /// answer. The engine must be on this machine (the roles mount its paths).
    pub fn start(engine: Engine, spec: &Spec) -> anyhow::Result<Deployment> {
        if let Some(remote) = engine.remote() {
            anyhow::bail!(
                "--hosts containers: the Docker engine at {} is on {remote}, but the roles mount \
                 this machine's binary and interpreters; unset DOCKER_HOST to use the local engine",
                engine.host()
            );
        }
        let token = crate::services::postgres::container::run_token();
        let network = format!("asynclab-{}", &token[..8]);
        let mut d = Deployment {
            token,
            network,
            containers: Vec::new(),
            image_id: String::new(),
            roles: Vec::new(),
            database_url: String::new(),
            server_ip: String::new(),
            pids: Vec::new(),
            engine,
        };
        d.image_id = d.image_id(&spec.image)?;
        d.create_network()?;
        let password = crate::services::postgres::container::run_token();
        let db_env = vec![
            format!("POSTGRES_USER={USER}"),
            format!("POSTGRES_PASSWORD={password}"),
            format!("POSTGRES_DB={DATABASE}"),
        ];
        let db_ip = d.run_role(
            spec,
            Role {
                name: "database",
                cpus: &spec.cpus.database,
                entrypoint: None,
                cmd: server_command(),
                env: db_env,
                binds: Vec::new(),
                workdir: None,
                host_pids: false,
            },
        )?;
        let exe = spec.exe.display().to_string();
        let server_cmd = [
            "mock-server",
            "--host",
            "0.0.0.0",
            "--port",
            &HTTP_PORT.to_string(),
            "--echo-port",
            &ECHO_PORT.to_string(),
        ]
        .map(String::from)
        .to_vec();
        let server_ip = d.run_role(
            spec,
            Role {
                name: "server",
                cpus: &spec.cpus.server,
                entrypoint: Some(exe.clone()),
                cmd: server_cmd,
                env: Vec::new(),
                // The client's mounts: services under test run here from the same paths.
                binds: mounts(spec),
                workdir: None,
                host_pids: false,
            },
        )?;
        d.database_url = format!("postgresql://{USER}:{password}@{db_ip}:5432/{DATABASE}");
        d.server_ip = server_ip;
        d.wait_ready()?;
        Ok(d)
    }

    fn image_id(&self, image: &str) -> anyhow::Result<String> {
        let docker = self.engine.docker().clone();
        let name = image.to_string();
        let found = self
            .engine
            .block_on(async move { docker.inspect_image(&name).await })?;
        match found {
            Ok(info) => Ok(info.id.unwrap_or_default()),
            Err(e) => anyhow::bail!(
                "--hosts containers: image {image} is not on the Docker engine at {} ({}); build it \
                 from Debian's packages with `make docker-image`",
                self.engine.host(),
                crate::services::postgres::one_line(&e)
            ),
        }
    }

    fn labels(&self, role: &str) -> HashMap<String, String> {
        HashMap::from([
            (LABEL_OWNER.to_string(), owner_label()),
            (LABEL_DEPLOYMENT.to_string(), self.token.clone()),
            (LABEL_ROLE.to_string(), role.to_string()),
        ])
    }

    fn create_network(&mut self) -> anyhow::Result<()> {
        let docker = self.engine.docker().clone();
        let request = NetworkCreateRequest {
            name: self.network.clone(),
            driver: Some("bridge".into()),
            labels: Some(self.labels("network")),
            ..Default::default()
        };
        self.engine
            .block_on(async move { docker.create_network(request).await })?
            .with_context(|| {
                format!(
                    "--hosts containers: creating network {} on the Docker engine at {}",
                    self.network,
                    self.engine.host()
                )
            })?;
        Ok(())
    }

    /// Creates and starts one role's container on the network; its address there.
    fn run_role(&mut self, spec: &Spec, role: Role) -> anyhow::Result<String> {
        let (name, cpus, label) = (self.name(role.name), role.cpus.to_vec(), role.name);
        self.create_role(spec, role)?;
        let docker = self.engine.docker().clone();
        let network = self.network.clone();
        let at = name.clone();
        let started = self.engine.block_on(async move {
            docker.start_container(&at, None).await?;
            let pid = docker
                .inspect_container(&at, None)
                .await?
                .state
                .and_then(|s| s.pid)
                .filter(|p| *p > 0)
                .ok_or_else(|| anyhow::anyhow!("container {at} has no process"))?;
            anyhow::Ok((address(&docker, &at, &network).await?, pid as i32))
        })?;
        let (ip, pid) =
            started.with_context(|| format!("--hosts containers: starting the {label} role"))?;
        self.pids.push((label.to_string(), pid));
        self.roles.push(RoleRecord {
            role: label.into(),
            container: name,
            image: spec.image.clone(),
            image_id: self.image_id.clone(),
            address: ip.clone(),
            cpus,
        });
        Ok(ip)
    }

    fn name(&self, role: &str) -> String {
        format!("{}-{role}", self.network)
    }

    /// Creates one role's container on the network, not started.
    fn create_role(&mut self, spec: &Spec, role: Role) -> anyhow::Result<()> {
        let name = self.name(role.name);
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            entrypoint: role.entrypoint.map(|e| vec![e]),
            cmd: Some(role.cmd),
            env: Some(role.env),
            working_dir: role.workdir,
            labels: Some(self.labels(role.name)),
            host_config: Some(HostConfig {
                network_mode: Some(self.network.clone()),
                cpuset_cpus: Some(crate::affinity::format_cpus(role.cpus)),
                binds: Some(role.binds),
                // A minimal init as pid 1: it forwards signals and reaps what the role's
                // processes leave.
                init: Some(true),
                pid_mode: role.host_pids.then(|| "host".to_string()),
                // Reading another user's smaps_rollup (PSS) is a ptrace-read check.
                cap_add: role.host_pids.then(|| vec!["SYS_PTRACE".to_string()]),
                shm_size: Some(256 * 1024 * 1024),
                ..Default::default()
            }),
            ..Default::default()
        };
        let docker = self.engine.docker().clone();
        let options = CreateContainerOptionsBuilder::new().name(&name).build();
        // Listed before the request: a create cut short may still leave the container.
        self.containers.push(name.clone());
        self.engine
            .block_on(async move { docker.create_container(Some(options), body).await })?
            .with_context(|| {
                format!(
                    "--hosts containers: creating the {} role's container from {}",
                    role.name, spec.image
                )
            })?;
        Ok(())
    }

    /// Waits until the server's ports accept connections and PostgreSQL answers a query.
    fn wait_ready(&self) -> anyhow::Result<()> {
        let start = Instant::now();
        for port in [HTTP_PORT, ECHO_PORT] {
            let at = format!("{}:{port}", self.server_ip);
            while TcpStream::connect_timeout(&at.parse()?, Duration::from_secs(1)).is_err() {
                interrupt::check()?;
                if start.elapsed() > STARTUP_TIMEOUT {
                    anyhow::bail!(
                        "--hosts containers: the server role did not listen on {at} within {} s; \
                         see `docker logs {}`",
                        STARTUP_TIMEOUT.as_secs(),
                        self.name("server")
                    );
                }
                std::thread::sleep(POLL);
            }
        }
        let url = self.database_url.clone();
        let name = self.name("database");
        self.engine.block_on(async move {
            loop {
                interrupt::check()?;
                let last = match tokio::time::timeout(Duration::from_secs(2), probe(&url)).await {
                    Ok(Ok(())) => return anyhow::Ok(()),
                    Ok(Err(e)) => e,
                    Err(_) => "connection attempt timed out".into(),
                };
                if start.elapsed() > STARTUP_TIMEOUT {
                    anyhow::bail!(
                        "--hosts containers: the database role refused connections for {} s \
                         ({last}); see `docker logs {name}`",
                        STARTUP_TIMEOUT.as_secs()
                    );
                }
                tokio::time::sleep(POLL).await;
            }
        })?
    }

    /// What the client role is told.
    pub fn deployed(&self) -> Deployed {
        Deployed {
            http_url: format!("http://{}:{HTTP_PORT}", self.server_ip),
            echo_addr: format!("{}:{ECHO_PORT}", self.server_ip),
            database_url: self.database_url.clone(),
            record: HostsRecord {
                mode: "containers".into(),
                engine: self.engine.host().to_string(),
                network: self.network.clone(),
                roles: self.roles.clone(),
                round_trips: Vec::new(),
            },
            role_pids: self.pids.clone(),
        }
    }

    /// Runs the client role: `spec.exe` with `args` in `workdir`, with `env`; its output is
    /// copied to this process's, and Ctrl-C (or SIGTERM) reaches it as SIGINT, so it stops and
    /// keeps what it measured. Returns its exit code.
    pub fn run_client(
        &mut self,
        spec: &Spec,
        args: Vec<String>,
        env: Vec<String>,
        workdir: &Path,
    ) -> anyhow::Result<i64> {
        let exe = spec.exe.display().to_string();
        let mut binds = mounts(spec);
        // The engine's socket: the load generator starts services under test in the server
        // role's container through it ([`super::exec`]).
        if let Some(socket) = self.engine.host().strip_prefix("unix://") {
            binds.push(format!("{socket}:{ENGINE_SOCKET}"));
        }
        let mut record = self.deployed();
        record.record.roles.insert(
            0,
            RoleRecord {
                role: "client".into(),
                container: self.name("client"),
                image: spec.image.clone(),
                image_id: self.image_id.clone(),
                // The client fills in its own address (the local end of its round trips).
                address: String::new(),
                cpus: spec.cpus.client.clone(),
            },
        );
        let mut env = env;
        env.push(format!(
            "{}={}",
            super::DEPLOYED_ENV,
            serde_json::to_string(&record)?
        ));
        self.create_role(
            spec,
            Role {
                name: "client",
                cpus: &spec.cpus.client,
                entrypoint: Some(exe),
                cmd: args,
                env,
                binds,
                workdir: Some(workdir.display().to_string()),
                host_pids: true,
            },
        )?;
        let name = self.name("client");
        let docker = self.engine.docker().clone();
        self.engine.block_on(async move {
            docker.start_container(&name, None).await?;
            let logs = LogsOptionsBuilder::new()
                .follow(true)
                .stdout(true)
                .stderr(true)
                .build();
            let mut stream = docker.logs(&name, Some(logs));
            let copy = tokio::spawn(async move {
                use std::io::Write as _;
                while let Some(Ok(out)) = stream.next().await {
                    match out {
                        LogOutput::StdErr { message } => {
                            let _ = std::io::stderr().write_all(&message);
                        }
                        other => {
                            let _ = std::io::stdout().write_all(other.as_ref());
                            let _ = std::io::stdout().flush();
                        }
                    }
                }
            });
            let code = wait_or_stop(&docker, &name).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), copy).await;
            code
        })?
    }
}

/// The lab's binary, the client's working folder and results (read-write) and the interpreters
/// (read-only), at the paths they have here.
fn mounts(spec: &Spec) -> Vec<String> {
    let exe = spec.exe.display().to_string();
    let mut binds = vec![format!("{exe}:{exe}:ro")];
    binds.extend(spec.rw.iter().map(|p| format!("{0}:{0}", p.display())));
    binds.extend(spec.ro.iter().map(|p| format!("{0}:{0}:ro", p.display())));
    binds
}

/// Waits for the container to exit; on Ctrl-C or SIGTERM sends it SIGINT, then SIGKILL if it
/// has not exited after [`STOP_GRACE`].
async fn wait_or_stop(docker: &testcontainers::bollard::Docker, name: &str) -> anyhow::Result<i64> {
    let mut wait = Box::pin(docker.wait_container(name, None));
    let mut deadline: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            done = wait.next() => {
                return match done {
                    Some(Ok(r)) => Ok(r.status_code),
                    // A non-zero exit arrives as an error carrying the code.
                    Some(Err(testcontainers::bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
                    Some(Err(e)) => Err(anyhow::anyhow!("waiting for the client role: {e}")),
                    None => Err(anyhow::anyhow!("the engine stopped answering about the client role")),
                };
            }
            _ = tokio::time::sleep(POLL) => {
                if deadline.is_none() && interrupt::interrupted() {
                    let int = KillContainerOptionsBuilder::new().signal("SIGINT").build();
                    let _ = docker.kill_container(name, Some(int)).await;
                    deadline = Some(tokio::time::Instant::now() + STOP_GRACE);
                }
                if deadline.is_some_and(|d| tokio::time::Instant::now() > d) {
                    let _ = docker.kill_container(name, None).await;
                    deadline = Some(tokio::time::Instant::now() + STOP_GRACE);
                }
            }
        }
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        let docker = self.engine.docker().clone();
        let containers = std::mem::take(&mut self.containers);
        let network = self.network.clone();
        let failed = self
            .engine
            .block_on(async move {
                let mut failed = Vec::new();
                for name in containers.iter().rev() {
                    let rm = RemoveContainerOptionsBuilder::new()
                        .force(true)
                        .v(true)
                        .build();
                    let removed = tokio::time::timeout(
                        REMOVE_TIMEOUT,
                        docker.remove_container(name, Some(rm)),
                    )
                    .await;
                    // Absent (404) is removed too: a create that never happened.
                    let gone = matches!(
                        removed,
                        Ok(Ok(()))
                            | Ok(Err(DockerResponseServerError {
                                status_code: 404,
                                ..
                            }))
                    );
                    if !gone {
                        failed.push(name.clone());
                    }
                }
                if docker.remove_network(&network).await.is_err() {
                    failed.push(network);
                }
                failed
            })
            .unwrap_or_default();
        if !failed.is_empty() {
            eprintln!(
                "asynclab: could not remove {failed:?} from the Docker engine; the next `asynclab run` removes them"
            );
        }
    }
}
