//! Integration tests of `--pg container`: a real container on this machine's Docker engine.
//!
//! The image is `asynclab/postgres:15-debian`, built (or found up to date) by
//! `compose/build-image.sh` before the first container test, so no registry is needed. Tests
//! that need an engine are `#[ignore]`d with [`NEEDS_ENGINE`] as the reason, so `cargo test`
//! lists them as skipped; `make test-docker` (which `.ci/run` runs where an engine answers)
//! runs them with `--ignored`, and there a missing engine fails them. The no-engine behaviour is
//! tested everywhere, in a child process with a dead `DOCKER_HOST`. Ignored tests named
//! `helper_*` are such child processes, run by the test that names them.

mod common;

use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use asynclab::services::postgres::container::{Engine, LABEL_PID, LOCAL_IMAGE};
use asynclab::services::postgres::seed::{AUTHORS_ROWS, BOOKS_ROWS, ITEMS_ROWS};
use asynclab::services::postgres::{server_settings, PgBackend, Postgres, SeedOutcome};
use common::{docker, root, test_workloads_args};

/// Why the container tests are ignored in a plain `cargo test`.
const NEEDS_ENGINE: &str =
    "needs a Docker engine with asynclab/postgres:15-debian: make test-docker runs it";

/// Builds the local image (or finds it up to date); panics when no engine answers, since
/// these tests run only when asked to (`--ignored`).
fn require_engine_with_image() {
    if let Err(e) = Engine::connect() {
        panic!("{NEEDS_ENGINE}, and none answers: {e:#}");
    }
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let started = Instant::now();
        let out = Command::new(root().join("compose/build-image.sh"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running compose/build-image.sh: {e}"))?;
        eprintln!(
            "compose/build-image.sh: {:.1} s",
            started.elapsed().as_secs_f64()
        );
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    });
    if let Err(log) = built {
        panic!("an engine is reachable but compose/build-image.sh failed:\n{log}");
    }
}

/// Containers (any state) whose label `key` has `value`.
fn containers_labelled(key: &str, value: &str) -> String {
    docker(&["ps", "-aq", "--filter", &format!("label={key}={value}")])
}

fn query_i64s(url: &str, sql: &str) -> Vec<i64> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let row = client.query_one(sql, &[]).await.unwrap();
        (0..row.len()).map(|i| row.get::<_, i64>(i)).collect()
    })
}

/// Opens `n` connections at once and runs a query on each; the number that succeeded.
fn concurrent_connections(url: &str, n: usize) -> usize {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut clients = Vec::new();
        for _ in 0..n {
            let url = url.to_string();
            clients.push(tokio::spawn(async move {
                let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
                tokio::spawn(conn);
                Ok::<_, tokio_postgres::Error>(client)
            }));
        }
        let mut open = Vec::new();
        for c in clients {
            if let Ok(Ok(client)) = c.await {
                open.push(client);
            }
        }
        // All `n` are open at the same time here.
        let mut ok = 0;
        for client in &open {
            if client.query_one("SELECT 1", &[]).await.is_ok() {
                ok += 1;
            }
        }
        ok
    })
}

