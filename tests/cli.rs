//! Bad input gets one clear line naming the problem and the fix, and a non-zero exit.

use crate::common;

use common::*;
use predicates::prelude::*;

fn one_line_error(args: &[&str], needles: &[&str]) {
    let out = bin().args(args).assert().failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("asynclab: "))
        .collect();
    assert_eq!(lines.len(), 1, "one line expected, got: {stderr}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} missing from: {}", lines[0]);
    }
}

#[test]
fn unknown_scenario_lists_the_known_ones() {
    one_line_error(
        &["run", "--scenario", "nope"],
        &["--scenario", "nope", "io_http", "asynclab list"],
    );
}

#[test]
fn variants_narrow_the_plan_and_an_unknown_one_is_named_with_the_known_ones() {
    let out = bin()
        .args(["run", "--scenario", "io_http", "--variants", "asyncio,sync"])
        .arg("--dry-run")
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let cells: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" python "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(!cells.is_empty(), "{stdout}");
    assert!(
        cells.iter().all(|v| ["sync", "asyncio"].contains(v)),
        "{cells:?}"
    );
    assert!(
        stdout.contains("variants = [\"asyncio\", \"sync\"]"),
        "{stdout}"
    );
    one_line_error(
        &[
            "run",
            "--scenario",
            "io_http",
            "--variants",
            "thread",
            "--dry-run",
        ],
        &[
            "--variants",
            "'thread' is not a variant of io_http",
            "threads",
        ],
    );
}

#[test]
fn wrong_parameter_type_names_the_flag() {
    one_line_error(
        &["run", "--scenario", "io_http", "--param", "requests=many"],
        &["--param requests=many", "integer"],
    );
    one_line_error(
        &["run", "--scenario", "io_http", "--param", "colour=red"],
        &["--param colour", "requests"],
    );
}

#[test]
fn missing_interpreter_says_how_to_get_it() {
    one_line_error(
        &["run", "--scenario", "io_http", "--python", "3.99"],
        &["--python 3.99", "pyenv install 3.99"],
    );
}

#[test]
fn more_held_connections_than_the_machine_allows_are_refused_before_the_run() {
    // More than any machine's local ports: refused before anything starts, with the fix.
    one_line_error(
        &[
            "run",
            "--scenario",
            "connections",
            "--param",
            "hold=10000000",
            "--dry-run",
        ],
        &["scenario connections", "hold = 10000000", "give fewer"],
    );
}

#[test]
fn a_room_larger_than_the_machine_allows_is_refused_before_the_run() {
    one_line_error(
        &[
            "run",
            "--scenario",
            "fanout",
            "--param",
            "clients=10000000",
            "--dry-run",
        ],
        &["scenario fanout", "clients = 10000000", "give fewer"],
    );
}

#[test]
fn a_load_over_no_connections_is_refused_before_the_run() {
    one_line_error(
        &[
            "run",
            "--scenario",
            "service",
            "--param",
            "connections=0",
            "--dry-run",
        ],
        &["scenario service", "connections = 0", "give 1 or more"],
    );
}

#[test]
fn a_room_of_slow_clients_only_is_refused_before_the_run() {
    one_line_error(
        &[
            "run",
            "--scenario",
            "slow_consumer",
            "--param",
            "slow_clients=50",
            "--dry-run",
        ],
        &[
            "scenario slow_consumer",
            "slow_clients = 50",
            "clients above it",
        ],
    );
}

#[test]
fn a_database_host_that_is_not_an_engine_is_refused_in_one_line() {
    one_line_error(
        &[
            "run",
            "--scenario",
            "db",
            "--database-host",
            "ssh://h",
            "--dry-run",
        ],
        &[
            "--database-host",
            "\"ssh://h\"",
            "tcp://HOST:PORT",
            "ssh -NL",
        ],
    );
    // Nothing listens on port 1: the engine is named with the fix, before anything starts.
    one_line_error(
        &[
            "run",
            "--scenario",
            "db",
            "--database-host",
            "tcp://127.0.0.1:1",
            "--dry-run",
        ],
        &[
            "--database-host",
            "no Docker engine is reachable at tcp://127.0.0.1:1",
            "correct the address",
        ],
    );
}

#[test]
fn a_delay_line_between_server_and_database_is_refused_under_hosts_containers() {
    one_line_error(
        &[
            "run",
            "--scenario",
            "paterson",
            "--hosts",
            "containers",
            "--dry-run",
        ],
        &["--hosts", "scenario paterson", "rtt 20 ms", "drop rtt_ms"],
    );
}

