//! `--database-host tcp://...`: the database role on another Docker engine. The second engine is
//! Debian's docker.io in a container of this machine's engine (compose/build-dind-image.sh), on
//! its own address, so the remote path (an engine reached over TCP, the image copied to it
//! without a registry, the port published on that host, the container removed there) is
//! exercised without a second machine. Needs an engine, so `#[ignore]`d; `make test-docker`
//! runs it.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use asynclab::services::postgres::orphans::Owner;
use common::{bin, docker, results, root};

/// A container running a second engine; removed with its storage when dropped.
struct SecondEngine {
    name: String,
    url: String,
}

impl SecondEngine {
    /// Builds the image when needed, starts the engine and waits until it answers.
    fn start() -> SecondEngine {
        let built = Command::new(root().join("compose/build-dind-image.sh"))
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "compose/build-dind-image.sh: {}",
            String::from_utf8_lossy(&built.stderr)
        );
        let image = String::from_utf8_lossy(&built.stdout).trim().to_string();
        let name = format!("asynclab-test-engine-{}", std::process::id());
        // The engine needs what --privileged gives, less the capability this machine's own
        // engine cannot grant (CAP_SYS_RESOURCE), and a writable cgroup tree for its containers.
        // The owner label lets the next run's sweep remove it if this test is killed.
        let owner = format!("asynclab.owner={}", Owner::current().unwrap().label());
        docker(&[
            "run",
            "-d",
            "--name",
            &name,
            "--label",
            &owner,
            "--cap-add",
            "ALL",
            "--cap-drop",
            "SYS_RESOURCE",
            "--security-opt",
            "seccomp=unconfined",
            "--security-opt",
            "apparmor=unconfined",
            "--security-opt",
            "systempaths=unconfined",
            "-v",
            "/sys/fs/cgroup:/sys/fs/cgroup",
            &image,
        ]);
        let ip = docker(&[
            "inspect",
            "-f",
            "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
            &name,
        ]);
        let engine = SecondEngine {
            name,
            url: format!("tcp://{ip}:2375"),
        };
        let start = Instant::now();
        while !Command::new("docker")
            .args(["-H", &engine.url, "info"])
            .output()
            .unwrap()
            .status
            .success()
        {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the second engine did not answer: {}",
                docker(&["logs", &engine.name])
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        engine
    }

    /// `docker -H URL ARGS...` on the second engine.
    fn docker(&self, args: &[&str]) -> String {
        let mut all = vec!["-H", &self.url];
        all.extend_from_slice(args);
        docker(&all)
    }
}

impl Drop for SecondEngine {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-fv", &self.name])
            .output();
    }
}

#[test]
#[ignore = "needs a Docker engine with asynclab/postgres:15-debian: make test-docker runs it"]
fn the_database_role_runs_on_a_second_engine_reached_over_tcp() {
    let engine = SecondEngine::start();
    assert_eq!(
        engine.docker(&["images", "-q"]),
        "",
        "a new engine has no image"
    );
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    // Correctness, not speed: the second engine's PostgreSQL runs on this machine's CPUs, which
    // the driver rightly counts as foreign, so interference may not make a cell inconclusive;
    // and one round with no warm-up, as `make test-db` runs the database scenarios.
    let assert = bin()
        .args([
            "run",
            "--scenario",
            "db",
            "--quick",
            "--param",
            "concurrency=10",
            "--rounds",
            "1",
            "--warmups",
            "0",
        ])
        .args([
            "--database-host",
            &engine.url,
            "--pg-image",
            "asynclab/postgres:15-debian",
        ])
        .args([
            "--max-foreign-cores",
            "100",
            "--strict",
            "--python",
            "3.12",
            "--out",
        ])
        .arg(&dir)
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!(
            "copying image asynclab/postgres:15-debian from this machine's Docker engine to {}",
            engine.url
        )),
        "{stderr}"
    );
    let r = results(&dir);
    let pg = r["env"]["postgres"].as_str().unwrap();
    assert!(pg.contains(&format!("on {})", engine.url)), "{pg}");
    let host = engine
        .url
        .trim_start_matches("tcp://")
        .trim_end_matches(":2375");
    assert!(
        pg.contains(&format!("at {host}:")),
        "connected on the engine's host: {pg}"
    );
    for c in r["cells"].as_array().unwrap() {
        assert_eq!(c["status"], "ok", "{}: {}", c["id"], c["failure"]);
        assert_eq!(c["summary"]["errors"], 0, "{}", c["id"]);
    }
    assert_eq!(
        engine.docker(&["ps", "-aq"]),
        "",
        "the database container is removed from the second engine"
    );
    assert_ne!(
        engine.docker(&["images", "-q"]),
        "",
        "the copied image stays for the next run"
    );
}
