//! What machine and software the numbers come from, and whether the machine looks quiet.
//!
//! The machine's facts (CPU model, memory, kernel, load averages) come from sysinfo; the
//! online core count from sysconf, the governor from sysfs (sysinfo has neither as such).

use std::path::Path;
use std::process::Command;

use crate::python::PythonEnv;
use crate::results::{Environment, PythonInfo};

/// 1, 5 and 15 minute load averages (sysinfo).
pub fn load_avg() -> [f64; 3] {
    sysinfo::System::load_average()
        .map(|l| [l.one, l.five, l.fifteen])
        .unwrap_or([0.0; 3])
}

/// CPU model (sysinfo's brand of the first CPU), or "unknown".
pub fn cpu_model() -> String {
    let sys = sysinfo::System::new_with_specifics(
        sysinfo::RefreshKind::nothing().with_cpu(sysinfo::CpuRefreshKind::nothing()),
    );
    sys.ok()
        .and_then(|sys| sys.cpus().first().map(|c| c.brand().to_string()))
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Logical CPUs online in the machine — not the affinity mask of this process, which
/// `taskset` may narrow: the load average it is compared with counts the whole machine.
pub fn cores() -> usize {
    // SAFETY: sysconf only reads a system value.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(online)
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

/// The frequency governor of cpu0, or "unavailable".
pub fn governor() -> String {
    std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unavailable".into())
}

fn kernel() -> String {
    sysinfo::System::kernel_version().unwrap_or_default()
}

fn memory_total_mib() -> u64 {
    let sys = sysinfo::System::new_with_specifics(
        sysinfo::RefreshKind::nothing()
            .with_memory(sysinfo::MemoryRefreshKind::nothing().with_ram()),
    );
    sys.map(|s| s.total_memory() / (1024 * 1024)).unwrap_or(0)
}

/// `git rev-parse HEAD` of the lab (with `-dirty`), or "unknown" outside a checkout.
pub fn git_commit() -> String {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output();
    let Some(out) = out.ok().filter(|o| o.status.success()) else {
        return "unknown".into();
    };
    let mut c = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output();
    if dirty.map(|o| !o.stdout.is_empty()).unwrap_or(false) {
        c.push_str("-dirty");
    }
    c
}

/// Asks an environment's interpreter to describe itself through the harness.
pub fn describe_python(env: &PythonEnv, harness: &Path) -> PythonInfo {
    let mut cmd = Command::new(&env.exe);
    cmd.arg(harness).args(["--describe", "--ctl-fd", "1"]);
    if env.free_threaded() {
        cmd.env("PYTHON_GIL", "0"); // as its workers run
    }
    let out = cmd.output();
    let v: serde_json::Value = out
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .last()
                .and_then(|l| serde_json::from_str(l).ok())
        })
        .unwrap_or(serde_json::Value::Null);
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    PythonInfo {
        version: env.version.clone(),
        implementation: s("implementation"),
        executable: env.exe.display().to_string(),
        compiler: s("compiler"),
        config_args: s("config_args"),
        gil_disabled_build: v.get("gil_disabled").and_then(|x| x.as_bool()),
        gil_enabled: v.get("gil_enabled").and_then(|x| x.as_bool()),
        provenance: s("provenance"),
        packages: v
            .get("packages")
            .and_then(|p| p.as_object())
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The warning for a machine other programs keep busy: their CPU measured just before the run
/// (`foreign_cores`, cores' worth over `window`), against the run's `max_foreign_cores`; not the
/// load average, which still counts a finished run's threads for minutes after.
pub fn busy_warning(
    foreign_cores: f64,
    max_foreign_cores: f64,
    window: std::time::Duration,
) -> Option<String> {
    (foreign_cores > max_foreign_cores).then(|| format!(
        "the machine is busy: other programs used {foreign_cores:.2} cores in the {:.1} s before the run, over the {max_foreign_cores} a run tolerates; runs will be repeated or inconclusive: stop other work and re-run",
        window.as_secs_f64()
    ))
}

/// Warnings about a CPU governor that will make numbers noisy.
pub fn governor_warnings(governor: &str) -> Vec<String> {
    if governor != "performance" && governor != "unavailable" {
        vec![format!(
            "CPU frequency governor is '{governor}', not 'performance': clock changes add noise; `cpupower frequency-set -g performance` fixes it"
        )]
    } else {
        Vec::new()
    }
}

/// The environment block, before the run.
pub fn collect(pythons: &[PythonEnv], harness: &Path) -> Environment {
    let load = load_avg();
    let cores = cores();
    let governor = governor();
    Environment {
        cpu_model: cpu_model(),
        cores,
        warnings: governor_warnings(&governor),
        governor,
        kernel: kernel(),
        memory_total_mib: memory_total_mib(),
        load_avg_before: load,
        load_avg_after: None,
        git_commit: git_commit(),
        pythons: pythons
            .iter()
            .map(|p| describe_python(p, harness))
            .collect(),
        postgres: None,
        mock_http: None,
    }
}
