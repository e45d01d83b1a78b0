//! The lab's generator and wrk on every HTTP server under test (`self-check --wrk PATH`):
//! closed loop over [`CONNECTIONS`] connections to `GET /plain`, each server pinned to the last
//! allowed CPU and each generator to the first, alternating for [`super::REPEATS`] rounds; the
//! medians of their rounds' throughputs must agree within [`TOLERANCE`]. A generator that costs
//! more per request than wrk would understate a server on the CPU they share with the kernel's
//! loopback work, most of all one that closes every connection (gunicorn's sync worker).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::affinity;
use crate::catalogue::Catalogue;
use crate::services::under_test::{self, Launch, RunningServer};
use crate::stats::percentile::median;

/// How far apart the two throughputs may be, as a fraction of wrk's.
pub const TOLERANCE: f64 = 0.10;
/// Connections both generators hold (Cal Paterson's `ab -c 100`).
const CONNECTIONS: usize = 100;
/// How long each run lasts.
const DURATION: Duration = Duration::from_secs(4);
/// The HTTP servers under test the check drives.
const SERVERS: [&str; 6] = [
    "gunicorn_sync",
    "gunicorn_gthread",
    "uvicorn",
    "aiohttp",
    "granian_wsgi",
    "granian_asgi",
];

/// Runs the check on every server; whether every pair of throughputs agrees. Prints a table.
pub fn check(wrk: &Path, workloads: &Path, python: &Path) -> anyhow::Result<bool> {
    let cat = Catalogue::load(workloads)?;
    let allowed = affinity::allowed_cpus();
    let (server_cpus, own_cpus) = match allowed.split_last() {
        Some((last, rest)) if !rest.is_empty() => (vec![*last], vec![rest[0]]),
        _ => (Vec::new(), allowed.clone()),
    };
    let logs = tempfile::tempdir()?;
    println!(
        "closed loop on every server under test: GET /plain over {CONNECTIONS} connections, the server pinned to CPU {server_cpus:?} ({} core), each generator to {own_cpus:?}, {} s a run, medians of {} alternating rounds",
        server_cpus.len().max(1),
        DURATION.as_secs(),
        super::REPEATS
    );
    println!("| server | workers × threads | asynclab load, answers/s | wrk, answers/s | apart | verdict |");
    println!("|---|---|---|---|---|---|");
    let mut fit = true;
    for name in SERVERS {
        let server = cat.server("self-check", name)?;
        let cores = server_cpus.len().max(1);
        let workers = server.workers.resolve(cores).unwrap_or(1);
        let threads = server.threads.resolve(cores).unwrap_or(1);
        let port = under_test::free_port()?;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let launch = Launch {
            name: server.name.clone(),
            argv: server.argv(
                &std::path::absolute(python)?.display().to_string(),
                "127.0.0.1",
                port,
                workers,
                threads,
                None,
            ),
            dir: std::path::absolute(workloads.join(&server.dir))?,
            env: vec![],
            cpus: server_cpus.clone(),
            log: logs.path().join(format!("{name}.log")),
            owner: under_test::owner_value(std::process::id() as i32),
        };
        let mut running = RunningServer::start(&launch)?;
        running.wait_ready(addr, Duration::from_secs(60))?;
        let url = format!("http://{addr}/plain");
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..super::REPEATS {
            ours.push(lab_rate(&url, &own_cpus)?);
            theirs.push(wrk_rate(wrk, &url, &own_cpus)?);
        }
        drop(running);
        let (a, b) = (median(&ours), median(&theirs));
        let apart = (a - b).abs() / b;
        let ok = apart <= TOLERANCE;
        fit &= ok;
        println!(
            "| {name} | {workers} × {threads} | {a:.0} | {b:.0} | {:.1}% | {} (bound {:.0}%) |",
            apart * 100.0,
            if ok { "fit" } else { "NOT FIT" },
            TOLERANCE * 100.0
        );
    }
    Ok(fit)
}

/// `cmd` pinned to `cpus`, run to its end; its standard output.
fn pinned_output(mut cmd: Command, cpus: &[usize], what: &str) -> anyhow::Result<Vec<u8>> {
    let pin = (!cpus.is_empty()).then(|| affinity::cpu_set(cpus));
    // SAFETY: in_child makes only async-signal-safe calls; the set was built before fork.
    unsafe { cmd.pre_exec(move || affinity::in_child(pin.as_ref())) };
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow::anyhow!("cannot run {what}: {e}"))?;
    if !out.status.success() {
        anyhow::bail!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

/// The lab's generator closed loop: answers per second.
fn lab_rate(url: &str, cpus: &[usize]) -> anyhow::Result<f64> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["load", "--connections", &CONNECTIONS.to_string()])
        .args(["--duration", &DURATION.as_secs_f64().to_string()])
        .arg(url);
    let v: Value = serde_json::from_slice(&pinned_output(cmd, cpus, "asynclab load")?)?;
    let answered = v["answered"].as_f64().unwrap_or(0.0);
    let elapsed = v["elapsed_s"].as_f64().unwrap_or(f64::INFINITY);
    Ok(answered / elapsed)
}

/// wrk closed loop: answers per second (its `Requests/sec`), refused when any failed.
fn wrk_rate(wrk: &Path, url: &str, cpus: &[usize]) -> anyhow::Result<f64> {
    let mut cmd = Command::new(wrk);
    cmd.args(["-t1", "-c", &CONNECTIONS.to_string()])
        .args(["-d", &format!("{}s", DURATION.as_secs())])
        .arg(url);
    let text = String::from_utf8(pinned_output(cmd, cpus, "wrk")?)?;
    if let Some(l) = text.lines().find(|l| l.contains("Non-2xx")) {
        anyhow::bail!("wrk on {url}: {}", l.trim());
    }
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("wrk printed no Requests/sec: {text}"))
}
