//! The lab's one reader of /proc: a process's `stat`, `status`, `smaps_rollup`, threads,
//! children and scheduler runtime, the machine's `/proc/stat`, and the few identity files
//! (boot id, pid namespace, a process's directory). It imports nothing of the lab, so the
//! runner (sampler, interference) and the services (orphan clusters, the self-check) both sit on
//! it. Every reader returns `None` (or nothing) for a process that is gone or a file that
//! cannot be read: processes come and go while the lab looks.

use std::collections::BTreeSet;
use std::path::PathBuf;

/// Clock ticks per second of /proc's CPU counters (`_SC_CLK_TCK`, 100 on Linux).
pub fn clk_tck() -> f64 {
    match rustix::param::clock_ticks_per_second() {
        0 => 100.0,
        t => t as f64,
    }
}

/// The fields of `/proc/PID/stat` the lab reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidStat {
    /// Field 3: `R`, `S`, `Z` (zombie), `X` (dead), ...
    pub state: char,
    /// Fields 14 and 15: user and system CPU of the process's threads, in ticks.
    pub utime: u64,
    /// See `utime`.
    pub stime: u64,
    /// Fields 16 and 17: user and system CPU of the children it reaped, in ticks.
    pub cutime: u64,
    /// See `cutime`.
    pub cstime: u64,
    /// Field 22: when it started, in ticks since boot.
    pub start_time: u64,
}

impl PidStat {
    /// `/proc/PID/stat`, `None` when the process is gone.
    pub fn read(pid: i32) -> Option<PidStat> {
        Self::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// Parses the text of a stat file: `pid (comm) state ...`, where comm may hold spaces and
    /// parentheses, so the fields start after the last ')'.
    pub fn parse(text: &str) -> Option<PidStat> {
        let (_, rest) = text.rsplit_once(')')?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // `fields[0]` is field 3 (1-based, as proc(5) numbers them). The CPU times are signed
        // in the kernel's format; a negative one (never seen) reads as 0.
        let field = |n: usize| fields.get(n - 3).copied();
        let ticks =
            |n: usize| -> Option<u64> { Some(field(n)?.parse::<i64>().ok()?.max(0) as u64) };
        Some(PidStat {
            state: field(3)?.chars().next()?,
            utime: ticks(14)?,
            stime: ticks(15)?,
            cutime: ticks(16)?,
            cstime: ticks(17)?,
            start_time: field(22)?.parse().ok()?,
        })
    }

    /// A zombie (exited, not reaped) or a dying task is not running.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }

    /// utime + stime, plus the reaped children's with `with_reaped`, in seconds.
    pub fn cpu_s(&self, with_reaped: bool) -> f64 {
        let mut ticks = self.utime + self.stime;
        if with_reaped {
            ticks += self.cutime + self.cstime;
        }
        ticks as f64 / clk_tck()
    }
}

/// The first line of `/proc/stat`: time all CPUs spent in each state since boot, in ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// Running processes' user code (guest time included).
    pub user: u64,
    /// User code at a raised nice value.
    pub nice: u64,
    /// Kernel code on behalf of processes.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle with I/O outstanding.
    pub iowait: u64,
    /// Hardware interrupts.
    pub irq: u64,
    /// Soft interrupts.
    pub softirq: u64,
    /// Time the hypervisor ran something else while a CPU wanted to run.
    pub steal: u64,
}

impl CpuTicks {
    /// `/proc/stat`'s totals, `None` where it cannot be read.
    pub fn read() -> Option<CpuTicks> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Parses the `cpu ` line of a `/proc/stat` text; states an older kernel does not count
    /// (steal before 2.6.11) read as 0.
    pub fn parse(text: &str) -> Option<CpuTicks> {
        let line = text.lines().find_map(|l| l.strip_prefix("cpu "))?;
        let f: Vec<u64> = line
            .split_whitespace()
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        let get = |i: usize| f.get(i).copied().unwrap_or(0);
        (f.len() >= 4).then(|| CpuTicks {
            user: get(0),
            nice: get(1),
            system: get(2),
            idle: get(3),
            iowait: get(4),
            irq: get(5),
            softirq: get(6),
            steal: get(7),
        })
    }

