//! A service under test started in the server role's container under `--hosts containers`:
//! the load generator (in the client role) asks the engine to run the server's command there
//! (`docker exec`, detached), with the working folder, environment and log it would have had
//! as a child, and gets back the root's pid in this machine's /proc, which the client shares.
//! From then on it is watched, measured and stopped by that pid
//! ([`crate::services::under_test::RunningServer::adopt`]); what it leaves goes with the
//! container.

use serde::{Deserialize, Serialize};
use testcontainers::bollard::exec::StartExecOptions;
use testcontainers::bollard::models::ExecConfig;

use crate::services::postgres::container::Engine;
use crate::services::under_test::{Launch, OWNER_VAR};

/// Where services under test run when the server is a role of its own: its container, its
/// address on the deployment's network, and its CPU set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerRole {
    /// The container's name.
    pub container: String,
    /// Its address, which the service binds and the load generator connects to.
    pub address: String,
    /// Its CPUs (the container's CPU set): what the server's rules for workers count.
    pub cpus: Vec<usize>,
}

/// The shell line that runs the command given as its arguments with its output appended to
/// `$ASYNCLAB_SERVER_LOG` (a detached exec's own output goes nowhere).
const WITH_LOG: &str = r#"exec "$0" "$@" >>"$ASYNCLAB_SERVER_LOG" 2>&1"#;

/// Starts `launch` in `role`'s container; the root's pid as this machine numbers it. Its CPU
/// pinning is the container's CPU set.
pub fn start(role: &ServerRole, launch: &Launch) -> anyhow::Result<i32> {
    let fail = |what: String| {
        anyhow::anyhow!(
            "service {}: cannot start it in the server role's container {}: {what}",
            launch.name,
            role.container
        )
    };
    let engine = Engine::connect().map_err(|e| fail(e.to_string()))?;
    let mut cmd = vec!["sh".to_string(), "-c".into(), WITH_LOG.into()];
    cmd.extend(launch.argv.iter().cloned());
    let mut env: Vec<String> = launch.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    env.push(format!("{OWNER_VAR}={}", launch.owner));
    env.push(format!("ASYNCLAB_SERVER_LOG={}", launch.log.display()));
    let config = ExecConfig {
        cmd: Some(cmd),
        env: Some(env),
        working_dir: Some(launch.dir.display().to_string()),
        ..Default::default()
    };
    let docker = engine.docker().clone();
    let container = role.container.clone();
    let pid = engine.block_on(async move {
        let exec = docker.create_exec(&container, config).await?;
        let detached = StartExecOptions {
            detach: true,
            ..Default::default()
        };
        docker.start_exec(&exec.id, Some(detached)).await?;
        // The engine reports the pid once the process runs.
        for _ in 0..100 {
            let info = docker.inspect_exec(&exec.id).await?;
            match info.pid {
                Some(pid) if pid > 0 => return anyhow::Ok(pid as i32),
                _ if info.running == Some(false) && info.exit_code.is_some() => {
                    anyhow::bail!("it exited at once (code {:?})", info.exit_code)
                }
                _ => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            }
        }
        anyhow::bail!("the engine reported no pid for it within 2 s")
    })?;
    pid.map_err(|e| fail(format!("{e:#}")))
}
