//! The real executor: one fresh Python worker per run, driven over the ready/go/done protocol
//! (see docs/protocol.md) and measured from outside through /proc.

use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::executor::{Executor, RunError, SkipKind};
use super::matrix::{CellSpec, Network};
use super::sampler;
use crate::affinity::cpu_set;
use crate::interrupt;
use crate::results::RunRecord;

/// Lines of a failed worker's stderr kept in the cell's failure text.
const STDERR_TAIL_LINES: usize = 12;
/// How long a worker may take to import and set up before it must say `ready`.
const SETUP_TIMEOUT: Duration = Duration::from_secs(120);
/// How long after `done` the result document may take.
const RESULT_TIMEOUT: Duration = Duration::from_secs(60);
/// A worker's environment: `NAME` lines are kept from the driver's environment, `NAME=VALUE`
/// lines set; everything else is dropped (as pyperf does). The pytest fixtures read the same file.
const WORKER_ENV: &str = include_str!("worker_env.txt");

/// The entries of [`WORKER_ENV`]: (name, None) to keep, (name, Some(value)) to set.
fn worker_env() -> impl Iterator<Item = (&'static str, Option<&'static str>)> {
    WORKER_ENV
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (l, None),
        })
}

/// Addresses of the services that are running, passed to workers as `--services`.
#[derive(Debug, Clone, Default)]
pub struct ServiceAddrs {
    /// Base URL of the mock HTTP server.
    pub http_url: Option<String>,
    /// PostgreSQL URL.
    pub database_url: Option<String>,
    /// host:port of the TCP echo server.
    pub echo_addr: Option<String>,
}

/// Where each cell's workers find the services: directly, or through the delay line of the
/// cell's network distance.
#[derive(Debug, Clone, Default)]
pub struct Routes {
    /// The services' own addresses (cells without a delay).
    pub direct: ServiceAddrs,
    /// The delay lines' addresses, one set per network distance the plan asked for.
    pub delayed: Vec<(Network, ServiceAddrs)>,
}

impl Routes {
    /// The addresses for a cell with `network`; `None` when no delay line was started for it.
    pub fn for_network(&self, network: Option<Network>) -> Option<&ServiceAddrs> {
        match network {
            None => Some(&self.direct),
            Some(n) => self.delayed.iter().find(|(m, _)| *m == n).map(|(_, a)| a),
        }
    }
}

/// Runs workers as real processes.
pub struct ProcessExecutor {
    /// `workloads/harness.py`.
    pub harness: PathBuf,
    /// Where the services under test of `loadgen` cells write their output.
    pub server_logs: PathBuf,
    /// Service addresses, per network distance.
    pub services: Routes,
    /// Reads the mock server's served-request counter, when it runs (`None` from it: the
    /// counter could not be read).
    pub http_requests: Option<Arc<dyn Fn() -> Option<u64> + Send + Sync>>,
    /// The other roles' process trees (`--hosts containers`): their CPU is the lab's, and each
    /// run of a cell that uses a role's services records what the role used.
    pub roles: Vec<RoleProcess>,
    /// Root pids of the services that run as processes (PostgreSQL's): their CPU time is the
    /// lab's own, not interference.
    pub service_pids: Vec<i32>,
    /// When a run counts as contaminated by other programs.
    pub limits: super::interference::Limits,
    /// Where `loadgen` cells start their services under test when the server is a role of its
    /// own (`--hosts containers`); None: beside the load generator.
    pub server_role: Option<crate::hosts::exec::ServerRole>,
}

/// Another role's process tree, and the services it provides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleProcess {
    /// `server` or `database`.
    pub role: String,
    /// The root of its tree (its container's init), as this machine's /proc numbers it.
    pub pid: i32,
    /// The services it runs.
    pub serves: Vec<crate::catalogue::Service>,
}