#[test]
#[ignore = "needs a Docker engine with asynclab/postgres:15-debian: make test-docker runs it"]
fn container_comes_up_seeded_on_loopback_and_is_removed_with_its_volume() {
    require_engine_with_image();
    let started = Instant::now();
    let pg = Postgres::provide_with(PgBackend::Container, LOCAL_IMAGE).expect("container");
    eprintln!(
        "container start + seed: {:.2} s; {}",
        started.elapsed().as_secs_f64(),
        pg.describe()
    );
    assert_eq!(pg.kind(), "container");
    let described = pg.describe();
    assert!(
        described.starts_with(&format!("postgres: container {LOCAL_IMAGE}, PostgreSQL 15")),
        "{described}"
    );
    assert!(!described.contains('\n'), "{described}");
    let url = pg.url().to_string();
    let password = url
        .strip_prefix("postgresql://asynclab:")
        .and_then(|rest| rest.split('@').next())
        .expect("user and password in the URL");
    assert!(
        password.len() >= 16 && !described.contains(password),
        "{described}"
    );
    assert!(url.contains("@127.0.0.1:") && url.ends_with("/asynclab"));
    assert!(pg.pid().is_none() && pg.dir().is_none());
    assert_eq!(pg.seed_report().outcome, SeedOutcome::Seeded);

    // Seeded like the other backends.
    let counts = query_i64s(
        &url,
        "SELECT (SELECT count(*) FROM asynclab.items),
                (SELECT count(*) FROM asynclab.authors),
                (SELECT count(*) FROM asynclab.books)",
    );
    assert_eq!(counts, vec![ITEMS_ROWS, AUTHORS_ROWS, BOOKS_ROWS]);
    assert_eq!(counts, vec![100_000, 100, 500]);

    // The local cluster's settings, and room for 100 concurrent clients plus headroom.
    let settings = server_settings(&url).expect("settings");
    assert_eq!(settings[1], ("max_connections".into(), "250".into()));
    assert_eq!(settings[2], ("fsync".into(), "off".into()));
    assert_eq!(concurrent_connections(&url, 120), 120);

    // Published on 127.0.0.1 only, labelled with our pid, data on an anonymous volume.
    let id = pg.container_id().expect("container id").to_string();
    let bindings = docker(&[
        "inspect",
        "--format",
        "{{json .NetworkSettings.Ports}}",
        &id,
    ]);
    let bindings: serde_json::Value = serde_json::from_str(&bindings).unwrap();
    let published = bindings["5432/tcp"].as_array().expect("5432 published");
    assert!(!published.is_empty());
    for b in published {
        assert_eq!(b["HostIp"], "127.0.0.1", "{bindings}");
        assert!(
            url.contains(&format!(":{}/", b["HostPort"].as_str().unwrap())),
            "{url} vs {bindings}"
        );
    }
    let me = std::process::id().to_string();
    assert!(containers_labelled(LABEL_PID, &me).contains(&id[..12]));
    let volumes = docker(&[
        "inspect",
        "--format",
        "{{range .Mounts}}{{if eq .Type \"volume\"}}{{.Name}} {{end}}{{end}}",
        &id,
    ]);
    let volumes: Vec<String> = volumes.split_whitespace().map(String::from).collect();
    assert!(!volumes.is_empty(), "PGDATA should be an anonymous volume");

    let removing = Instant::now();
    drop(pg);
    eprintln!("remove: {:.2} s", removing.elapsed().as_secs_f64());
    assert_eq!(docker(&["ps", "-aq", "--filter", &format!("id={id}")]), "");
    for v in &volumes {
        assert_eq!(
            docker(&["volume", "ls", "-q", "--filter", &format!("name={v}")]),
            "",
            "volume {v} left behind"
        );
    }
}

/// Runs `asynclab run --scenario pg_probe --pg container` on the test workloads.
fn pg_probe_run(out: &std::path::Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("asynclab"));
    cmd.current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("DATABASE_URL")
        .args([
            "run",
            "--scenario",
            "pg_probe",
            "--pg",
            "container",
            "--pg-image",
            LOCAL_IMAGE,
            "--rounds",
            "1",
            "--warmups",
            "0",
            "--out",
        ])
        .arg(out)
        .args(test_workloads_args());
    cmd
}

/// A driver a test started. Dropped (a failed assertion too), it is killed if still running
/// and every container labelled with its pid is removed with its volumes, so a failing test
/// leaves nothing behind.
struct Driver {
    child: std::process::Child,
    pid: String,
}

impl Driver {
    fn spawn(mut cmd: Command) -> Driver {
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id().to_string();
        Driver { child, pid }
    }

