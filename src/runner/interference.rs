//! What else used the machine while a run was timed: CPU time of every process that is not
//! the worker's tree, the lab's services, the driver or a kernel thread (from /proc/stat and the
//! pids the lab knows; kernel threads, whose network and memory work is largely the lab's own,
//! are counted apart), steal time, the worker's involuntary context switches, and a machine-speed probe
//! around the run (a walk over 4 MiB, timed in the driver, on the driver's CPU). A run over the limits is contaminated: kept, repeated, left out of the
//! numbers.
//!
//! /proc/stat counts in clock ticks (10 ms), per-process times too, so a run's foreign CPU is
//! only called interference above [`FOREIGN_FLOOR_S`] whatever its share of the run. sysinfo
//! reports the same counters as percentages since its last refresh, without steal or
//! per-process involuntary switches, so /proc is read directly (through `crate::procfs`).

use std::time::Instant;

use super::sampler;
use crate::procfs;
use crate::results::Interference;

/// Foreign CPU below this many seconds never makes a run contaminated: twice the most a run
/// showed on a quiet machine, and far below the CPU second a busy loop beside a one-second run
/// shows (docs/defaults.md has the runs).
pub const FOREIGN_FLOOR_S: f64 = 0.15;
/// Default for `Limits::max_foreign_cores`: see docs/method.md, "Interference", for the
/// measurements it was chosen from.
pub const DEFAULT_MAX_FOREIGN_CORES: f64 = 0.10;
/// How many times a contaminated run is repeated in its round by default.
pub const DEFAULT_REPEATS: usize = 3;
/// Entries of the probe's random cycle: 4 MiB of `u32`, beyond a core's own caches, so that
/// the walk depends on the caches and memory a neighbour on the host shares with this VM.
const PROBE_CYCLE_LEN: usize = 1 << 20;
/// Steps of the probe's walk: a few milliseconds per walk (docs/defaults.md has its timings).
const PROBE_STEPS: usize = 40_000;
/// What the probe times, as `results.json` records it (`method.interference.probe`).
pub const PROBE_WORK: &str =
    "a dependent walk of 40000 steps over a 4 MiB random cycle, fastest of 3";

/// When a run counts as contaminated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Most foreign work allowed, in cores' worth over the run (`foreign_cores`); the same
    /// bound applies to steal time.
    pub max_foreign_cores: f64,
}

/// One reading of the machine-wide counters, in clock ticks.
#[derive(Debug, Clone, Copy, Default)]
struct SystemTicks {
    /// user + nice + system over every CPU: the processes' own time (interrupt time is left
    /// out: much of it is the worker's own network traffic).
    busy: u64,
    /// Time the hypervisor ran something else while a CPU wanted to run (steal).
    steal: u64,
}

fn system_ticks() -> SystemTicks {
    let t = procfs::CpuTicks::read().unwrap_or_default();
    SystemTicks {
        busy: t.user + t.nice + t.system,
        steal: t.steal,
    }
}

/// Involuntary context switches of every thread of every process of the tree.
fn involuntary_switches(root: i32) -> u64 {
    procfs::tree(root)
        .into_iter()
        .flat_map(|pid| procfs::tasks(pid).into_iter().map(move |tid| (pid, tid)))
        .filter_map(|(pid, tid)| procfs::task_status(pid, tid, "nonvoluntary_ctxt_switches"))
        .sum()
}

/// One random cycle through every index (Sattolo's shuffle), built once per process.
fn probe_cycle() -> &'static [u32] {
    static CYCLE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    CYCLE.get_or_init(|| {
        let mut next: Vec<u32> = (0..PROBE_CYCLE_LEN as u32).collect();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in (1..PROBE_CYCLE_LEN).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            next.swap(i, (x % i as u64) as usize);
        }
        next
    })
}

