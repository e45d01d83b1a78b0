//! Shared helpers for the integration tests: the binary, the test workloads and their env.

#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// The crate root (tests run with it as the working directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The machine to one test of `tests/measuring.rs` at a time (its tests take this first).
static MACHINE: Mutex<()> = Mutex::new(());

/// Holds the machine for the test that took it; on drop, writes the test's time straight to
/// stderr, past libtest's capture (which holds only `print!`/`eprint!` output), so a CI log
/// shows where the time of the measuring tests goes (`.ci/run` lists them).
pub struct Alone {
    _machine: MutexGuard<'static, ()>,
    test: String,
    started: Instant,
}

/// Waits until no other measuring test holds the machine and takes it (a test that failed
/// while holding it leaves it free, not poisoned).
pub fn alone() -> Alone {
    let machine = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    Alone {
        _machine: machine,
        test: std::thread::current().name().unwrap_or("?").to_string(),
        started: Instant::now(),
    }
}

impl Drop for Alone {
    fn drop(&mut self) {
        let s = self.started.elapsed().as_secs_f64();
        let _ = writeln!(std::io::stderr(), "timed test: {s:.1} s {}", self.test);
    }
}

/// The name libtest gives test function `name` of the module whose `module_path!()` is
/// `module_path`: the path below the crate, for `--exact` in a child process of this binary.
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_crate, below)) => format!("{below}::{name}"),
        None => name.to_string(),
    }
}

/// The built `asynclab` binary.
pub fn bin() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("asynclab").unwrap();
    // No A/A twin in the runs tests make (they check answers and behaviour, not differences,
    // and a twin is one more cell per scenario); tests/io_http.rs checks the twin itself.
    cmd.current_dir(root())
        .env("NO_COLOR", "1")
        .env("ASYNCLAB_NO_TWINS", "true");
    cmd
}

/// Arguments selecting the misbehaving test workloads and their own (package-free) environments.
pub fn test_workloads_args() -> Vec<String> {
    vec![
        "--workloads".into(),
        "tests/data/workloads".into(),
        "--venvs".into(),
        "target/test-venvs".into(),
        "--python".into(),
        "3.12".into(),
    ]
}

/// Pids of live processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rsplit(')')
                .next()
                .map(|s| s.trim_start().starts_with('Z'))
                .unwrap_or(false);
            !zombie && String::from_utf8_lossy(&cmd).contains(marker)
        })
        .collect()
}

/// Reads DIR/results.json.
pub fn results(dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

/// Where `doc` breaks the committed schema (schema/results.schema.json), one line each.
pub fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let text = std::fs::read_to_string(root().join("schema/results.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

/// The text of a findings folder's `results.json`, unpacked when it is committed as
/// `results.json.xz` (the large ones).
pub fn findings_json(dir: &std::path::Path) -> Vec<u8> {
    let plain = dir.join("results.json");
    if plain.exists() {
        return std::fs::read(&plain).unwrap();
    }
    let packed = dir.join("results.json.xz");
    let out = std::process::Command::new("xz")
        .arg("-dc")
        .arg(&packed)
        .output()
        .unwrap_or_else(|e| panic!("xz -dc {}: {e}; install xz-utils", packed.display()));
    assert!(out.status.success(), "xz -dc {} failed", packed.display());
    out.stdout
}

/// Live processes whose environment names a server-under-test owner (the lab's marker).
pub fn servers_left() -> Vec<i32> {
    let marker = asynclab::services::under_test::OWNER_VAR;
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'));
            !zombie
                && env
                    .split(|&b| b == 0)
                    .any(|kv| kv.starts_with(format!("{marker}=").as_bytes()))
        })
        .collect()
}

/// Waits until no server process is left, up to `limit`; those left.
pub fn wait_for_none(limit: std::time::Duration) -> Vec<i32> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = servers_left();
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// `docker ARGS...` stdout, trimmed; panics with stderr on failure.
pub fn docker(args: &[&str]) -> String {
    let out = std::process::Command::new("docker")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The physics bound of a parallel variant: its throughput is at most `limit` times `base`'s
/// (`limit`: the workers that can run at once). Judged on the lab's own ratio of the two
/// cells' rounds on `python` (a version prefix), paired by round, with its 95 % interval: the
/// bound is broken when the whole interval lies above `limit`. A ratio of medians against a
/// fixed slack is no test of it here: the machine's speed moves between rounds by more than
/// any slack that would still catch a wrong count. Err names the claim, Ok is the ratio.
pub fn within_parallel_limit(
    dir: &std::path::Path,
    (scenario, python): (&str, &str),
    variant: &str,
    base: &str,
    limit: f64,
) -> Result<f64, String> {
    let doc = asynclab::results::Results::load(dir).unwrap();
    let find = |v: &str| {
        doc.cells
            .iter()
            .find(|c| c.scenario == scenario && c.variant == v && c.python.starts_with(python))
            .unwrap_or_else(|| panic!("no {scenario}/{v} cell on {python}"))
    };
    let (a, b) = asynclab::analysis::measured::paired_rounds(find(variant), find(base), |r| {
        r.throughput_per_s
    });
    assert!(
        a.len() >= 2,
        "{scenario}: fewer than two clean rounds in common"
    );
    let ratio = asynclab::stats::paired_ratio(&a, &b);
    if ratio.ci95_low > limit {
        Err(format!(
            "{variant} {:.2}× [{:.2}–{:.2}] {base} over {} rounds, beyond {limit}×",
            ratio.ratio,
            ratio.ci95_low,
            ratio.ci95_high,
            a.len()
        ))
    } else {
        Ok(ratio.ratio)
    }
}