#[test]
fn a_server_on_a_fixed_address_is_refused_under_hosts_containers() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("catalogue.toml");
    std::fs::write(
        &cat,
        r#"[[scenario]]
name = "fixed_svc"
driver = "loadgen"
title = "a server that binds 127.0.0.1 whatever it is told"
variants = ["fixed"]

[scenario.params]
endpoint = "plain"
connections = 1
rate_per_s = 0
duration_s = 1

[[server]]
name = "fixed"
title = "binds a fixed address"
kind = "sync"
command = ["{python}", "app.py", "127.0.0.1", "{port}"]
workers = 1
"#,
    )
    .unwrap();
    std::fs::create_dir(tmp.path().join("services")).unwrap();
    let cat = cat.display().to_string();
    one_line_error(
        &[
            "run",
            "--catalogue",
            &cat,
            "--scenario",
            "fixed_svc",
            "--hosts",
            "containers",
            "--dry-run",
        ],
        &["--hosts", "server fixed", "fixed address", "{host}"],
    );
}

#[test]
fn zero_rounds_is_refused() {
    one_line_error(
        &["run", "--scenario", "io_http", "--rounds", "0"],
        &["--rounds"],
    );
}

#[test]
fn max_rounds_beyond_what_the_test_can_use_is_refused() {
    one_line_error(
        &["run", "--scenario", "io_http", "--max-rounds", "30"],
        &["--max-rounds", "2 to 20"],
    );
}

#[test]
fn a_noise_threshold_outside_zero_to_one_is_refused() {
    one_line_error(
        &["run", "--scenario", "io_http", "--noise-threshold", "2"],
        &["--noise-threshold", "0.03"],
    );
}

#[test]
fn malformed_catalogue_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("catalogue.toml"),
        "[[scenario]]\nname = 3\n",
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    one_line_error(
        &["list", "--workloads", d],
        &[
            "catalogue.toml",
            "malformed catalogue: line 2: scenario[0].name",
        ],
    );
    one_line_error(&["list", "--workloads", "/nonexistent"], &["--workloads"]);
}

#[test]
fn mock_server_port_in_use_names_the_address() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    one_line_error(
        &["mock-server", "--port", &port],
        &[&format!("port {port} on 127.0.0.1"), "in use"],
    );
}

#[test]
fn unreachable_database_url_fails_fast() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgresql://nobody@127.0.0.1:{closed}/x");
    let started = std::time::Instant::now();
    bin()
        .args([
            "run",
            "--pg",
            "external",
            "--workloads",
            "tests/data/workloads",
            "--scenario",
            "pg_probe",
        ])
        .env("DATABASE_URL", &url)
        .args(["--venvs", "target/test-venvs", "--python", "3.12"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!("127.0.0.1:{closed}")));
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
}

/// `run --scenario no_service,pg_probe` on the test workloads with the results in `out`.
fn run_beside_pg_probe(out: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = bin();
    cmd.args(["run", "--workloads", "tests/data/workloads"])
        .args(["--scenario", "no_service,pg_probe", "--quick", "--out"])
        .arg(out)
        .args(["--venvs", "target/test-venvs", "--python", "3.12"]);
    cmd
}

/// A closed loopback port: a database URL nothing answers at.
fn unreachable_url() -> String {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("postgresql://nobody@127.0.0.1:{closed}/x")
}

#[test]
fn a_scenario_whose_database_cannot_be_had_is_skipped_and_the_rest_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let assert = run_beside_pg_probe(&out)
        .args(["--pg", "external"])
        .env("DATABASE_URL", unreachable_url())
        .assert()
        .success()
        .stderr(predicate::str::contains("skipping pg_probe"))
        .stdout(predicate::str::contains(
            "pg_probe: not run: it needs postgres",
        ));
    drop(assert);
    let doc = common::results(&out);
    let skipped = doc["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0]["scenario"], "pg_probe");
    assert!(skipped[0]["reason"].as_str().unwrap().contains("127.0.0.1"));
    let cells = doc["cells"].as_array().unwrap();
    assert!(!cells.is_empty() && cells.iter().all(|c| c["scenario"] == "no_service"));
    assert!(cells.iter().all(|c| c["status"] == "ok"), "{cells:?}");
    assert!(common::schema_errors(&doc).is_empty());
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("Scenario pg_probe did not run: it needs postgres"));
}

#[test]
fn strict_makes_a_database_that_cannot_be_had_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let url = unreachable_url();
    let port = url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/x")
        .to_string();
    run_beside_pg_probe(&tmp.path().join("run"))
        .args(["--pg", "external", "--strict"])
        .env("DATABASE_URL", &url)
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!("127.0.0.1:{port}")));
}

