//! Containers and networks a killed driver left on the Docker engine: each carries the label
//! [`LABEL_OWNER`] naming the process that made it (pid, start time, boot and pid namespace, as
//! local clusters' owner files do), and the next start removes those whose owner is gone. An
//! owner from another boot or pid namespace is never judged, so a second lab on the same
//! engine keeps its containers.

use std::collections::HashMap;

use testcontainers::bollard::query_parameters::{
    ListContainersOptionsBuilder, ListNetworksOptionsBuilder, RemoveContainerOptionsBuilder,
};

pub use crate::services::postgres::container::LABEL_OWNER;
use crate::services::postgres::container::{Engine, REMOVE_TIMEOUT};
use crate::services::postgres::orphans::Owner;

/// What a sweep removed: container and network names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Containers removed (with their anonymous volumes).
    pub containers: Vec<String>,
    /// Networks removed.
    pub networks: Vec<String>,
}

/// True when the label names an owner of this boot and pid namespace that is no longer running.
fn gone(label: Option<&String>) -> bool {
    label
        .and_then(|l| Owner::from_label(l))
        .is_some_and(|o| o.judgeable() && !o.is_alive())
}

/// Removes every container, then every network, whose owner is gone; best effort, silent on an
/// engine that does not answer.
pub fn sweep(engine: &Engine) -> Swept {
    let docker = engine.docker().clone();
    engine
        .block_on(async move {
            let mut swept = Swept::default();
            let filters = HashMap::from([("label", vec![LABEL_OWNER.to_string()])]);
            let list = ListContainersOptionsBuilder::new()
                .all(true)
                .filters(&filters)
                .build();
            for c in docker.list_containers(Some(list)).await.unwrap_or_default() {
                let labels = c.labels.unwrap_or_default();
                let Some(id) = c.id.filter(|_| gone(labels.get(LABEL_OWNER))) else {
                    continue;
                };
                let rm = RemoveContainerOptionsBuilder::new()
                    .force(true)
                    .v(true)
                    .build();
                let removed =
                    tokio::time::timeout(REMOVE_TIMEOUT, docker.remove_container(&id, Some(rm)));
                if matches!(removed.await, Ok(Ok(()))) {
                    let name = c.names.and_then(|n| n.into_iter().next());
                    swept
                        .containers
                        .push(name.map_or(id, |n| n.trim_start_matches('/').to_string()));
                }
            }
            let list = ListNetworksOptionsBuilder::new().filters(&filters).build();
            for n in docker.list_networks(Some(list)).await.unwrap_or_default() {
                let labels = n.labels.unwrap_or_default();
                let Some(name) = n.name.filter(|_| gone(labels.get(LABEL_OWNER))) else {
                    continue;
                };
                if docker.remove_network(&name).await.is_ok() {
                    swept.networks.push(name);
                }
            }
            swept
        })
        .unwrap_or_default()
}

/// Sweeps the engine `DOCKER_HOST` (or the local socket) names, when one answers, and says on
/// stderr what it removed; what every `asynclab run` does first.
pub fn sweep_reachable() {
    let local_socket = std::path::Path::new("/var/run/docker.sock").exists();
    if std::env::var_os("DOCKER_HOST").is_none() && !local_socket {
        return;
    }
    let Ok(engine) = Engine::connect() else {
        return;
    };
    let swept = sweep(&engine);
    if !swept.containers.is_empty() || !swept.networks.is_empty() {
        eprintln!(
            "asynclab: removed what a killed run left on the Docker engine at {}: containers {:?}, networks {:?}",
            engine.host(),
            swept.containers,
            swept.networks
        );
    }
}
