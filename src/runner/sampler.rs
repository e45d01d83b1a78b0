//! Reads a worker's process tree from /proc: RSS, peak RSS and CPU time, summed over the tree.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the tree's RSS is sampled while a run is timed. Peaks shorter than this can be
/// missed in child processes; the root process's own peak is exact (VmHWM).
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(20);

/// Clock ticks per second of /proc's counters.
pub fn clk_tck() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The pid and all its live descendants, root first.
pub fn tree(root: i32) -> Vec<i32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let pid = out[i];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                    out.extend(
                        text.split_whitespace()
                            .filter_map(|s| s.parse::<i32>().ok()),
                    );
                }
            }
        }
        i += 1;
    }
    out.dedup();
    out
}

/// A `VmXXX:` field of /proc/PID/status in KiB.
fn status_kib(pid: i32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Proportional set size of one process (shared pages divided among their sharers), KiB.
fn pss_kib(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    text.lines()
        .find(|l| l.starts_with("Pss:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Proportional set size of the tree, KiB: what several forked processes really cost
/// together, without counting the pages they share with their parent once per process.
pub fn tree_pss_kib(root: i32) -> u64 {
    tree(root).iter().filter_map(|p| pss_kib(*p)).sum()
}

/// Resident set size of the tree, KiB.
pub fn tree_rss_kib(root: i32) -> u64 {
    tree(root)
        .iter()
        .filter_map(|p| status_kib(*p, "VmRSS:"))
        .sum()
}

/// Peak RSS (VmHWM) of one process since start or the last [`reset_peaks`], KiB.
pub fn hwm_kib(pid: i32) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// Resets the peak RSS of every process of the tree to its current RSS (clear_refs = 5).
pub fn reset_peaks(root: i32) {
    for pid in tree(root) {
        let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
    }
}

/// utime + stime (+ reaped children's) of one process, in seconds.
fn cpu_s(pid: i32, with_reaped: bool) -> f64 {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let Some(rest) = text.rfind(')').map(|i| &text[i + 2..]) else {
        return 0.0;
    };
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|s| s.parse().unwrap_or(0.0))
        .collect();
    // rest[0] is field 3 (state); utime=14, stime=15, cutime=16, cstime=17 (1-based).
    let get = |n: usize| f.get(n - 3).copied().unwrap_or(0.0);
    let mut ticks = get(14) + get(15);
    if with_reaped {
        ticks += get(16) + get(17);
    }
    ticks / clk_tck()
}

/// utime + stime of one process (all its threads), without reaped children, in seconds.
pub fn process_cpu_s(pid: i32) -> f64 {
    cpu_s(pid, false)
}

/// CPU seconds of a tree of many short-sliced processes (PostgreSQL's backends), from the
/// scheduler's own runtime counter of every live thread (`/proc/PID/task/TID/schedstat`, in ns)
/// plus the reaped children's utime + stime.
///
/// On this VM's kernel `/proc/PID/stat`'s utime + stime stay at 0 ticks for a backend that runs
/// thousands of 50 µs slices a second while schedstat counts 0.2-0.6 s; read that way,
/// PostgreSQL's CPU showed up as 0.3-0.6 s of "foreign" CPU in every db run at concurrency 100.
/// Falls back to utime + stime where schedstat is missing (kernels without CONFIG_SCHED_INFO).
pub fn tree_runtime_s(root: i32) -> f64 {
    tree(root).iter().map(|&p| runtime_s(p)).sum()
}

/// One process's scheduler runtime over its live threads plus its reaped children's CPU.
fn runtime_s(pid: i32) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0.0;
    };
    let mut ns = 0u64;
    let mut read_any = false;
    for t in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(t.path().join("schedstat")) else {
            continue;
        };
        if let Some(v) = text
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
        {
            ns += v;
            read_any = true;
        }
    }
    if !read_any {
        return cpu_s(pid, true);
    }
    ns as f64 / 1e9 + (cpu_s(pid, true) - cpu_s(pid, false))
}

/// CPU seconds used by the tree: live processes plus children they already reaped.
pub fn tree_cpu_s(root: i32) -> f64 {
    tree(root).iter().map(|p| cpu_s(*p, true)).sum()
}

/// What the sampler saw while a run was timed.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreePeak {
    /// Largest summed PSS of the tree, KiB.
    pub pss_kib: u64,
    /// Most processes seen in the tree at once.
    pub max_processes: usize,
}

/// Samples the tree's PSS in a background thread until stopped.
pub struct PeakSampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<TreePeak>>,
}

impl PeakSampler {
    /// Starts sampling `root`'s tree every [`SAMPLE_INTERVAL`].
    pub fn start(root: i32) -> PeakSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut peak = TreePeak::default();
            loop {
                let pids = tree(root);
                peak.max_processes = peak.max_processes.max(pids.len());
                peak.pss_kib = peak
                    .pss_kib
                    .max(pids.iter().filter_map(|p| pss_kib(*p)).sum());
                if flag.load(Ordering::Relaxed) {
                    return peak;
                }
                std::thread::sleep(SAMPLE_INTERVAL);
            }
        });
        PeakSampler {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops sampling (after one last sample) and returns what was seen.
    pub fn finish(mut self) -> TreePeak {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for PeakSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_scheduler_runtime_counts_what_utime_counts_for_a_busy_process() {
        // A busy child of its own, not this test process: other tests in this binary start
        // and reap children of this process at any time, so this process's tree gains and
        // loses CPU seconds that are not this test's.
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = busy.id() as i32;
        // Busy until utime + stime has reached 0.2 s: on a loaded machine this takes longer in
        // wall time, but the CPU both counters must see is the same.
        let start = std::time::Instant::now();
        while process_cpu_s(pid) < 0.2 && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let (cpu, rt) = (process_cpu_s(pid), tree_runtime_s(pid));
        busy.kill().unwrap();
        busy.wait().unwrap();
        assert!(cpu >= 0.2, "the busy child got {cpu:.3} s of CPU in 60 s");
        assert!(
            rt >= 0.15,
            "schedstat saw {rt:.3} s of {cpu:.3} s of utime + stime"
        );
    }

    use super::*;

    #[test]
    fn own_process_is_measurable() {
        let me = std::process::id() as i32;
        assert!(tree_rss_kib(me) > 0);
        assert!(tree_pss_kib(me) > 0);
        // One read of status: other tests' threads allocate in this process, so RSS read
        // a moment after the peak can be above it.
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let field = |name: &str| -> u64 {
            let line = status.lines().find(|l| l.starts_with(name)).unwrap();
            line.split_whitespace().nth(1).unwrap().parse().unwrap()
        };
        assert!(field("VmHWM:") >= field("VmRSS:"), "{status}");
        assert!(hwm_kib(me).unwrap() > 0);
        assert!(tree(me)[0] == me);
    }

    #[test]
    fn children_are_found_and_summed() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        let t = tree(me);
        assert!(t.contains(&(child.id() as i32)), "{t:?}");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
