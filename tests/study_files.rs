//! Study files end to end: a study run, `rerun` of its output making the same cells with the
//! same parameters, `compare` on the two; malformed study files refused with one line naming
//! the file and the key; `--dry-run` printing the plan without starting anything.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;

/// A cheap study: the CPU scenario with tiny parameters, 2 rounds, no warm-up.
const CHEAP: &str =
    "scenarios = [\"cpu\"]\nrounds = 2\nwarmups = 0\n\n[params]\nn = 2000\njobs = 2\n";

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Cell id → parameters of a results document.
fn cells(r: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["params"].clone()))
        .collect()
}

#[test]
fn a_study_runs_reruns_the_same_cells_and_compares() {
    let tmp = tempfile::tempdir().unwrap();
    let study = write(tmp.path(), "cheap.toml", CHEAP);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    bin()
        .args(["run", "--study"])
        .arg(&study)
        .arg("--out")
        .arg(&a)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let first = results(&a);
    let inv = &first["invocation"];
    assert!(
        inv["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "--study"),
        "{inv}"
    );
    assert!(!inv["cwd"].as_str().unwrap().is_empty());
    let st = &inv["study"];
    assert_eq!(st["scenarios"], serde_json::json!(["cpu"]));
    assert_eq!(
        (st["rounds"].as_u64(), st["warmups"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(st["params"]["n"], 2000);
    assert_eq!(st["python"].as_array().unwrap().len(), 1, "{st}");
    let ids = cells(&first);
    assert_eq!(ids.len(), 5, "cpu has 5 variants: {ids:?}");
    for c in first["cells"].as_array().unwrap() {
        assert_eq!(c["params"]["n"], 2000, "{}", c["id"]);
        if c["status"] == "skipped" {
            // Subinterpreters need 3.14; the study's interpreter is older.
            assert_eq!(c["variant"], "interpreters", "{}", c["id"]);
            continue;
        }
        assert_eq!(c["runs"].as_array().unwrap().len(), 2, "{}", c["id"]);
    }

    bin()
        .arg("rerun")
        .arg(&a)
        .arg("--out")
        .arg(&b)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let second = results(&b);
    assert_eq!(cells(&second), ids, "same cells, same parameters");
    assert_eq!(second["invocation"]["study"], first["invocation"]["study"]);
    assert_eq!(second["method"]["rounds"], 2);

    let out = bin()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let code = out.status.code();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(code, Some(0 | 1)),
        "compare exited {code:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for d in [&a, &b] {
        assert!(
            stdout.contains(&d.display().to_string()),
            "{} not in: {stdout}",
            d.display()
        );
    }
}

#[test]
fn a_document_from_before_reruns_says_how_to_run_it_by_hand() {
    let out = bin()
        .args(["rerun", "tests/data/results/two_pythons.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("predates reruns") && err.contains("asynclab run --scenario"),
        "{err}"
    );
}

#[test]
fn bad_study_files_get_one_line_with_the_file_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text, key) in [
        (
            "syntax.toml",
            "scenarios = [\"cpu\"\nrounds = 2\n",
            "line 2",
        ),
        (
            "unknown.toml",
            "scenarios = [\"cpu\"]\nround = 2\n",
            "line 2: round: unknown field",
        ),
        (
            "type.toml",
            "scenarios = [\"cpu\"]\nrounds = \"two\"\n",
            "rounds",
        ),
        (
            "scenario.toml",
            "scenarios = [\"nope\"]\n",
            "no scenario named 'nope'",
        ),
        (
            "param.toml",
            "scenarios = [\"cpu\"]\n[params]\nzz = 1\n",
            "params.zz",
        ),
        (
            "paramtype.toml",
            "scenarios = [\"cpu\"]\n[params]\nn = \"many\"\n",
            "params.n",
        ),
        (
            "loop.toml",
            "scenarios = [\"cpu\"]\nloops = [\"tokio\"]\n",
            "loops",
        ),
    ] {
        let path = write(tmp.path(), name, text);
        let out = bin()
            .args(["run", "--dry-run", "--study"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(&path.display().to_string()), "{name}: {err}");
        assert!(err.contains(key), "{name}: want {key}: {err}");
    }
    let out = bin()
        .args(["run", "--study", "no/such/study.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/study.toml"));
}

/// What `run --dry-run --study STUDY EXTRA...` prints, once it has succeeded.
fn dry_run(study: &Path, extra: &[&str]) -> String {
    let out = bin()
        .args(["run", "--dry-run", "--study"])
        .arg(study)
        .args(extra)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn dry_run_prints_the_plan_and_starts_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let study = write(tmp.path(), "cheap.toml", CHEAP);
    let out_dir = tmp.path().join("never");
    let out_flag = out_dir.display().to_string();
    let stdout = dry_run(
        &study,
        &["--rounds", "3", "--param", "n=3000", "--out", &out_flag],
    );
    assert!(!out_dir.exists(), "--dry-run made the results folder");
    for v in [
        "sync",
        "asyncio",
        "threads",
        "multiprocessing",
        "interpreters",
    ] {
        assert!(stdout.contains(v), "{v}: {stdout}");
    }
    // The flags override the file: 5 cells × (0 warm-ups + 3 rounds), n=3000, jobs kept.
    assert!(
        stdout.contains("5 cells × (0 warm-up + 3 rounds) = 15 runs"),
        "{stdout}"
    );
    assert!(
        stdout.contains("n=3000") && !stdout.contains("n=2000"),
        "{stdout}"
    );
    assert!(stdout.contains("jobs=2"), "{stdout}");
    assert!(stdout.contains("total: 15 runs"), "{stdout}");
    assert!(stdout.contains("time: "), "{stdout}");
    assert!(
        stdout.contains("rounds = 3"),
        "the resolved study: {stdout}"
    );

    // Without a study, on the catalogue's own plan.
    let out = bin()
        .args([
            "run",
            "--dry-run",
            "--scenario",
            "io_http",
            "--quick",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!out_dir.exists());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("scenario io_http: 4 cells"), "{stdout}");
    assert!(
        !stdout.contains("mock HTTP") && processes_with(&out_dir.display().to_string()).is_empty()
    );
}

#[test]
fn a_study_places_the_roles_and_its_resolved_study_keeps_them() {
    let tmp = tempfile::tempdir().unwrap();
    let study = write(
        tmp.path(),
        "apart.toml",
        "scenarios = [\"io_http\"]\nquick = true\nhosts = \"containers\"\n",
    );
    let stdout = dry_run(&study, &[]);
    assert!(
        stdout.contains("hosts: each role in its own container"),
        "{stdout}"
    );
    assert!(
        stdout.contains("hosts = \"containers\""),
        "the resolved study: {stdout}"
    );
}

#[test]
fn every_committed_study_file_plans() {
    let dir = root().join("workloads/studies");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            bin()
                .args(["run", "--dry-run", "--study"])
                .arg(&path)
                .timeout(Duration::from_secs(60))
                .assert()
                .success();
            seen += 1;
        }
    }
    assert!(seen >= 2, "no study files in {}", dir.display());
}