/// A spawned worker that is killed (its whole process group) if dropped while running.
struct Worker {
    child: Child,
    pgid: i32,
    lines: Receiver<String>,
    stderr: std::fs::File,
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: signalling our own child's process group.
            unsafe {
                libc::kill(-self.pgid, libc::SIGKILL);
            }
        }
        let _ = self.child.wait();
        // Children of the worker (a pool left behind) die with the group.
        // SAFETY: as above; ESRCH when the group is already gone.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
        interrupt::unregister(-self.pgid);
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Worker {
    fn spawn(exec: &ProcessExecutor, cell: &CellSpec) -> Result<Worker, RunError> {
        let failed = |m: String| RunError::Failed(m);
        let (read_end, write_end) =
            pipe().map_err(|e| failed(format!("cannot create the control pipe: {e}")))?;
        let stderr =
            tempfile::tempfile().map_err(|e| failed(format!("cannot create a temp file: {e}")))?;
        let addrs = exec.services.for_network(cell.network).ok_or_else(|| {
            failed(format!(
                "no delay line was started for {}",
                cell.network.map(|n| n.describe()).unwrap_or_default()
            ))
        })?;
        let mut services = serde_json::Map::new();
        if let Some(u) = &addrs.http_url {
            services.insert("http_url".into(), u.clone().into());
        }
        if let Some(u) = &addrs.database_url {
            services.insert("database_url".into(), u.clone().into());
        }
        if let Some(u) = &addrs.echo_addr {
            services.insert("echo_addr".into(), u.clone().into());
        }
        let mut cmd = match &cell.server {
            // The lab's load generator, this very program, drives a service under test.
            Some(sut) => {
                let me = std::env::current_exe()
                    .map_err(|e| failed(format!("cannot find the asynclab binary: {e}")))?;
                let mut cmd = Command::new(me);
                cmd.arg("loadgen")
                    .arg("--server")
                    .arg(serde_json::to_string(&sut.server).unwrap_or_default())
                    .arg("--dir")
                    .arg(&sut.dir)
                    .arg("--server-cpus")
                    .arg(crate::affinity::format_cpus(&sut.cpus))
                    .arg("--python")
                    .arg(&cell.python.exe)
                    .arg("--log-dir")
                    .arg(&exec.server_logs);
                if let Some(role) = &exec.server_role {
                    cmd.arg("--server-role")
                        .arg(serde_json::to_string(role).unwrap_or_default());
                }
                cmd
            }
            None => {
                let mut cmd = Command::new(&cell.python.exe);
                cmd.arg(&exec.harness)
                    .arg("--script")
                    .arg(&cell.script)
                    .arg("--variant")
                    .arg(&cell.variant);
                cmd
            }
        };
        cmd.arg("--params")
            .arg(serde_json::to_string(&cell.params).unwrap_or_default())
            .arg("--services")
            .arg(Value::Object(services).to_string())
            .arg("--ctl-fd")
            .arg("3")
            .env_clear()
            .envs(worker_env().filter_map(|(name, value)| match value {
                Some(v) => Some((name, std::ffi::OsString::from(v))),
                None => std::env::var_os(name).map(|v| (name, v)),
            }))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(stderr.try_clone().map_err(|e| failed(e.to_string()))?)
            .process_group(0);
        if cell.python.free_threaded() {
            cmd.env("PYTHON_GIL", "0");
        }
        let raw_write = std::os::fd::AsRawFd::as_raw_fd(&write_end);
        let pin = (!cell.cpus.is_empty()).then(|| cpu_set(&cell.cpus));
        // SAFETY: only async-signal-safe calls (dup2, prctl, sched_setaffinity) between fork and
        // exec; the CPU set was built before the fork.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(raw_write, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                crate::affinity::in_child(pin.as_ref())
            });
        }
        let child = cmd.spawn().map_err(|e| {
            failed(format!(
                "cannot start {}: {e}; run `make envs` to build the Python environments",
                cell.python.exe.display()
            ))
        })?;
        drop(write_end);
        let pgid = child.id() as i32;
        interrupt::register(-pgid);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(std::fs::File::from(read_end)).lines() {
                let Ok(l) = line else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Ok(Worker {
            child,
            pgid,
            lines: rx,
            stderr,
        })
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The last lines of the worker's stderr, joined on one line.
    fn stderr_tail(&mut self) -> String {
        let mut text = String::new();
        let _ = self.stderr.rewind();
        let _ = self.stderr.read_to_string(&mut text);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = &lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..];
        if tail.is_empty() {
            "(stderr empty)".into()
        } else {
            tail.join(" | ")
        }
    }

    /// Like [`Worker::wait_inner`], but a failure caused by Ctrl-C (the worker got SIGINT too)
    /// is reported as an interruption, not as a failed cell.
    fn wait_for(
        &mut self,
        want: &str,
        limit: Duration,
        cell: &CellSpec,
    ) -> Result<Value, RunError> {
        let r = self.wait_inner(want, limit, cell);
        if r.is_err() && interrupt::interrupted() {
            return Err(RunError::Interrupted);
        }
        r
    }

    /// Waits for the event `want`; an `error` event, an exit or the deadline fail the run.
    fn wait_inner(
        &mut self,
        want: &str,
        limit: Duration,
        cell: &CellSpec,
    ) -> Result<Value, RunError> {
        let deadline = Instant::now() + limit;
        loop {
            if interrupt::interrupted() {
                return Err(RunError::Interrupted);
            }
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    let msg: Value = serde_json::from_str(&line).map_err(|_| {
                        RunError::Failed(format!(
                            "worker wrote a malformed control line: {}",
                            line.chars().take(200).collect::<String>()
                        ))
                    })?;
                    match msg.get("event").and_then(Value::as_str) {
                        Some(e) if e == want => return Ok(msg),
                        Some("error") => {
                            let _ = self.child.wait();
                            return Err(worker_error(&msg, || self.stderr_tail()));
                        }
                        Some("skip") => {
                            let _ = self.child.wait();
                            return Err(worker_skip(&msg));
                        }
                        _ => {
                            return Err(RunError::Failed(format!(
                                "protocol: expected '{want}', got: {line}"
                            )));
                        }
                    }
                }
                Err(e) => {
                    if let Ok(Some(status)) = self.child.try_wait() {
                        return self.after_exit(want, status);
                    }
                    if e == RecvTimeoutError::Disconnected {
                        // The control pipe is closed but the worker still runs: do not spin.
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    if Instant::now() > deadline {
                        return Err(RunError::Failed(format!(
                            "worker hung: no '{want}' within {:.0} s (raise timeout_s of scenario {} in the catalogue if it is just slow); killed; stderr: {}",
                            limit.as_secs_f64(),
                            cell.scenario,
                            self.stderr_tail()
                        )));
                    }
                }
            }
        }
    }

    /// The worker exited while the driver waited for `want`. Everything it wrote before
    /// exiting is still read (the pipe drains after the exit is seen, which on a busy machine
    /// can take a while), so an exit after `want` or after an `error` is reported as that.
    fn after_exit(
        &mut self,
        want: &str,
        status: std::process::ExitStatus,
    ) -> Result<Value, RunError> {
        let mut seen: Vec<String> = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            let msg: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            match msg.get("event").and_then(Value::as_str) {
                Some(e) if e == want => return Ok(msg),
                Some("error") => return Err(worker_error(&msg, || self.stderr_tail())),
                Some("skip") => return Err(worker_skip(&msg)),
                other => seen.push(other.unwrap_or("malformed").to_string()),
            }
        }
        let seen = if seen.is_empty() {
            "none".to_string()
        } else {
            seen.join(", ")
        };
        Err(RunError::Failed(format!(
            "worker crashed ({status}) before '{want}' (control events seen: {seen}); stderr: {}",
            self.stderr_tail()
        )))
    }
}

