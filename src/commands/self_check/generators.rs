//! The lab's load generator beside outside ones (`self-check --oha PATH --wrk PATH`): what each
//! costs per request against the same mock server, measured from outside the same way.
//!
//! The mock server (`/delay/1`) runs in a process of its own on the last allowed CPU; each
//! generator runs as a child process pinned to the first: the lab's (`asynclab load`) and oha
//! (`-q RATE --latency-correction`) open loop at each rate, then the lab's and wrk (Debian's;
//! wrk2 is in neither Debian nor crates.io) closed loop. They alternate for
//! [`super::REPEATS`] rounds and each figure is the median of its rounds. A generator's CPU and
//! context switches are its rusage as `wait4` returns it (utime + stime, voluntary and
//! involuntary switches); the server's CPU is read from /proc around each run. The lab's CPU
//! per request must be at most [`MAX_COST_RATIO`] times the cheapest outside generator's at
//! every rate.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::affinity;
use crate::loadgen::selfcheck::{ServerProcess, CONNECTIONS, DELAY_MS};
use crate::stats::percentile::median;

/// How far above the cheapest outside generator's CPU per request the lab's may be.
pub const MAX_COST_RATIO: f64 = 1.5;
/// How long each run lasts.
const DURATION: Duration = Duration::from_secs(4);
/// The open-loop rates besides the check's own (ten times the fastest knee).
const RATES_PER_S: [f64; 3] = [5_000.0, 10_000.0, 20_000.0];

/// One run of one generator, from outside.
#[derive(Debug, Clone, Copy)]
struct Run {
    /// Requests answered.
    answered: f64,
    /// The generator's utime + stime, s.
    cpu_s: f64,
    /// Its voluntary and involuntary context switches.
    switches: f64,
    /// The server's CPU over the run, s.
    server_cpu_s: f64,
    /// Latency p50 and p99 as the generator reports them, ms.
    p50_ms: f64,
    p99_ms: f64,
}

impl Run {
    fn cpu_per_100k_s(&self) -> f64 {
        self.cpu_s / self.answered.max(1.0) * 1e5
    }
    fn switches_per_request(&self) -> f64 {
        self.switches / self.answered.max(1.0)
    }
    fn server_us_per_request(&self) -> f64 {
        self.server_cpu_s / self.answered.max(1.0) * 1e6
    }
}

/// What a generator printed: requests answered, latency p50 and p99 (ms).
type Printed = (f64, f64, f64);
/// The command line of a generator for a rate (0: closed loop) and a URL.
type CommandFor<'a> = Box<dyn Fn(f64, &str) -> Command + 'a>;

/// A generator: its name, its command and how its output is read.
struct Generator<'a> {
    name: &'static str,
    command: CommandFor<'a>,
    parse: fn(&[u8]) -> anyhow::Result<Printed>,
}