/// With no `DATABASE_URL`, no Docker engine and PostgreSQL's programs hidden (a private mount
/// namespace puts an empty folder over /usr/lib/postgresql and /usr/local/bin drops out of
/// PATH), `--pg auto` cannot have a database: the run goes on without the scenario that
/// needs one and names what is missing.
#[test]
fn a_machine_without_postgresql_runs_the_other_scenarios() {
    let probe = std::process::Command::new("unshare")
        .args(["--mount", "--map-root-user", "true"])
        .output()
        .expect("unshare (util-linux) runs");
    assert!(
        probe.status.success(),
        "cannot hide PostgreSQL in a mount namespace (run as root or enable user namespaces): {}",
        String::from_utf8_lossy(&probe.stderr).trim()
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let exe = assert_cmd::cargo::cargo_bin("asynclab");
    let hide = "if [ -d /usr/lib/postgresql ]; then mount -t tmpfs none /usr/lib/postgresql || exit 97; fi; exec \"$@\"";
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["--mount", "--map-root-user", "sh", "-c", hide, "sh"])
        .arg(exe)
        .args(["run", "--workloads", "tests/data/workloads"])
        .args(["--scenario", "no_service,pg_probe", "--quick", "--out"])
        .arg(&out)
        .args(["--venvs", "target/test-venvs", "--python", "3.12"])
        .current_dir(common::root())
        .env_remove("DATABASE_URL")
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
        .env("NO_COLOR", "1");
    let run = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("skipping pg_probe"), "{stderr}");
    assert!(
        stderr.contains("initdb"),
        "the line names what is missing: {stderr}"
    );
    let doc = common::results(&out);
    assert_eq!(doc["skipped"][0]["scenario"], "pg_probe");
    assert!(doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["scenario"] == "no_service" && c["status"] == "ok"));
}

