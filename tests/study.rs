//! The async-vs-sync study's claims that must hold on any machine: asyncio gains nothing on
//! CPU-bound work, processes do when cores are free, and a thread costs at least ten times
//! the memory of a task.

use crate::common;

use std::time::Duration;

use common::*;

fn median(cell: &serde_json::Value, metric: &str) -> f64 {
    cell["summary"][metric]["median"].as_f64().unwrap()
}

fn range(cell: &serde_json::Value, metric: &str) -> (f64, f64) {
    let s = &cell["summary"][metric];
    (s["min"].as_f64().unwrap(), s["max"].as_f64().unwrap())
}

#[test]
fn cpu_and_memory_claims_hold() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let output = bin()
        .args([
            "run",
            "--scenario",
            "cpu,memory",
            "--quick",
            "--strict",
            "--param",
            "units=1000",
            "--out",
        ])
        .arg(&dir)
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    // `--strict` fails the run on errors, disagreeing variants (the primes below) and
    // inconclusive cells. The last is the lab refusing a verdict because the host stole
    // CPU through every repeat of a round (docs/defaults.md, "The interference test's
    // bounds", has a CI run where it did); that is tests/interference.rs's subject, not
    // this test's. So a strict exit whose only reasons are inconclusive cells is accepted,
    // and the claims below are checked on the clean rounds the lab kept, of which every
    // cpu cell must still have at least two.
    let stderr = String::from_utf8_lossy(&output.stderr);
    let strict_reasons: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("asynclab: --strict: "))
        .collect();
    let only_busy = !strict_reasons.is_empty()
        && strict_reasons
            .iter()
            .all(|l| l.contains(" inconclusive: machine busy"));
    assert!(
        output.status.success() || (output.status.code() == Some(1) && only_busy),
        "run failed: {}\n{stderr}",
        output.status
    );
    if only_busy {
        eprintln!("claims checked on clean rounds only; {strict_reasons:?}");
    }
    let r = results(&dir);
    let cells = r["cells"].as_array().unwrap();
    let cell = |scenario: &str, variant: &str| {
        cells
            .iter()
            .find(|c| c["scenario"] == scenario && c["variant"] == variant)
            .unwrap_or_else(|| panic!("{scenario}/{variant}"))
    };
    for variant in ["sync", "threads", "asyncio", "multiprocessing"] {
        let c = cell("cpu", variant);
        let rounds: std::collections::BTreeSet<u64> = c["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["round"].as_u64().unwrap())
            .collect();
        let busy = c["summary"]["rounds_without_clean_run"]
            .as_u64()
            .unwrap_or(0);
        let clean = rounds.len() as u64 - busy;
        assert!(
            clean >= 2,
            "cpu/{variant} has {clean} clean round(s): too few to check a claim\n{stderr}"
        );
    }

    // asyncio runs CPU work on one thread: no faster than sync beyond the run-to-run spread.
    let (sync, asy) = (cell("cpu", "sync"), cell("cpu", "asyncio"));
    let (_, sync_max) = range(sync, "throughput_per_s");
    let (asy_min, _) = range(asy, "throughput_per_s");
    assert!(
        asy_min <= sync_max * 1.05,
        "asyncio's slowest round ({asy_min:.3}/s) beat sync's fastest ({sync_max:.3}/s) on CPU-bound work"
    );

    // Processes use more than one core when more than one is free. A clean run is one in which
    // other programs and the host's steal took at most the lab's limit of foreign cores (0.1 by
    // default), so on the clean runs every core of the machine was free for the run: the claim
    // is checked there, whatever the load around the test: the summary's medians are the
    // clean runs' (the lab's one rule), and every cpu cell keeps at least two clean rounds
    // (above).
    let cores = r["env"]["cores"].as_u64().unwrap();
    assert!(
        cores >= 2,
        "this study's claim about processes needs at least 2 cores; the lab sees {cores}"
    );
    let mp = cell("cpu", "multiprocessing");
    let speedup = median(mp, "throughput_per_s") / median(sync, "throughput_per_s");
    // Amdahl with pool dispatch: on 2 free cores expect ~1.8x; 1.3x leaves room for the driver
    // and the sampler beside the pool without accepting "no parallelism at all".
    assert!(
        speedup > 1.3,
        "multiprocessing only {speedup:.2}x sync on the clean runs of {cores} cores"
    );

    // Every variant counted the same primes.
    let primes: Vec<&serde_json::Value> = cells
        .iter()
        .filter(|c| c["scenario"] == "cpu")
        .flat_map(|c| c["runs"].as_array().unwrap())
        .map(|r| &r["extra"]["primes"])
        .collect();
    assert!(primes.windows(2).all(|w| w[0] == w[1]), "{primes:?}");

    // 1,000 idle threads cost at least 10x the memory of 1,000 idle tasks.
    let threads = median(cell("memory", "threads"), "peak_rss_delta_mib");
    let tasks = median(cell("memory", "asyncio"), "peak_rss_delta_mib");
    assert!(
        tasks > 0.0,
        "tasks measured no memory at all: the sampler is broken"
    );
    assert!(
        threads >= 10.0 * tasks,
        "threads {threads:.2} MiB vs tasks {tasks:.2} MiB"
    );

    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("## Decision table"), "{summary}");
    assert!(summary.contains("per unit KiB"));
}
