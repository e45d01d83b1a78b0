//! Reads a worker's process tree from /proc (with the trees it started elsewhere, when it names
//! them): RSS, peak RSS and CPU time, summed over the tree.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::procfs;

/// How often the tree's RSS is sampled while a run is timed. Peaks shorter than this can be
/// missed in child processes; the root process's own peak is exact (VmHWM).
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(20);

/// Proportional set size of the tree, KiB: what several forked processes really cost
/// together, without counting the pages they share with their parent once per process.
pub fn tree_pss_kib(root: i32) -> u64 {
    procfs::tree(root)
        .iter()
        .filter_map(|&p| procfs::pss_kib(p))
        .sum()
}

/// Resident set size of the tree, KiB.
pub fn tree_rss_kib(root: i32) -> u64 {
    procfs::tree(root)
        .iter()
        .filter_map(|&p| procfs::status(p, "VmRSS"))
        .sum()
}

/// Peak RSS (VmHWM) of one process since start or the last [`reset_peaks`], KiB.
pub fn hwm_kib(pid: i32) -> Option<u64> {
    procfs::status(pid, "VmHWM")
}

/// Resets the peak RSS of every process of the tree to its current RSS.
pub fn reset_peaks(root: i32) {
    for pid in procfs::tree(root) {
        procfs::reset_peak_rss(pid);
    }
}

/// utime + stime (+ reaped children's) of one process, in seconds; 0 when it is gone.
fn cpu_s(pid: i32, with_reaped: bool) -> f64 {
    procfs::PidStat::read(pid).map_or(0.0, |s| s.cpu_s(with_reaped))
}

/// utime + stime of one process (all its threads), without reaped children, in seconds.
pub fn process_cpu_s(pid: i32) -> f64 {
    cpu_s(pid, false)
}

/// CPU seconds of a tree of many short-sliced processes (PostgreSQL's backends), from the
/// scheduler's own runtime counter of every live thread (`/proc/PID/task/TID/schedstat`, in ns)
/// plus the reaped children's utime + stime.
///
/// utime + stime are sampled in whole ticks at the timer interrupt, so a process that runs many
/// slices shorter than a tick can be charged none of them; schedstat adds up every slice's
/// nanoseconds (docs/defaults.md, "Foreign-CPU floor", has what the tick count missed). Falls back to utime + stime where schedstat is missing (kernels without CONFIG_SCHED_INFO).
pub fn tree_runtime_s(root: i32) -> f64 {
    procfs::tree(root).iter().map(|&p| runtime_s(p)).sum()
}

/// One process's scheduler runtime over its live threads (its utime + stime when ended threads
/// make that larger) plus its reaped children's CPU.
fn runtime_s(pid: i32) -> f64 {
    let Some(stat) = procfs::PidStat::read(pid) else {
        return 0.0;
    };
    let runtimes: Vec<u64> = procfs::tasks(pid)
        .into_iter()
        .filter_map(|tid| procfs::task_runtime_ns(pid, tid))
        .collect();
    if runtimes.is_empty() {
        return stat.cpu_s(true);
    }
    // The live threads' runtimes leave out the threads that have ended (a server's pool at its
    // shutdown), which the whole process's utime + stime keep: whichever is larger, so that a
    // thread ending between two readings does not take its CPU seconds out of the difference.
    let live = runtimes.iter().sum::<u64>() as f64 / 1e9;
    live.max(stat.cpu_s(false)) + (stat.cpu_s(true) - stat.cpu_s(false))
}

/// CPU seconds used by the tree: live processes plus children they already reaped.
pub fn tree_cpu_s(root: i32) -> f64 {
    procfs::tree(root).iter().map(|&p| cpu_s(p, true)).sum()
}

/// The processes of every tree of `roots`.
pub fn forest(roots: &[i32]) -> Vec<i32> {
    roots.iter().flat_map(|&r| procfs::tree(r)).collect()
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
    /// Starts sampling the trees of `roots` (summed) every [`SAMPLE_INTERVAL`].
    pub fn start(roots: Vec<i32>) -> PeakSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut peak = TreePeak::default();
            loop {
                let pids = forest(&roots);
                peak.max_processes = peak.max_processes.max(pids.len());
                peak.pss_kib = peak
                    .pss_kib
                    .max(pids.iter().filter_map(|&p| procfs::pss_kib(p)).sum());
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

    #[test]
    fn a_thread_that_ended_keeps_its_cpu_in_the_runtime() {
        // A child whose one extra thread works about 0.3 s of CPU and ends, while the process
        // lives on: its runtime must still hold that thread's CPU.
        let code = "import threading,time,sys\n\
            def burn():\n    t=time.thread_time()\n    while time.thread_time()-t<0.3: pass\n    \
            sys.stdout.write(f'{time.thread_time()}\\n'); sys.stdout.flush()\n\
            th=threading.Thread(target=burn); th.start(); th.join(); time.sleep(60)";
        let mut child = std::process::Command::new("python3")
            .args(["-c", code])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let thread_s: f64 = line.trim().parse().unwrap();
        // The thread has printed; wait until it is gone from the process.
        let start = std::time::Instant::now();
        while procfs::tasks(pid).len() > 1 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let rt = tree_runtime_s(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        // utime + stime count in 10 ms ticks, truncated.
        assert!(
            rt >= thread_s - 0.02,
            "the process's runtime {rt:.3} s lost its ended thread's {thread_s:.3} s"
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
        let status = std::fs::read_to_string(format!("/proc/{me}/status")).unwrap();
        let field = |name: &str| procfs::field(&status, name).unwrap();
        assert!(field("VmHWM") >= field("VmRSS"), "{status}");
        assert!(hwm_kib(me).unwrap() > 0);
    }
}