/// `run --scenario no_service --quick` from the folder `cwd` (so `results/` lands there), with
/// `extra` arguments.
fn run_no_service_in(cwd: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let root = common::root();
    bin()
        .current_dir(cwd)
        .arg("run")
        .arg("--workloads")
        .arg(root.join("tests/data/workloads"))
        .arg("--venvs")
        .arg(root.join("target/test-venvs"))
        .args(["--python", "3.12", "--scenario", "no_service", "--quick"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_study_threshold_that_fails_exits_1_and_prints_the_failing_row() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("gate.toml");
    std::fs::write(
        &study,
        "[thresholds]\nno_service = [\"throughput_per_s > 1e15\", \"wall_s >= 0\"]\n",
    )
    .unwrap();
    let out = run_no_service_in(tmp.path(), &["--study", study.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("thresholds: 1 of 2 check(s) failed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAILED no_service: throughput_per_s > 1000000000000000"),
        "{stdout}"
    );
    assert!(!stdout.contains("FAILED no_service: wall_s"), "{stdout}");
    assert!(stderr.contains("1 threshold check(s) failed"), "{stderr}");
    let summary = std::fs::read_to_string(tmp.path().join("results/latest/summary.md")).unwrap();
    assert!(summary.contains("## Thresholds"), "{summary}");
}

#[test]
fn a_malformed_threshold_is_one_line_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("bad.toml");
    std::fs::write(&study, "[thresholds]\nno_service = [\"p98_ms < 5\"]\n").unwrap();
    let out = run_no_service_in(tmp.path(), &["--study", study.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("thresholds.no_service") && stderr.contains("p98_ms"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn a_saved_baseline_is_compared_with_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = run_no_service_in(tmp.path(), &["--baseline", "before"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--save-baseline before"));
    let saved = run_no_service_in(tmp.path(), &["--save-baseline", "before", "--out", "a"]);
    assert!(
        saved.status.success(),
        "{}",
        String::from_utf8_lossy(&saved.stderr)
    );
    assert!(tmp
        .path()
        .join("results/baselines/before/results.json")
        .is_file());
    let again = run_no_service_in(
        tmp.path(),
        &["--baseline", "before", "-r", "3", "-w", "0", "--out", "b"],
    );
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(stdout.contains("against the baseline before"), "{stdout}");
    assert!(
        stdout.contains("no_service/ok"),
        "the comparison names the cell: {stdout}"
    );
}

#[test]
fn exports_and_alpha_land_where_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let j = tmp.path().join("one.json");
    let m = tmp.path().join("one.md");
    let c = tmp.path().join("one.csv");
    let out = run_no_service_in(
        tmp.path(),
        &[
            "--alpha",
            "0.01",
            "--export-json",
            j.to_str().unwrap(),
            "--export-markdown",
            m.to_str().unwrap(),
            "--export-csv",
            c.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(doc["method"]["alpha"], 0.01);
    assert!(std::fs::read_to_string(&m).unwrap().contains("α = 0.01"));
    assert!(std::fs::read_to_string(&c).unwrap().contains("no_service"));
    let bad = run_no_service_in(tmp.path(), &["--alpha", "1.5"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--alpha"));
}

#[test]
fn list_shows_the_catalogue() {
    bin()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("io_http"));
}

#[test]
fn bad_interference_limit_names_the_flag() {
    one_line_error(
        &["run", "--scenario", "cpu", "--max-foreign-cores=-1"],
        &["--max-foreign-cores", "number of cores"],
    );
}

#[test]
fn doctor_reports_levels_as_json_and_measures_foreign_cpu() {
    let out = bin().args(["doctor", "--json"]).output().unwrap();
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = findings.as_array().unwrap();
    let level = |what: &str| {
        findings
            .iter()
            .find(|f| f["what"] == what)
            .unwrap_or_else(|| panic!("{what} missing"))["level"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // A busy machine is a warning, never "missing".
    assert!(["ok", "warn"].contains(&level("foreign CPU now").as_str()));
    assert!(["ok", "warn"].contains(&level("load average").as_str()));
    // An unsteady machine speed is a warning too, never "missing".
    assert!(["ok", "warn"].contains(&level("machine speed").as_str()));
    let missing = findings.iter().any(|f| f["level"] == "missing");
    assert_eq!(out.status.code(), Some(i32::from(missing)));
}

#[test]
fn run_help_quotes_the_catalogue_it_runs() {
    let out = |args: &[&str]| {
        let o = bin().args(args).assert().success();
        String::from_utf8_lossy(&o.get_output().stdout).to_string()
    };
    let names: Vec<String> = out(&["list"])
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(names.len() > 5, "asynclab list printed too little");
    // clap wraps help text, so compare with the whitespace folded.
    let help = out(&["run", "--help"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let quoted = format!("In the catalogue: {}.", names.join(", "));
    assert!(help.contains(&quoted), "{quoted:?} not in: {help}");
    assert!(
        help.contains("Scenarios without a service here: "),
        "{help}"
    );
    assert!(help.contains("The catalogue's parameters: "), "{help}");
    // A user's --workloads folder is the one quoted.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("catalogue.toml"),
        "[[scenario]]\nname = \"mine\"\nscript = \"mine.py\"\ntitle = \"t\"\nquestion = \"q\"\nvariants = [\"sync\"]\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("mine.py"), "").unwrap();
    let dir = tmp.path().to_str().unwrap();
    let mine = out(&["run", "--workloads", dir, "--help"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(mine.contains("In the catalogue: mine."), "{mine}");
}

#[test]
fn an_interpreter_that_cannot_be_found_is_skipped_and_the_others_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = run_no_service_in(tmp.path(), &["--python", "3.99", "--out", "run"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("skipping Python 3.99"), "{stderr}");
    assert!(stdout.contains("Python 3.99: not run"), "{stdout}");
    let doc = common::results(&tmp.path().join("run"));
    let skipped = doc["skipped_pythons"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0]["python"], "3.99");
    assert!(skipped[0]["reason"]
        .as_str()
        .unwrap()
        .contains("pyenv install 3.99"));
    let cells = doc["cells"].as_array().unwrap();
    assert!(!cells.is_empty() && cells.iter().all(|c| c["status"] == "ok"));
    assert!(common::schema_errors(&doc).is_empty());
    let summary = std::fs::read_to_string(tmp.path().join("run/summary.md")).unwrap();
    assert!(
        summary.contains("Python 3.99 did not run: --python 3.99"),
        "{summary}"
    );
    // --strict makes it the error it is, before anything is measured.
    let strict = run_no_service_in(tmp.path(), &["--python", "3.99", "--strict"]);
    assert!(!strict.status.success());
    assert!(
        String::from_utf8_lossy(&strict.stderr).contains("--python 3.99: interpreter not found")
    );
    // ... before any environment is built for the interpreters that were found.
    let venvs = tmp.path().join("fresh-venvs");
    let strict = bin()
        .current_dir(tmp.path())
        .args(["run", "--workloads"])
        .arg(common::root().join("tests/data/workloads"))
        .arg("--venvs")
        .arg(&venvs)
        .args([
            "--python",
            "3.12,3.99",
            "--scenario",
            "no_service",
            "--strict",
        ])
        .output()
        .unwrap();
    assert!(!strict.status.success());
    let built: Vec<_> = std::fs::read_dir(&venvs)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        !built
            .iter()
            .any(|n| n.to_string_lossy().starts_with("cpython-")),
        "--strict built {built:?} before refusing"
    );
}