/// Runs the comparison at the check's `rates` plus the fixed ones and prints its table;
/// whether the lab's generator cost at most [`MAX_COST_RATIO`] times the cheapest.
pub fn compare(oha: &Path, wrk: Option<&Path>, check_rates: &[f64]) -> anyhow::Result<bool> {
    let allowed = affinity::allowed_cpus();
    let (server_cpus, own_cpus) = match allowed.split_last() {
        Some((last, rest)) if !rest.is_empty() => (vec![*last], vec![rest[0]]),
        _ => (Vec::new(), allowed.clone()),
    };
    let server = ServerProcess::start(&server_cpus)?;
    let url = format!("http://{}/delay/{DELAY_MS}", server.addr());
    let me = std::env::current_exe()?;
    let secs = DURATION.as_secs_f64();
    let lab = Generator {
        name: "asynclab load",
        command: Box::new(|rate, url| {
            let mut c = Command::new(&me);
            c.args(["load", "--connections", &CONNECTIONS.to_string()])
                .args(["--rate", &rate.to_string(), "--duration", &secs.to_string()])
                .arg(url);
            c
        }),
        parse: parse_lab,
    };
    let oha_gen = Generator {
        name: "oha",
        command: Box::new(|rate, url| {
            let mut c = Command::new(oha);
            c.args(["-z", &format!("{secs}s"), "-c", &CONNECTIONS.to_string()]);
            if rate > 0.0 {
                c.args(["-q", &rate.to_string(), "--latency-correction"]);
            }
            c.args(["--no-tui", "--output-format", "json"]).arg(url);
            c
        }),
        parse: parse_oha,
    };
    let wrk_gen = wrk.map(|wrk| Generator {
        name: "wrk",
        command: Box::new(move |_, url| {
            let mut c = Command::new(wrk);
            c.args(["-t1", "-c", &CONNECTIONS.to_string()])
                .args(["-d", &format!("{secs}s"), "--latency"])
                .arg(url);
            c
        }),
        parse: parse_wrk,
    });
    let mut rates: Vec<f64> = RATES_PER_S.to_vec();
    rates.extend(check_rates.iter().filter(|r| !RATES_PER_S.contains(r)));
    let mut settings: Vec<(f64, Vec<&Generator>)> =
        rates.iter().map(|&r| (r, vec![&lab, &oha_gen])).collect();
    let mut closed = vec![&lab];
    closed.extend(wrk_gen.as_ref());
    closed.push(&oha_gen);
    settings.push((0.0, closed));

    println!(
        "generators side by side: each pinned to CPU {:?}, the mock server (/delay/{DELAY_MS}) to {:?}, {CONNECTIONS} connections, {secs} s a run, medians of {} alternating rounds",
        own_cpus,
        server_cpus,
        super::REPEATS
    );
    println!("| rate | generator | CPU-s per 100k requests | context switches per request | server CPU per request | p50 | p99 | CPU against the cheapest outside |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut fit = true;
    for (rate, gens) in &settings {
        let mut runs: Vec<Vec<Run>> = gens.iter().map(|_| Vec::new()).collect();
        for _ in 0..super::REPEATS {
            for (g, into) in gens.iter().zip(runs.iter_mut()) {
                into.push(measure(g, *rate, &url, &own_cpus, server.pid())?);
            }
        }
        let med = |v: &[Run], f: fn(&Run) -> f64| median(&v.iter().map(f).collect::<Vec<_>>());
        let cost: Vec<f64> = runs.iter().map(|r| med(r, Run::cpu_per_100k_s)).collect();
        let cheapest_outside = cost[1..].iter().copied().fold(f64::INFINITY, f64::min);
        let ratio = cost[0] / cheapest_outside;
        let ok = ratio <= MAX_COST_RATIO;
        fit &= ok;
        for (i, (g, r)) in gens.iter().zip(&runs).enumerate() {
            println!(
                "| {} | {} | {:.2} | {:.2} | {:.1} µs | {:.2} ms | {:.2} ms | {} |",
                if *rate > 0.0 {
                    format!("{rate:.0}/s")
                } else {
                    "closed loop".into()
                },
                g.name,
                cost[i],
                med(r, Run::switches_per_request),
                med(r, Run::server_us_per_request),
                med(r, |r| r.p50_ms),
                med(r, |r| r.p99_ms),
                if i == 0 {
                    format!(
                        "{ratio:.2}× ({}, bound {MAX_COST_RATIO}×)",
                        if ok { "fit" } else { "NOT FIT" }
                    )
                } else {
                    format!("{:.2}×", cost[i] / cheapest_outside)
                }
            );
        }
    }
    println!("(latencies: open loop from each request's intended start, as each generator corrects them; closed loop from the send)");
    Ok(fit)
}

/// One run of `g` at `rate`, pinned to `cpus`, with the server's CPU read around it.
fn measure(
    g: &Generator,
    rate: f64,
    url: &str,
    cpus: &[usize],
    server: i32,
) -> anyhow::Result<Run> {
    let mut cmd = (g.command)(rate, url);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let pin = (!cpus.is_empty()).then(|| affinity::cpu_set(cpus));
    // SAFETY: in_child makes only async-signal-safe calls; the set was built before fork.
    unsafe { cmd.pre_exec(move || affinity::in_child(pin.as_ref())) };
    let server_cpu = || crate::procfs::PidStat::read(server).map_or(0.0, |s| s.cpu_s(false));
    let before = server_cpu();
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", g.name))?;
    crate::interrupt::register(child.id() as i32);
    let mut out = Vec::new();
    let mut err = Vec::new();
    child.stdout.take().expect("piped").read_to_end(&mut out)?;
    child.stderr.take().expect("piped").read_to_end(&mut err)?;
    let (status, usage) = wait4(child.id() as i32)?;
    crate::interrupt::unregister(child.id() as i32);
    let server_cpu_s = server_cpu() - before;
    if status != 0 && g.name != "asynclab load" {
        anyhow::bail!(
            "{} failed (wait status {status}): {}",
            g.name,
            String::from_utf8_lossy(&err).trim()
        );
    }
    let (answered, p50_ms, p99_ms) = (g.parse)(&out).map_err(|e| {
        anyhow::anyhow!(
            "{}: {e}; it printed: {}",
            g.name,
            String::from_utf8_lossy(&err).trim()
        )
    })?;
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Run {
        answered,
        cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
        switches: (usage.ru_nvcsw + usage.ru_nivcsw) as f64,
        server_cpu_s,
        p50_ms,
        p99_ms,
    })
}

