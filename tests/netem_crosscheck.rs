//! The delay line against the kernel's own delay: the same db_remote cells with a 5 ms round
//! trip made by the delay line, and made by `tc netem` on the loopback of a fresh network
//! namespace (2.5 ms on every packet, so 5 ms per round trip), agree within 10% in throughput.
//! `#[ignore]`d, so `cargo test` lists it as skipped with the reason: it needs `unshare`, `ip`
//! and `tc` (iproute2), the right to make a network namespace and a kernel with `sch_netem`.
//! `make test-netem` runs it, and `.ci/run` does where `tc qdisc add ... netem` works; run so,
//! it fails when the kernel cannot make the delay.

mod common;

use std::process::Command;
use std::time::Duration;

use common::*;

/// The kernel's delay per packet, µs: half the round trip the delay line is asked for.
const NETEM_DELAY_US: u32 = 2500;
const RTT_MS: &str = "rtt_ms=5";

/// The shell commands that give a fresh namespace its loopback and put netem on it.
fn netem_setup() -> String {
    format!("ip link set lo up && tc qdisc add dev lo root netem delay {NETEM_DELAY_US}us")
}

/// Why the kernel cannot delay here, or None when it can.
fn netem_unavailable() -> Option<String> {
    let out = Command::new("unshare")
        .args(["--net", "sh", "-c", &netem_setup()])
        .output();
    match out {
        Err(e) => Some(format!("unshare: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "`unshare --net sh -c '{}'`: {}",
            netem_setup(),
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => None,
    }
}

/// The db_remote run both sides make, at concurrency 10 and k = 3 queries per request.
fn run_args(network: &str, dir: &std::path::Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--scenario",
        "db_remote",
        "--param",
        network,
        "--param",
        "concurrency=10",
        "--param",
        "queries=300",
        "--rounds",
        "3",
        "--warmups",
        "1",
        "--max-foreign-cores",
        "100",
        "--out",
    ]
    .map(String::from)
    .to_vec();
    args.push(dir.display().to_string());
    args
}

/// Median throughput per variant of a run.
fn throughput(dir: &std::path::Path) -> Vec<(String, f64)> {
    let r = results(dir);
    r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["status"], "ok", "{}: {}", c["id"], c["failure"]);
            let tput = c["summary"]["throughput_per_s"]["median"].as_f64().unwrap();
            (c["variant"].as_str().unwrap().to_string(), tput)
        })
        .collect()
}

#[test]
#[ignore = "needs tc netem in a network namespace (iproute2, sch_netem): make test-netem runs it"]
fn the_delay_line_agrees_with_netem_within_10_percent() {
    if let Some(why) = netem_unavailable() {
        panic!("the kernel cannot make the delay on this machine: {why}");
    }
    let out = tempfile::tempdir().unwrap();
    let (line_dir, kernel_dir) = (out.path().join("line"), out.path().join("kernel"));
    bin()
        .args(run_args(RTT_MS, &line_dir))
        .timeout(Duration::from_secs(900))
        .assert()
        .success();
    // The whole driver in a namespace whose loopback delays every packet: PostgreSQL, the
    // workers and the driver all talk over it; no delay line (rtt_ms=0).
    let inner = std::iter::once(
        assert_cmd::cargo::cargo_bin("asynclab")
            .display()
            .to_string(),
    )
    .chain(run_args("rtt_ms=0", &kernel_dir))
    .map(|a| format!("'{a}'"))
    .collect::<Vec<_>>()
    .join(" ");
    let status = Command::new("unshare")
        .args([
            "--net",
            "sh",
            "-c",
            &format!("{} && exec {inner}", netem_setup()),
        ])
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("DATABASE_URL")
        .status()
        .unwrap();
    assert!(status.success(), "the run under netem failed: {status}");
    let line = throughput(&line_dir);
    let kernel = throughput(&kernel_dir);
    assert_eq!(line.len(), kernel.len());
    for ((variant, by_line), (same, by_kernel)) in line.iter().zip(&kernel) {
        assert_eq!(variant, same);
        let ratio = by_line / by_kernel;
        assert!(
            (0.9..=1.1).contains(&ratio),
            "{variant}: {by_line:.1}/s through the delay line, {by_kernel:.1}/s under netem ({ratio:.3})"
        );
    }
}