    /// The rest of its stderr, once it has exited.
    fn stderr(&mut self) -> String {
        let mut text = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut text).unwrap();
        text
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let label = format!("label={LABEL_PID}={}", self.pid);
        let Ok(out) = Command::new("docker")
            .args(["ps", "-aq", "--filter", &label])
            .output()
        else {
            return;
        };
        let ids = String::from_utf8_lossy(&out.stdout);
        let ids: Vec<&str> = ids.split_whitespace().collect();
        if !ids.is_empty() {
            let _ = Command::new("docker")
                .args(["rm", "-f", "-v"])
                .args(&ids)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

#[test]
#[ignore = "needs a Docker engine with asynclab/postgres:15-debian: make test-docker runs it"]
fn a_run_with_the_container_leaves_nothing_behind() {
    require_engine_with_image();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut driver = Driver::spawn(pg_probe_run(&dir));
    let stderr = driver.stderr();
    let status = driver.child.wait().unwrap();
    assert!(status.success(), "{stderr}");
    let results = common::results(&dir);
    let described = results["env"]["postgres"].as_str().unwrap_or_default();
    assert!(
        described.starts_with(&format!("postgres: container {LOCAL_IMAGE}")),
        "{described}"
    );
    assert_eq!(containers_labelled(LABEL_PID, &driver.pid), "", "{stderr}");
}

#[test]
#[ignore = "needs a Docker engine with asynclab/postgres:15-debian: make test-docker runs it"]
fn ctrl_c_while_the_container_starts_removes_it() {
    require_engine_with_image();
    let tmp = tempfile::tempdir().unwrap();
    let mut driver = Driver::spawn(pg_probe_run(&tmp.path().join("run")));
    let pid = driver.pid.clone();
    // The Python environment may be built first; then the container is created.
    let deadline = Instant::now() + Duration::from_secs(300);
    while containers_labelled(LABEL_PID, &pid).is_empty() {
        assert!(
            driver.child.try_wait().unwrap().is_none(),
            "the run ended before its container appeared"
        );
        assert!(Instant::now() < deadline, "no container appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Instant::now();
    // SAFETY: signalling the child we spawned, as a terminal's Ctrl-C would.
    unsafe {
        libc::kill(driver.child.id() as i32, libc::SIGINT);
    }
    let status = loop {
        if let Some(s) = driver.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(30),
            "driver did not stop after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    eprintln!("stopped {:.2} s after Ctrl-C", sent.elapsed().as_secs_f64());
    let stderr = driver.stderr();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_eq!(containers_labelled(LABEL_PID, &pid), "", "{stderr}");
}

/// Child half of [`no_engine_fails_fast_and_auto_falls_back_to_local`]: needs a dead DOCKER_HOST.
#[test]
#[ignore = "helper: run by no_engine_fails_fast_and_auto_falls_back_to_local with DOCKER_HOST set"]
fn helper_no_engine() {
    assert_eq!(
        std::env::var("DOCKER_HOST").as_deref(),
        Ok("unix:///nonexistent.sock")
    );
    let started = Instant::now();
    let err = Postgres::provide_with(PgBackend::Container, LOCAL_IMAGE)
        .expect_err("no engine behind a missing socket");
    let elapsed = started.elapsed();
    let msg = format!("{err:#}");
    eprintln!(
        "--pg container failed in {:.3} s: {msg}",
        elapsed.as_secs_f64()
    );
    assert!(elapsed < Duration::from_secs(1), "took {elapsed:?}");
    assert!(!msg.contains('\n'), "{msg}");
    for part in [
        "no Docker engine is reachable",
        "unix:///nonexistent.sock",
        "--pg local",
        "DATABASE_URL",
    ] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }

    let pg = Postgres::provide_with(PgBackend::Auto, LOCAL_IMAGE).expect("auto falls back");
    assert_eq!(pg.kind(), "local");
    assert_eq!(
        query_i64s(pg.url(), "SELECT count(*) FROM asynclab.items"),
        vec![ITEMS_ROWS]
    );
}

#[test]
fn no_engine_fails_fast_and_auto_falls_back_to_local() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "helper_no_engine",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DOCKER_HOST", "unix:///nonexistent.sock")
        .env_remove("DATABASE_URL")
        .env_remove("ASYNCLAB_PG_IMAGE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{stderr}"
    );
    // `auto` says what it chose in one line, nothing more. The start-up
    // sweep may also report a cluster that a killed process of another test
    // left behind; that line is the sweep's, not the choice's.
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("postgres:") && !l.contains(", left by process "))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("no Docker engine") && lines[0].contains("local"),
        "{stderr}"
    );
}