/// The fixed reference work, timed: the fastest of three, in ms.
///
/// A walk over a random cycle, each step a load whose address is the one before's value, so
/// it slows with the caches and memory a neighbour shares, as Python work does: a probe in
/// registers only (the earlier 3,000,000 xorshift steps) tracked pure-Python jobs on the same
/// CPU worse (docs/defaults.md has the measurements).
pub fn probe_ms() -> f64 {
    let next = probe_cycle();
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        let mut i = 0u32;
        for _ in 0..PROBE_STEPS {
            i = next[i as usize];
        }
        std::hint::black_box(i);
        best = best.min(start.elapsed().as_secs_f64() * 1000.0);
    }
    best
}

/// What the machine did over an idle window of the driver's (`doctor`).
#[derive(Debug, Clone, PartialEq)]
pub struct IdleWindow {
    /// Cores' worth of CPU other programs used.
    pub foreign_cores: f64,
    /// Cores' worth of steal.
    pub steal_cores: f64,
    /// The machine-speed probe, ms, timed [`IDLE_PROBES`] times across the window.
    pub probes_ms: Vec<f64>,
}

/// How many probes an idle window times, evenly spaced: enough for the spread of the machine's
/// speed, few enough to leave the window idle (about a third of a 1 s window on one CPU).
pub const IDLE_PROBES: usize = 10;

/// Watches the machine for `window` while the lab does nothing; the CPU of the driver and of the
/// `services` trees is the lab's, not foreign.
pub fn idle_window(window: std::time::Duration, services: &[i32]) -> IdleWindow {
    let before = (system_ticks(), lab_cpu_s(services));
    let start = Instant::now();
    // The driver's own CPU (the probes) is the lab's, not foreign.
    let mut probes_ms = Vec::with_capacity(IDLE_PROBES);
    for i in 1..=IDLE_PROBES {
        probes_ms.push(probe_ms());
        let next = window.mul_f64(i as f64 / IDLE_PROBES as f64);
        std::thread::sleep(next.saturating_sub(start.elapsed()));
    }
    let after = (system_ticks(), lab_cpu_s(services));
    let wall = start.elapsed().as_secs_f64().max(1e-9);
    let tick = procfs::clk_tck();
    let busy = after.0.busy.saturating_sub(before.0.busy) as f64 / tick;
    let steal = after.0.steal.saturating_sub(before.0.steal) as f64 / tick;
    IdleWindow {
        foreign_cores: (busy - (after.1 - before.1)).max(0.0) / wall,
        steal_cores: steal / wall,
        probes_ms,
    }
}

/// CPU seconds of the kernel's own threads (the children of kthreadd, pid 2), or 0 where
/// kthreadd is not visible (a pid namespace).
fn kernel_threads_cpu_s() -> f64 {
    if procfs::comm(2).as_deref() != Some("kthreadd") {
        return 0.0;
    }
    // Short slices, like PostgreSQL's backends: the scheduler's runtime, not utime + stime.
    sampler::tree_runtime_s(2)
}

/// CPU seconds of the lab's own processes: the driver (its services run as its threads) and
/// the trees of the services that run as processes.
fn lab_cpu_s(services: &[i32]) -> f64 {
    let driver = sampler::process_cpu_s(std::process::id() as i32);
    driver
        + services
            .iter()
            .map(|p| sampler::tree_runtime_s(*p))
            .sum::<f64>()
}

/// The counters at `go`, to be compared with those at `done`.
#[derive(Debug, Clone)]
pub struct Window {
    system: SystemTicks,
    worker_cpu_s: f64,
    lab_cpu_s: f64,
    kernel_cpu_s: f64,
    switches: u64,
    probe_before_ms: f64,
}

impl Window {
    /// Runs the probe, then reads the counters; call right before `go`.
    pub fn open(worker: i32, services: &[i32]) -> Window {
        let probe_before_ms = probe_ms();
        let switches = involuntary_switches(worker);
        // The machine's, the worker's and the lab's CPU read together, so that every CPU
        // second of the window is in exactly one of them or foreign.
        Window {
            system: system_ticks(),
            worker_cpu_s: sampler::tree_cpu_s(worker),
            lab_cpu_s: lab_cpu_s(services),
            kernel_cpu_s: kernel_threads_cpu_s(),
            switches,
            probe_before_ms,
        }
    }

