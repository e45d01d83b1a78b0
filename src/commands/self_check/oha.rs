//! The load generator against an outside one (`self-check --oha PATH`): uvicorn from the
//! catalogue serving `/upstream` (a 10 ms mock upstream, so latencies are about 10 ms and a
//! tenth of them is a millisecond), driven open loop at half its capacity by the lab's
//! generator and by oha (`-q RATE --latency-correction`), whose p50 and p99 must agree within
//! [`TOLERANCE`]. The two alternate for [`super::REPEATS`] rounds, as the lab interleaves
//! variants, and are judged on the medians of their rounds: one stall of this VM lands in one
//! round's p99, not in the verdict.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::catalogue::Catalogue;
use crate::loadgen::{self, Endpoint, Load};
use crate::services::mock_http::MockHttp;
use crate::services::under_test::{self, Launch, RunningServer};
use crate::stats::percentile::percentile;

/// How far apart the two generators' p50 and p99 may be, as a fraction of oha's.
pub const TOLERANCE: f64 = 0.10;
/// The server the check drives.
const SERVER: &str = "uvicorn";
/// Connections both generators hold.
const CONNECTIONS: usize = 50;
/// How long each open-loop run lasts.
const DURATION: Duration = Duration::from_secs(5);

/// p50 and p99, ms.
#[derive(Debug, Clone, Copy)]
struct Percentiles {
    p50: f64,
    p99: f64,
}

/// Runs the check; whether both percentiles agree. Prints what it measured.
pub fn check(oha: &Path, workloads: &Path, python: &Path) -> anyhow::Result<bool> {
    let upstream = MockHttp::start("127.0.0.1:0".parse()?)?;
    let cat = Catalogue::load(workloads)?;
    let server = cat.server("self-check", SERVER)?;
    let port = under_test::free_port()?;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let allowed = crate::affinity::allowed_cpus();
    let logs = tempfile::tempdir()?;
    let launch = Launch {
        name: server.name.clone(),
        argv: server.argv(
            &std::path::absolute(python)?.display().to_string(),
            "127.0.0.1",
            port,
            1,
            1,
            None,
        ),
        dir: std::path::absolute(workloads.join(&server.dir))?,
        env: vec![
            ("ASYNCLAB_UPSTREAM_URL".into(), upstream.url()),
            ("ASYNCLAB_UPSTREAM_POOL".into(), CONNECTIONS.to_string()),
        ],
        cpus: if allowed.len() > 1 {
            allowed[1..].to_vec()
        } else {
            vec![]
        },
        log: logs.path().join("uvicorn.log"),
        owner: under_test::owner_value(std::process::id() as i32),
    };
    let mut running = RunningServer::start(&launch)?;
    running.wait_ready(addr, Duration::from_secs(60))?;
    let endpoint = Endpoint::Upstream {
        delay_ms: 10.0,
        bytes: 64,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let base = Load {
        addr,
        endpoint: endpoint.clone(),
        connections: CONNECTIONS,
        rate_per_s: 0.0,
        duration: Duration::from_secs(2),
        timeout: Duration::from_secs(10),
    };
    let closed = rt.block_on(loadgen::run(&base));
    let capacity = closed.samples.len() as f64 / closed.elapsed.as_secs_f64();
    let rate = (capacity / 2.0).floor().max(1.0);
    let open_load = Load {
        rate_per_s: rate,
        duration: DURATION,
        ..base
    };
    let url = format!("http://{addr}{}", endpoint.path());
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for round in 1..=super::REPEATS {
        let a = ours_once(&rt, &open_load)?;
        let b = run_oha(oha, &url, rate)?;
        println!(
            "round {round} of {}: the lab's generator p50 {:.2} ms, p99 {:.2} ms; oha p50 {:.2} ms, p99 {:.2} ms",
            super::REPEATS,
            a.p50,
            a.p99,
            b.p50,
            b.p99
        );
        ours.push(a);
        theirs.push(b);
    }
    drop(running);
    let med = |v: &[Percentiles], f: fn(&Percentiles) -> f64| {
        crate::stats::percentile::median(&v.iter().map(f).collect::<Vec<_>>())
    };
    let mut fit = true;
    for (what, f) in [
        ("p50", (|p: &Percentiles| p.p50) as fn(&Percentiles) -> f64),
        ("p99", |p: &Percentiles| p.p99),
    ] {
        let (a, b) = (med(&ours, f), med(&theirs, f));
        let off = (a - b).abs() / b;
        let ok = off <= TOLERANCE;
        fit &= ok;
        println!(
            "load generator against oha on {SERVER} /upstream (10 ms) at {rate:.0}/s, half its capacity of {capacity:.0}/s: median {what} over {} rounds {a:.2} ms against oha's {b:.2} ms, {:.1}% apart: {} (bound {:.0}%)",
            super::REPEATS,
            off * 100.0,
            if ok { "fit" } else { "NOT FIT" },
            TOLERANCE * 100.0
        );
    }
    Ok(fit)
}

/// One open-loop run of the lab's generator; its corrected p50 and p99.
fn ours_once(rt: &tokio::runtime::Runtime, load: &Load) -> anyhow::Result<Percentiles> {
    let open = rt.block_on(loadgen::run(load));
    let ours: Vec<f64> = open.samples.iter().map(|s| s.corrected_ms()).collect();
    if ours.is_empty() || open.errors > 0 {
        anyhow::bail!(
            "the lab's generator got {} answers and {} errors from {SERVER} (first: {:?})",
            ours.len(),
            open.errors,
            open.error_samples.first()
        );
    }
    Ok(Percentiles {
        p50: percentile(&ours, 50.0),
        p99: percentile(&ours, 99.0),
    })
}

/// oha open loop at `rate` with its latency correction; its p50 and p99.
fn run_oha(oha: &Path, url: &str, rate: f64) -> anyhow::Result<Percentiles> {
    let out = Command::new(oha)
        .args(["-z", &format!("{}s", DURATION.as_secs())])
        .args(["-c", &CONNECTIONS.to_string()])
        .args(["-q", &format!("{rate}")])
        .args([
            "--latency-correction",
            "--no-tui",
            "--output-format",
            "json",
        ])
        .arg(url)
        .output()
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot run oha at {}: {e}; `make bench` installs it",
                oha.display()
            )
        })?;
    if !out.status.success() {
        anyhow::bail!(
            "oha failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| anyhow::anyhow!("oha's JSON output did not parse: {e}"))?;
    let pct = |key: &str| {
        v["latencyPercentiles"][key]
            .as_f64()
            .map(|s| s * 1000.0)
            .ok_or_else(|| anyhow::anyhow!("oha's JSON has no latencyPercentiles.{key}"))
    };
    Ok(Percentiles {
        p50: pct("p50")?,
        p99: pct("p99")?,
    })
}
