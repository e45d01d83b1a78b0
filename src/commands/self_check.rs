//! `asynclab self-check` (`make bench`): the mock server's delay accuracy and throughput, its
//! timer at a thousand requests in flight, the delay line's overshoot, and the load
//! generator's schedule at rates far above a Python service's, on this machine.
//!
//! The timer checks run [`REPEATS`] times and are judged on the median of their p99s, as the
//! lab judges a cell on the median of its rounds: on a VM, one stall of the whole guest
//! (1–15 ms, seen a few times an hour on the 2-core VM) lands in a single repeat's p99, and
//! every repeat is printed.

mod generators;
mod oha;
mod servers;

use std::path::PathBuf;

use clap::Args;

use crate::loadgen::selfcheck as generator;
use crate::services::wake_hold::WakeHold;
use crate::services::{delay_check, selfcheck};
use crate::stats::percentile::median;

/// Repeats of each timer check.
pub const REPEATS: usize = 3;

/// `asynclab self-check`.
#[derive(Debug, Args, Clone)]
pub struct SelfCheckArgs {
    /// Measure without the 0 µs CPU wake-up latency request runs hold while the lab's timers
    /// are in use (to see what it buys on this machine).
    #[arg(long)]
    pub no_wake_hold: bool,
    /// Also cross-check the load generator against oha at this path (`make bench` installs
    /// it): both drive uvicorn open loop at half its capacity; p50 and p99 must agree.
    #[arg(long, value_name = "PATH", requires = "python")]
    pub oha: Option<PathBuf>,
    /// Also run the lab's generator beside wrk at this path, closed loop: in the side-by-side
    /// table of what each generator costs per request, and on every HTTP server under test,
    /// whose throughputs must agree (`make bench` installs Debian's wrk).
    #[arg(long, value_name = "PATH", requires = "oha")]
    pub wrk: Option<PathBuf>,
    /// A results document (results.json) with `--rates auto` service sweeps: the generator is
    /// checked at ten times the fastest knee in it instead of at fixed rates.
    #[arg(long, value_name = "RESULTS")]
    pub knee_from: Option<PathBuf>,
    /// The environment's Python the cross-check runs uvicorn with.
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Only the load generator's checks: its schedule at the check's rates and, with --oha,
    /// the cross-check and the side-by-side table (what docs/findings/generator.txt holds).
    #[arg(long)]
    pub only_generator: bool,
    /// Folder with catalogue.toml and the services' apps.
    #[arg(long, default_value = "workloads")]
    pub workloads: PathBuf,
}

/// Measures and prints each report; 1 when any is not fit for measuring.
pub fn execute(args: &SelfCheckArgs) -> anyhow::Result<i32> {
    let hold = if args.no_wake_hold {
        WakeHold::none("--no-wake-hold")
    } else {
        WakeHold::acquire()
    };
    let load = crate::envinfo::load_avg();
    println!(
        "asynclab self-check at commit {}, {}: {} × {}, load average {:.2} {:.2} {:.2}",
        crate::envinfo::git_commit(),
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ"),
        crate::envinfo::cores(),
        crate::envinfo::cpu_model(),
        load[0],
        load[1],
        load[2]
    );
    println!("CPU wake-up latency: {}", hold.detail);
    let mut fit = true;
    if !args.only_generator {
        fit &= timers()?;
    }
    let rates = generator_rates(args.knee_from.as_deref())?;
    for &rate in &rates {
        let mut p99s = Vec::new();
        for repeat in 1..=REPEATS {
            let check = generator::check(rate)?;
            println!("repeat {repeat} of {REPEATS}: {check}");
            fit &= check.lost == 0;
            p99s.push(check.overshoot_p99_ms);
        }
        fit &= judged(
            &format!("load generator at {rate:.0}/s: corrected p99 above the server's delay"),
            &p99s,
            generator::MAX_OVERSHOOT_P99_MS,
        );
    }
    if let (Some(path), Some(python)) = (&args.oha, &args.python) {
        fit &= oha::check(path, &args.workloads, python)?;
        fit &= generators::compare(path, args.wrk.as_deref(), &rates)?;
        if let Some(wrk) = &args.wrk {
            fit &= servers::check(wrk, &args.workloads, python)?;
        }
    }
    drop(hold);
    Ok(if fit { 0 } else { 1 })
}