/// The failure for a worker's `error` event: its message and the tail of its stderr.
fn worker_error(event: &Value, stderr_tail: impl FnOnce() -> String) -> RunError {
    let message = event
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("unknown error");
    RunError::Failed(format!(
        "worker error: {message}; stderr: {}",
        stderr_tail()
    ))
}

/// A worker's `skip` event (the cell cannot run in its environment), for the scheduler to mark
/// the cell skipped; a kind the driver does not know fails the run as a protocol error.
fn worker_skip(event: &Value) -> RunError {
    let reason = event.get("reason").and_then(Value::as_str).unwrap_or("");
    match event
        .get("kind")
        .cloned()
        .map(serde_json::from_value::<SkipKind>)
    {
        Some(Ok(kind)) => RunError::Skipped {
            kind,
            reason: reason.trim().to_string(),
        },
        _ => RunError::Failed(format!(
            "protocol: a skip message of no known kind (docs/protocol.md lists them): {event}"
        )),
    }
}

fn kib_to_mib(k: u64) -> f64 {
    k as f64 / 1024.0
}

impl Executor for ProcessExecutor {
    fn execute(&mut self, cell: &CellSpec, round: Option<usize>) -> Result<RunRecord, RunError> {
        let spawned_s = super::clock::now_s();
        let mut w = Worker::spawn(self, cell)?;
        let ready = w.wait_for("ready", SETUP_TIMEOUT, cell)?;
        let ready_s = super::clock::now_s();
        let pid = w.pid();
        // Trees the worker started outside its own (a server under test in the server role's
        // container) are measured as part of the worker's, as a child's would be, and count as
        // the lab's, not interference.
        let adopted: Vec<i32> = ready
            .get("adopted")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.as_i64())
                    .map(|p| p as i32)
                    .collect()
            })
            .unwrap_or_default();
        let lab_pids: Vec<i32> = self.service_pids.iter().chain(&adopted).copied().collect();
        let roots: Vec<i32> = std::iter::once(pid)
            .chain(adopted.iter().copied())
            .collect();
        let worker_cpu_s = || roots.iter().map(|&p| sampler::tree_cpu_s(p)).sum::<f64>();
        for &r in &roots {
            sampler::reset_peaks(r);
        }
        let baseline_rss_kib: u64 = roots.iter().map(|&r| sampler::tree_rss_kib(r)).sum();
        let baseline_pss_kib: u64 = roots.iter().map(|&r| sampler::tree_pss_kib(r)).sum();
        let processes_at_ready = sampler::forest(&roots).len();
        let window = super::interference::Window::open(pid, &lab_pids);
        let cpu_before = worker_cpu_s();
        let requests_before = self.http_requests.as_ref().and_then(|f| f());
        let used: Vec<&RoleProcess> = self
            .roles
            .iter()
            .filter(|r| r.serves.iter().any(|s| cell.services.contains(s)))
            .collect();
        let roles_before: Vec<f64> = used
            .iter()
            .map(|r| sampler::tree_runtime_s(r.pid))
            .collect();
        let sampler = sampler::PeakSampler::start(roots.clone());
        let go = Instant::now();
        {
            let stdin = w
                .child
                .stdin
                .as_mut()
                .ok_or_else(|| RunError::Failed("worker has no stdin".into()))?;
            stdin
                .write_all(b"go\n")
                .and_then(|_| stdin.flush())
                .map_err(|e| {
                    // A signal between `ready` and `go` ends the worker (it is forwarded to
                    // it) before the driver writes: that is the interruption, not a failure.
                    if interrupt::interrupted() {
                        return RunError::Interrupted;
                    }
                    RunError::Failed(format!("cannot send go: {e}; stderr: {}", w.stderr_tail()))
                })?;
        }
        let done = w.wait_for("done", cell.timeout, cell);
        let wall_s = go.elapsed().as_secs_f64();
        let cpu_after = worker_cpu_s();
        let roles: Vec<crate::results::RoleUsage> = used
            .iter()
            .zip(&roles_before)
            .map(|(r, before)| crate::results::RoleUsage {
                role: r.role.clone(),
                cpu_s: (sampler::tree_runtime_s(r.pid) - before).max(0.0),
                pss_mib: kib_to_mib(sampler::tree_pss_kib(r.pid)),
            })
            .collect();
        // The peak first: a worker may exit soon after `done`, and a zombie has no VmHWM.
        let root_hwm = sampler::hwm_kib(pid).unwrap_or(0);
        let counters = window.close(pid, &lab_pids, wall_s, self.limits);
        let sampled_peak = sampler.finish();
        done?;
        let result = w.wait_for("result", RESULT_TIMEOUT, cell)?;
        // Let the worker tear down; its children go with the group when dropped.
        let exit_deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < exit_deadline {
            if let Ok(Some(_)) = w.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let interference = counters.probe_after();
        let timeline = crate::results::Timeline {
            spawned_s,
            ready_s,
            go_s: super::clock::seconds(go),
            done_s: super::clock::seconds(go) + wall_s,
            exited_s: super::clock::now_s(),
        };
        let server_requests = match (&self.http_requests, requests_before) {
            (Some(f), Some(before)) => f().map(|after| after.saturating_sub(before)),
            _ => None,
        };
        // One process: the kernel's exact peak (VmHWM, reset at ready) over RSS at ready.
        // Several: PSS summed over the tree, sampled, so pages forked workers share with
        // their parent are not counted once per process.
        let (memory_metric, baseline_kib, peak_kib) =
            if sampled_peak.max_processes > 1 || processes_at_ready > 1 {
                (
                    crate::results::MEMORY_PSS_TREE,
                    baseline_pss_kib,
                    sampled_peak.pss_kib.max(baseline_pss_kib),
                )
            } else {
                (
                    crate::results::MEMORY_RSS_HWM,
                    baseline_rss_kib,
                    root_hwm.max(baseline_rss_kib),
                )
            };
        let get_u64 = |k: &str| result.get(k).and_then(Value::as_u64).unwrap_or(0);
        let ops = get_u64("ops");
        let latencies_ms: Vec<f64> = result
            .get("latencies_ms")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        // The worker's extras, typed once here: a kind the lab reads in the wrong shape fails
        // the run with a line that says which.
        let extra = match result.get("extra") {
            None | Some(Value::Null) => crate::extras::Extras::default(),
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
                RunError::Failed(format!("the worker's result has a malformed `extra`: {e} (docs/protocol.md lists the kinds the lab reads and their shapes)"))
            })?,
        };
        Ok(RunRecord {
            round: round.unwrap_or(0),
            wall_s,
            inside_wall_s: result
                .get("inside_wall_s")
                .and_then(Value::as_f64)
                .unwrap_or(f64::NAN),
            cpu_s: (cpu_after - cpu_before).max(0.0),
            baseline_rss_mib: kib_to_mib(baseline_kib),
            peak_rss_mib: kib_to_mib(peak_kib),
            peak_rss_delta_mib: kib_to_mib(peak_kib - baseline_kib),
            memory_metric: memory_metric.to_string(),
            ops,
            errors: get_u64("errors"),
            server_requests,
            roles,
            throughput_per_s: ops as f64 / wall_s,
            latency_kind: result
                .get("latency_kind")
                .and_then(Value::as_str)
                .unwrap_or("service")
                .to_string(),
            latencies_ms,
            latency_sets_ms: result
                .get("latency_sets_ms")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            let xs = v
                                .as_array()
                                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                                .unwrap_or_default();
                            (k.clone(), xs)
                        })
                        .collect()
                })
                .unwrap_or_default(),
            error_samples: result
                .get("error_samples")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .take(5)
                        .collect()
                })
                .unwrap_or_default(),
            interference: Some(interference),
            extra,
            timeline: Some(timeline),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_event_is_a_typed_skip_and_an_error_event_a_failure() {
        let skip = serde_json::json!({"event": "skip", "phase": "setup",
            "kind": "missing_package", "reason": "loop rsloop is not installed: make rsloop"});
        assert_eq!(
            worker_skip(&skip),
            RunError::Skipped {
                kind: SkipKind::MissingPackage,
                reason: "loop rsloop is not installed: make rsloop".into()
            }
        );
        let odd = serde_json::json!({"event": "skip", "kind": "tired", "reason": "x"});
        assert!(matches!(worker_skip(&odd), RunError::Failed(m) if m.starts_with("protocol:")));
        // A message that only looks like a skip is an error like any other.
        let error = serde_json::json!({"event": "error", "phase": "setup", "message": "skip: x"});
        assert_eq!(
            worker_error(&error, || "tail".into()),
            RunError::Failed("worker error: skip: x; stderr: tail".into())
        );
    }

    #[test]
    fn the_worker_environment_keeps_the_whitelist_and_sets_the_python_flags() {
        let env: Vec<_> = worker_env().collect();
        for kept in ["PATH", "HOME", "LANG", "TMPDIR"] {
            assert!(env.contains(&(kept, None)), "{kept}: {env:?}");
        }
        for set in [
            ("PYTHONHASHSEED", "0"),
            ("PYTHONDONTWRITEBYTECODE", "1"),
            ("PYTHONUNBUFFERED", "1"),
        ] {
            assert!(env.contains(&(set.0, Some(set.1))), "{set:?}: {env:?}");
        }
        let name = |n: &str| n.chars().all(|c| c.is_ascii_uppercase() || c == '_');
        assert!(env.iter().all(|(n, _)| !n.is_empty() && name(n)), "{env:?}");
    }
}