/// Waits for child `pid`; its wait status and resource usage.
fn wait4(pid: i32) -> anyhow::Result<(i32, libc::rusage)> {
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in; zeroed is a valid value of it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 writes only the two out-parameters passed; pid is our unreaped child.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if r != pid {
        anyhow::bail!("wait4({pid}): {}", std::io::Error::last_os_error());
    }
    Ok((status, usage))
}

/// `asynclab load`'s JSON line: answered, p50, p99.
fn parse_lab(out: &[u8]) -> anyhow::Result<Printed> {
    let v: Value = serde_json::from_slice(out)?;
    if v["errors"].as_u64() != Some(0) || v["abandoned"].as_u64() != Some(0) {
        anyhow::bail!("requests failed or were abandoned: {v}");
    }
    let f = |k: &str| {
        v[k].as_f64()
            .ok_or_else(|| anyhow::anyhow!("no {k} in {v}"))
    };
    Ok((f("answered")?, f("p50_ms")?, f("p99_ms")?))
}

/// oha's JSON: answered (its status codes' counts), p50, p99.
fn parse_oha(out: &[u8]) -> anyhow::Result<Printed> {
    let v: Value = serde_json::from_slice(out)?;
    let answered: f64 = v["statusCodeDistribution"]
        .as_object()
        .map(|m| m.values().filter_map(Value::as_f64).sum())
        .unwrap_or(0.0);
    let pct = |k: &str| {
        v["latencyPercentiles"][k]
            .as_f64()
            .map(|s| s * 1000.0)
            .ok_or_else(|| anyhow::anyhow!("no latencyPercentiles.{k}"))
    };
    Ok((answered, pct("p50")?, pct("p99")?))
}

/// wrk's text: `N requests in`, and the latency distribution's 50% and 99% lines.
fn parse_wrk(out: &[u8]) -> anyhow::Result<Printed> {
    let text = String::from_utf8_lossy(out);
    let answered = text
        .lines()
        .find_map(|l| {
            l.trim()
                .split_once(" requests in")
                .map(|(n, _)| n.trim().parse::<f64>())
        })
        .ok_or_else(|| anyhow::anyhow!("no `requests in` line"))??;
    let pct = |p: &str| -> anyhow::Result<f64> {
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(p))
            .ok_or_else(|| anyhow::anyhow!("no {p} line"))?;
        let v = line[p.len()..].trim();
        let (num, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len()));
        let x: f64 = num.parse()?;
        Ok(match unit {
            "us" => x / 1000.0,
            "ms" => x,
            "s" => x * 1000.0,
            "m" => x * 60_000.0,
            other => anyhow::bail!("unit {other:?} in {line:?}"),
        })
    };
    Ok((answered, pct("50%")?, pct("99%")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrk_and_oha_outputs_are_read() {
        let wrk = b"Running 4s test @ http://127.0.0.1:1/delay/1\n  1 threads and 100 connections\n  Latency Distribution\n     50%    1.13ms\n     75%    1.20ms\n     90%  850.00us\n     99%    2.51ms\n  150000 requests in 4.00s, 10.00MB read\nRequests/sec:  37500.00\n";
        assert_eq!(parse_wrk(wrk).unwrap(), (150_000.0, 1.13, 2.51));
        let oha = br#"{"summary":{},"latencyPercentiles":{"p50":0.0011,"p99":0.003},"statusCodeDistribution":{"200":100,"503":2}}"#;
        let (n, p50, p99) = parse_oha(oha).unwrap();
        assert_eq!(n, 102.0);
        assert!((p50 - 1.1).abs() < 1e-9 && (p99 - 3.0).abs() < 1e-9);
    }
}