    /// Reads the counters; call right after `done` with the wall time between `go` and `done`.
    /// The probe after the run comes later ([`Closed::probe_after`]), once the worker is gone.
    pub fn close(self, worker: i32, services: &[i32], wall_s: f64, limits: Limits) -> Closed {
        let system = system_ticks();
        let worker_cpu_s = sampler::tree_cpu_s(worker) - self.worker_cpu_s;
        let lab = lab_cpu_s(services) - self.lab_cpu_s;
        let kernel_cpu_s = (kernel_threads_cpu_s() - self.kernel_cpu_s).max(0.0);
        let switches = involuntary_switches(worker).saturating_sub(self.switches);
        let tick = procfs::clk_tck();
        let busy_s = system.busy.saturating_sub(self.system.busy) as f64 / tick;
        let steal_s = system.steal.saturating_sub(self.system.steal) as f64 / tick;
        let foreign_cpu_s = (busy_s - worker_cpu_s - lab - kernel_cpu_s).max(0.0);
        let wall = wall_s.max(1e-9);
        let foreign_cores = foreign_cpu_s / wall;
        let reason = if foreign_cpu_s > FOREIGN_FLOOR_S && foreign_cores > limits.max_foreign_cores
        {
            Some(format!(
                "other programs used {foreign_cpu_s:.2} CPU s ({foreign_cores:.2} cores) during the run, over the limit of {} cores",
                limits.max_foreign_cores
            ))
        } else if steal_s > FOREIGN_FLOOR_S && steal_s / wall > limits.max_foreign_cores {
            Some(format!(
                "the hypervisor took {steal_s:.2} s of CPU (steal) during the run, over the limit of {} cores",
                limits.max_foreign_cores
            ))
        } else {
            None
        };
        Closed(Interference {
            foreign_cpu_s,
            foreign_cores,
            steal_s,
            kernel_cpu_s,
            involuntary_switches: switches,
            probe_before_ms: self.probe_before_ms,
            probe_after_ms: f64::NAN,
            contaminated: reason.is_some(),
            reason,
        })
    }
}

/// A window's counters at `done`, waiting for the probe after the run.
#[derive(Debug, Clone)]
pub struct Closed(Interference);

impl Closed {
    /// Runs the probe after the run; call once the worker has exited. Timed right at `done`,
    /// the probe shared the CPU with the worker writing its result and exiting, and took about
    /// twice as long as before `go` (15–17 against 7.7–8.4 ms, medians of two event_loops runs
    /// of 70 runs each), which said nothing about the machine.
    pub fn probe_after(self) -> Interference {
        Interference {
            probe_after_ms: probe_ms(),
            ..self.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_loop_beside_the_worker_is_foreign() {
        let me = std::process::id() as i32;
        let limits = Limits {
            max_foreign_cores: 0.1,
        };
        // The "worker" is a sleeping child; a busy child that is neither worker nor service
        // is someone else's load.
        let mut worker = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let w = Window::open(worker.id() as i32, &[]);
        let start = Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(600));
        let i = w
            .close(
                worker.id() as i32,
                &[],
                start.elapsed().as_secs_f64(),
                limits,
            )
            .probe_after();
        busy.kill().unwrap();
        worker.kill().unwrap();
        let _ = (busy.wait(), worker.wait());
        // A busy loop's CPU is counted as foreign. How much it gets depends on what else runs:
        // the unit tests share two cores four threads at a time, and a loop beside them was
        // measured at 0.50 cores; a loop not counted would read about 0.
        assert!(i.foreign_cores > 0.25, "a busy loop is foreign: {i:?}");
        assert!(i.contaminated && i.reason.is_some(), "{i:?}");
        assert!(i.probe_before_ms > 0.0 && i.probe_after_ms > 0.0);
        let _ = me;
    }
}