    /// Every state counted (guest time is already in user).
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// The number after `name:` in a `Key: value [kB]` file (`status`, `smaps_rollup`).
pub fn field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// A number of `/proc/PID/status` (`VmRSS`, `VmHWM` in KiB).
pub fn status(pid: i32, name: &str) -> Option<u64> {
    field(
        &std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?,
        name,
    )
}

/// A number of one thread's `/proc/PID/task/TID/status` (`nonvoluntary_ctxt_switches`).
pub fn task_status(pid: i32, tid: i32, name: &str) -> Option<u64> {
    let path = format!("/proc/{pid}/task/{tid}/status");
    field(&std::fs::read_to_string(path).ok()?, name)
}

/// Proportional set size of one process (shared pages divided among their sharers), KiB.
pub fn pss_kib(pid: i32) -> Option<u64> {
    field(
        &std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?,
        "Pss",
    )
}

/// Resets a process's peak RSS (VmHWM) to its current RSS (`clear_refs` = 5); a process that
/// is gone is left alone.
pub fn reset_peak_rss(pid: i32) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

/// The thread ids of a process, empty when it is gone.
pub fn tasks(pid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect()
}

/// The children one thread started (`/proc/PID/task/TID/children`).
fn task_children(pid: i32, tid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/children"))
        .map(|text| {
            text.split_whitespace()
                .filter_map(|s| s.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// One thread's time on a CPU as the scheduler counts it (`schedstat`'s first field), ns.
pub fn task_runtime_ns(pid: i32, tid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The pid and all its live descendants, root first, each once.
pub fn tree(root: i32) -> Vec<i32> {
    walk(root, |pid| {
        tasks(pid)
            .into_iter()
            .flat_map(|tid| task_children(pid, tid))
            .collect()
    })
}

/// `root` and everything `children` reaches from it, breadth first, each pid once (a pid the
/// kernel reused while the tree was read can be named twice).
fn walk(root: i32, children: impl Fn(i32) -> Vec<i32>) -> Vec<i32> {
    let mut out = vec![root];
    let mut seen = BTreeSet::from([root]);
    let mut i = 0;
    while i < out.len() {
        for child in children(out[i]) {
            if seen.insert(child) {
                out.push(child);
            }
        }
        i += 1;
    }
    out
}

/// A process's command name (`/proc/PID/comm`).
pub fn comm(pid: i32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(text.trim_end_matches('\n').to_string())
}

/// The folder a process runs in (`/proc/PID/cwd`).
pub fn cwd(pid: i32) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd"))
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`), empty where unreadable.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This process's pid namespace (`pid:[4026531836]`), empty where unreadable.
pub fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_parsing_survives_odd_command_names() {
        let me = PidStat::read(std::process::id() as i32).unwrap();
        assert!(!me.is_dead());
        assert!(PidStat::read(i32::MAX).is_none());
        // A command name may hold ") " and digits: only the last ')' ends it.
        let line = "4242 (evil) 1 2 3) Z 1 4242 4242 0 -1 4194560 100 0 0 0 7 5 3 2 20 0 1 0 \
                    987654 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n";
        let stat = PidStat::parse(line).unwrap();
        assert_eq!((stat.state, stat.start_time), ('Z', 987654));
        assert_eq!(
            (stat.utime, stat.stime, stat.cutime, stat.cstime),
            (7, 5, 3, 2)
        );
        assert!(stat.is_dead());
        assert_eq!(stat.cpu_s(true), 17.0 / clk_tck());
        assert_eq!(PidStat::parse("1 (short) S 1 2"), None);
    }

    #[test]
    fn cpu_ticks_come_from_the_cpu_line() {
        let text = "cpu  10 1 5 100 4 2 3 7 0 0\ncpu0 5 0 2 50 2 1 1 3 0 0\nintr 1\n";
        let t = CpuTicks::parse(text).unwrap();
        assert_eq!((t.user, t.idle, t.steal), (10, 100, 7));
        assert_eq!(t.total(), 132);
        assert_eq!(CpuTicks::parse("cpu  1 2 3\n"), None);
        assert!(CpuTicks::read().unwrap().total() > 0);
    }

    #[test]
    fn fields_of_status_files_by_name() {
        let text =
            "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nnonvoluntary_ctxt_switches:\t9\n";
        assert_eq!(field(text, "VmRSS"), Some(1024));
        assert_eq!(field(text, "VmHWM"), Some(2048));
        assert_eq!(field(text, "nonvoluntary_ctxt_switches"), Some(9));
        assert_eq!(field(text, "Vm"), None);
        assert_eq!(field(text, "Name"), None);
    }

    #[test]
    fn a_tree_lists_each_pid_once_root_first() {
        // 3 is named by 1 and again by 2, after 4: not next to its first mention.
        let graph = |pid: i32| match pid {
            1 => vec![2, 3, 4],
            2 => vec![3, 1],
            4 => vec![5],
            _ => vec![],
        };
        assert_eq!(walk(1, graph), [1, 2, 3, 4, 5]);

        let mut kid = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        let t = tree(me);
        kid.kill().unwrap();
        kid.wait().unwrap();
        assert_eq!(t[0], me);
        assert!(t.contains(&(kid.id() as i32)), "{t:?}");
        let unique: BTreeSet<i32> = t.iter().copied().collect();
        assert_eq!(unique.len(), t.len(), "{t:?}");
    }

    #[test]
    fn a_thread_of_this_process_reports_its_runtime_and_switches() {
        let me = std::process::id() as i32;
        let tids = tasks(me);
        assert!(tids.contains(&me), "{tids:?}");
        assert!(tids
            .iter()
            .any(|&t| task_status(me, t, "voluntary_ctxt_switches").is_some()));
        assert!(status(me, "VmRSS").unwrap() > 0);
        assert!(pss_kib(me).unwrap() > 0);
        assert_eq!(comm(i32::MAX), None);
        assert!(cwd(me).is_ok());
        assert!(!boot_id().is_empty());
    }
}
