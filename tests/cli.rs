//! Bad input gets one clear line naming the problem and the fix, and a non-zero exit.

mod common;

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
fn zero_rounds_is_refused() {
    one_line_error(
        &["run", "--scenario", "io_http", "--rounds", "0"],
        &["--rounds"],
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
