//! `asynclab export pyperf` read by pyperf itself (2.11, in the lab's own environment):
//! `compare_to` on two real runs (`tests/data/results/quick.json` and `two_pythons.json`,
//! which share their Python 3.12.1 cells), `stats` and `hist`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;

/// The lab's Python 3.12 environment, which has pyperf (`make envs`).
fn python() -> PathBuf {
    let venvs = root().join(".venvs");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&venvs)
        .unwrap_or_else(|e| panic!("{}: {e}; run `make envs`", venvs.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("cpython-3.12."))
        })
        .map(|p| p.join("bin/python"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found
        .pop()
        .expect("a .venvs/cpython-3.12.* environment; run `make envs`")
}

/// Copies a saved run into `tmp/name/results.json` and exports it into `tmp/pyperf/`.
fn export(tmp: &Path, name: &str, saved: &str) -> PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(root().join(saved), dir.join("results.json")).unwrap();
    bin()
        .args(["export", "pyperf"])
        .arg(&dir)
        .arg("--out")
        .arg(tmp.join("pyperf"))
        .assert()
        .success();
    tmp.join("pyperf").join(format!("{name}.json"))
}

/// `python -m pyperf ARGS`: stdout; panics with stderr on failure.
fn pyperf(args: &[&Path]) -> String {
    let out = Command::new(python())
        .args(["-m", "pyperf"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "pyperf {args:?}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn ids(saved: &str) -> Vec<String> {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(saved)).unwrap()).unwrap();
    doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn pyperf_compares_two_exported_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let a = export(tmp.path(), "quick", "tests/data/results/quick.json");
    let b = export(tmp.path(), "two", "tests/data/results/two_pythons.json");
    let table = pyperf(&[Path::new("compare_to"), &a, &b, Path::new("--table")]);
    let common: Vec<String> = ids("tests/data/results/quick.json")
        .into_iter()
        .filter(|id| ids("tests/data/results/two_pythons.json").contains(id))
        .collect();
    assert_eq!(common.len(), 8, "the 3.12.1 cells of both runs");
    for id in &common {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| {id} ")))
            .unwrap_or_else(|| panic!("{id} not in:\n{table}"));
        assert!(
            row.contains("x faster") || row.contains("x slower") || row.contains("not significant"),
            "no comparison in {row}"
        );
        assert!(
            row.contains(" ms"),
            "seconds per operation shown as ms: {row}"
        );
    }
    assert!(
        table.contains("| Benchmark ") && table.contains("| quick ") && table.contains("| two ")
    );
    assert!(table.contains("Geometric mean"), "{table}");
    let stats = pyperf(&[Path::new("stats"), &b]);
    assert!(stats.contains("Number of benchmarks: 16"), "{stats}");
    assert!(stats.contains("Number of warmup per run: 0"), "{stats}");
    let hist = pyperf(&[Path::new("hist"), &a]);
    assert!(hist.contains("io_http/sync/3.12.1/"), "{hist}");
}

#[test]
fn only_clean_runs_are_values_and_the_unit_is_said() {
    let tmp = tempfile::tempdir().unwrap();
    let file = export(tmp.path(), "quick", "tests/data/results/quick.json");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/results/quick.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(suite["version"], "1.0");
    for (bench, cell) in suite["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .zip(doc["cells"].as_array().unwrap())
    {
        assert_eq!(bench["metadata"]["name"], cell["id"]);
        assert_eq!(bench["metadata"]["unit"], "second");
        let runs = bench["runs"].as_array().unwrap();
        assert_eq!(runs.len(), cell["runs"].as_array().unwrap().len());
        for (r, rec) in runs.iter().zip(cell["runs"].as_array().unwrap()) {
            let v = r["values"][0].as_f64().unwrap();
            let want = rec["wall_s"].as_f64().unwrap() / rec["ops"].as_f64().unwrap();
            assert!((v - want).abs() <= 1e-12 * want, "{v} vs {want}");
            assert!(r.get("warmups").is_none());
        }
    }
}
