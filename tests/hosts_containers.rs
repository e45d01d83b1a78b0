//! `asynclab run --hosts containers`: the client, server and database roles in three containers
//! on a private network of this machine's Docker engine, services under test started in the
//! server role, and nothing of them left after a normal end, a Ctrl-C, or a SIGKILL followed by
//! the next start. Needs an engine and the image
//! `make docker-image` builds, so the tests are `#[ignore]`d with [`NEEDS_ENGINE`]; `make
//! test-docker` runs them.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, docker, results, root, schema_errors};

/// The tests here each deploy the roles and count what is left on the engine: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

const NEEDS_ENGINE: &str =
    "needs a Docker engine with asynclab/postgres:15-debian: make test-docker runs it";

/// Names of the lab's containers (any state) and networks on the engine.
fn left_on_engine() -> Vec<String> {
    let label = "label=asynclab.owner";
    let mut left: Vec<String> = docker(&["ps", "-a", "--format", "{{.Names}}", "--filter", label])
        .lines()
        .map(String::from)
        .collect();
    left.extend(
        docker(&["network", "ls", "--format", "{{.Name}}", "--filter", label])
            .lines()
            .map(String::from),
    );
    left
}

/// `run --hosts containers` of `scenarios` under --quick, into `out`, as a child process.
fn spawn_run(scenarios: &str, out: &Path) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("asynclab"))
        .current_dir(root())
        .args([
            "run",
            "--scenario",
            scenarios,
            "--quick",
            "--hosts",
            "containers",
        ])
        .args(["--python", "3.12", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Waits until the client role's container runs (the deployment is complete), up to 3 minutes.
fn wait_for_client() {
    let start = Instant::now();
    while !docker(&[
        "ps",
        "--format",
        "{{.Names}}",
        "--filter",
        "label=asynclab.role=client",
    ])
    .contains("client")
    {
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "no client role started"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) with the pid of a child this test started and has not waited for.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
#[ignore = "needs a Docker engine with asynclab/postgres:15-debian: make test-docker runs it"]
fn three_roles_in_containers_measure_and_leave_nothing_after_a_kill_a_ctrl_c_or_an_end() {
    let _ = NEEDS_ENGINE;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();

    // A driver killed with SIGKILL leaves its roles running; the next start removes them.
    let mut killed = spawn_run("io_http", &tmp.path().join("killed"));
    wait_for_client();
    signal(&killed, libc::SIGKILL);
    killed.wait().unwrap();
    assert!(
        left_on_engine().len() >= 4,
        "the killed run's three containers and network are still there: {:?}",
        left_on_engine()
    );

    // The next start: io_http and db in three containers, every cell ok. One round and no
    // warm-up: everything checked below holds run by run, and no verdict is asked for.
    let dir = tmp.path().join("run");
    let assert = bin()
        .args([
            "run",
            "--scenario",
            "io_http,db",
            "--quick",
            "--rounds",
            "1",
            "--warmups",
            "0",
            "--hosts",
            "containers",
        ])
        .args(["--python", "3.12", "--out"])
        .arg(&dir)
        .timeout(Duration::from_secs(900))
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("removed what a killed run left on the Docker engine"),
        "{stderr}"
    );
    assert_eq!(left_on_engine(), Vec::<String>::new(), "after a normal end");

    let r = results(&dir);
    let errors = schema_errors(&r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let hosts = &r["method"]["hosts"];
    let roles = hosts["roles"].as_array().unwrap();
    let names: Vec<&str> = roles.iter().map(|r| r["role"].as_str().unwrap()).collect();
    assert_eq!(names, ["client", "database", "server"]);
    let addresses: std::collections::BTreeSet<&str> = roles
        .iter()
        .map(|r| r["address"].as_str().unwrap())
        .collect();
    assert_eq!(
        addresses.len(),
        3,
        "each role has its own address: {roles:?}"
    );
    assert!(
        addresses.iter().all(|a| !a.starts_with("127.")),
        "{roles:?}"
    );
    // The client's CPUs are its own wherever the machine has two.
    let cpus = |i: usize| roles[i]["cpus"].as_array().unwrap().clone();
    if std::thread::available_parallelism().unwrap().get() >= 2 {
        assert!(cpus(0)
            .iter()
            .all(|c| !cpus(1).contains(c) && !cpus(2).contains(c)));
    }
    // The round trips crossed a network stack on this machine: above zero, and far below the
    // 100 ms delay io_http's cells wait per request.
    for t in hosts["round_trips"].as_array().unwrap() {
        let (median, p90) = (
            t["median_ms"].as_f64().unwrap(),
            t["p90_ms"].as_f64().unwrap(),
        );
        assert!(median > 0.0 && median <= p90 && p90 < 5.0, "{t}");
    }
    let cells = r["cells"].as_array().unwrap();
    let role_cpus = |name: &str| {
        let role = roles.iter().find(|r| r["role"] == name).unwrap();
        role["cpus"].as_array().unwrap().len() as f64
    };
    for c in cells {
        let id = c["id"].as_str().unwrap();
        assert_eq!(c["status"], "ok", "{id}: {}", c["failure"]);
        assert_eq!(c["summary"]["errors"], 0, "{id}");
        // Each run records the role whose service the cell used, read from outside: it did some
        // work, and no more than its CPU set allows in the run's wall time (10 ms of slack for
        // the reads around `go` and `done`).
        let used = if c["scenario"] == "db" {
            "database"
        } else {
            "server"
        };
        for run in c["runs"].as_array().unwrap() {
            let usage = run["roles"].as_array().unwrap();
            assert_eq!(usage.len(), 1, "{id}: {usage:?}");
            assert_eq!(usage[0]["role"], used, "{id}");
            let cpu = usage[0]["cpu_s"].as_f64().unwrap();
            let wall = run["wall_s"].as_f64().unwrap();
            assert!(
                cpu > 0.0 && cpu <= wall * role_cpus(used) + 0.01,
                "{id}: {cpu} s in {wall} s"
            );
            assert!(usage[0]["pss_mib"].as_f64().unwrap() > 0.0, "{id}");
            // The mock server in its container counted every request, as in the driver.
            if c["scenario"] == "io_http" {
                assert_eq!(run["server_requests"], run["ops"], "{id}");
            }
        }
    }
    // io_http's known answer holds across the network: no variant beats Little's law, and
    // asyncio with its 50 requests in flight is far ahead of one at a time, as on loopback.
    let io: Vec<&serde_json::Value> = cells
        .iter()
        .filter(|c| c["scenario"] == "io_http")
        .collect();
    let median = |variant: &str| {
        let c = io.iter().find(|c| c["variant"] == variant).unwrap();
        let p = &c["params"];
        let bound = p["concurrency"]
            .as_f64()
            .unwrap()
            .min(p["requests"].as_f64().unwrap())
            / (p["delay_ms"].as_f64().unwrap() / 1e3);
        let got = c["summary"]["throughput_per_s"]["median"].as_f64().unwrap();
        assert!(
            got <= bound * 1.02,
            "{variant}: {got:.1}/s above Little's law {bound:.1}/s"
        );
        got
    };
    assert!(median("asyncio") > 10.0 * median("sync"));
    assert!(cells.iter().any(|c| c["scenario"] == "db"));

    // Ctrl-C: the client stops and keeps what it measured; every role is removed.
    let out = tmp.path().join("interrupted");
    let mut interrupted = spawn_run("io_http", &out);
    wait_for_client();
    std::thread::sleep(Duration::from_secs(5));
    signal(&interrupted, libc::SIGINT);
    let status = interrupted.wait().unwrap();
    assert!(!status.success(), "an interrupted run exits non-zero");
    assert_eq!(left_on_engine(), Vec::<String>::new(), "after Ctrl-C");
}

/// The processes of the server role's container, as `docker top` lists them, until `stop`.
fn watch_server_role(stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> String {
    let mut seen = String::new();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let name = docker(&[
            "ps",
            "--format",
            "{{.Names}}",
            "--filter",
            "label=asynclab.role=server",
        ]);
        if let Some(name) = name.lines().next() {
            let out = Command::new("docker").args(["top", name]).output().unwrap();
            seen.push_str(&String::from_utf8_lossy(&out.stdout));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    seen
}

#[test]
#[ignore = "needs a Docker engine with asynclab/postgres:15-debian: make test-docker runs it"]
fn services_under_test_run_in_the_server_role_and_query_the_database_role() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("catalogue.toml");
    std::fs::write(
        &cat,
        r#"[[scenario]]
name = "svc_roles"
driver = "loadgen"
title = "the database endpoint with each role in its own container"
services = ["postgres"]
variants = ["gunicorn_gthread", "uvicorn"]
timeout_s = 60

[scenario.params]
endpoint = "db"
connections = 20
rate_per_s = 0
duration_s = 1
warmup_s = 0.3
"#,
    )
    .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        std::thread::spawn(move || watch_server_role(stop))
    };
    let dir = tmp.path().join("run");
    let run = bin()
        .args([
            "run",
            "--scenario",
            "svc_roles",
            "--rounds",
            "2",
            "--warmups",
            "0",
        ])
        .args(["--hosts", "containers", "--python", "3.12", "--catalogue"])
        .arg(&cat)
        .arg("--out")
        .arg(&dir)
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(left_on_engine(), Vec::<String>::new(), "after a normal end");
    // Both servers ran in the server role's container.
    for server in ["gunicorn", "uvicorn"] {
        assert!(
            seen.contains(server),
            "no {server} in the server role: {seen}"
        );
    }
    let r = results(&dir);
    assert_eq!(schema_errors(&r), Vec::<String>::new());
    for c in r["cells"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        assert_eq!(c["status"], "ok", "{id}: {}", c["failure"]);
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["errors"], 0, "{id}: {}", run["error_samples"]);
            assert!(run["ops"].as_u64().unwrap() > 0, "{id}");
            // Measured from the client through the shared /proc: the server worked, within
            // what its CPU set allows, and its CPU is the lab's, not foreign (the server was
            // busy for the whole run; counted as foreign it would dwarf the engine's own).
            let server = &run["extra"]["server"];
            let cpu = server["cpu_s"].as_f64().unwrap();
            let wall = run["wall_s"].as_f64().unwrap();
            let cpus = server["cpus"].as_array().unwrap().len() as f64;
            assert!(
                cpu > 0.0 && cpu <= wall * cpus + 0.05,
                "{id}: {cpu} s in {wall} s"
            );
            assert!(server["rss_mib"].as_f64().unwrap() > 0.0, "{id}");
            // The run's memory is the load generator's and the server's, as for a child: a
            // Python server alone holds more than 20 MiB, the generator a few.
            let memory = run["peak_rss_mib"].as_f64().unwrap();
            assert!(memory > 20.0, "{id}: {memory} MiB with the server's tree");
            let foreign = run["interference"]["foreign_cpu_s"].as_f64().unwrap();
            assert!(
                foreign < cpu,
                "{id}: foreign {foreign} s against the server's {cpu} s"
            );
        }
    }
}