/// The mock server's and the delay line's timer checks, printed; whether all are fit.
fn timers() -> anyhow::Result<bool> {
    let mut fit = true;
    let report = selfcheck::run(selfcheck::SelfCheckOpts::default())?;
    println!("{report}");
    fit &= report.is_fit();

    let many = selfcheck::SelfCheckOpts {
        requests: 5 * selfcheck::MANY_CONCURRENT,
        concurrency: selfcheck::MANY_CONCURRENT,
        ..selfcheck::SelfCheckOpts::default()
    };
    let mut late_p99s = Vec::new();
    for repeat in 1..=REPEATS {
        let report = selfcheck::run(many.clone())?;
        println!("repeat {repeat} of {REPEATS}: {report}");
        fit &= report.is_fit();
        late_p99s.push(report.timer_late_p99_ms);
    }
    fit &= judged(
        &format!(
            "mock server timer at {} in flight: late p99",
            selfcheck::MANY_CONCURRENT
        ),
        &late_p99s,
        selfcheck::MAX_TIMER_LATE_P99_MS,
    );

    let repeats = (0..REPEATS)
        .map(|_| delay_check::run())
        .collect::<anyhow::Result<Vec<_>>>()?;
    for (i, &rtt_ms) in delay_check::RTTS_MS.iter().enumerate() {
        let checks: Vec<_> = repeats.iter().map(|r| &r[i]).collect();
        for (repeat, check) in checks.iter().enumerate() {
            println!("repeat {} of {REPEATS}: {check}", repeat + 1);
            fit &= check.early_min_ms >= 0.0;
        }
        let p99s: Vec<f64> = checks.iter().map(|c| c.overshoot_p99_ms).collect();
        fit &= judged(
            &format!("delay line at {rtt_ms} ms: overshoot p99"),
            &p99s,
            delay_check::bound_ms(rtt_ms),
        );
    }
    Ok(fit)
}

/// The rates the generator is checked at: [`generator::HEADROOM`] times the fastest knee in the
/// document at `knee_from` (said on a line of its own), else the fixed ones.
fn generator_rates(knee_from: Option<&std::path::Path>) -> anyhow::Result<Vec<f64>> {
    let Some(path) = knee_from else {
        return Ok(generator::RATES_PER_S.to_vec());
    };
    let results = crate::analysis::summary::load(path)?;
    let Some((knee, sweep)) = crate::analysis::sweep::fastest_knee(&results.sweeps) else {
        anyhow::bail!(
            "{} has no sweep that sustained a rate: give --knee-from a document of a `--rates auto` run",
            path.display()
        );
    };
    let rate = generator::HEADROOM * knee;
    println!(
        "fastest knee in {}: {knee:.0}/s ({} {} on Python {}); the generator is checked at {:.0}× it, {rate:.0}/s",
        path.display(),
        sweep.scenario,
        sweep.variant,
        sweep.python,
        generator::HEADROOM
    );
    Ok(vec![rate])
}

/// Prints the median of the repeats' p99s against `bound`; whether it is within.
fn judged(what: &str, p99s_ms: &[f64], bound: f64) -> bool {
    let m = median(p99s_ms);
    let each: Vec<String> = p99s_ms.iter().map(|v| format!("{v:.3}")).collect();
    let ok = m <= bound;
    println!(
        "{what} median {m:.3} ms over {} repeats ({} ms): {} (bound {bound:.2} ms)",
        p99s_ms.len(),
        each.join(", "),
        if ok { "fit" } else { "NOT FIT" }
    );
    ok
}
