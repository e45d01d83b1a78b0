//! A Python web service under test (gunicorn, uvicorn, granian, ...): started from its
//! catalogue command on a loopback port, pinned, waited for, measured as a process tree and
//! always torn down.
//!
//! Teardown has three layers. [`RunningServer`]'s `Drop` sends SIGTERM to the server's root
//! and, after [`STOP_TIMEOUT`], SIGKILL to every process left in its tree. The root gets
//! `PR_SET_PDEATHSIG`, so it dies with the process that started it (the lab's load generator,
//! itself killed with the driver); workers that outlive their root (a master killed before it
//! could stop them) carry [`OWNER_VAR`] in their environment, naming the driver that ran them,
//! and [`sweep_orphans`] kills those whose driver is gone at the next start.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::affinity::cpu_set;
use crate::procfs::{self, PidStat};
use crate::services::postgres::orphans::Owner;

/// How long a server gets to stop on SIGTERM before its tree is killed.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// The environment variable naming the driver a server process belongs to:
/// `PID:START_TIME:BOOT_ID` of the driver.
pub const OWNER_VAR: &str = "ASYNCLAB_SERVER_OWNER";

/// How a server is started.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The service's name (the variant), for messages.
    pub name: String,
    /// The command, placeholders already filled.
    pub argv: Vec<String>,
    /// Its working directory (where its app modules are).
    pub dir: PathBuf,
    /// Environment set on top of the inherited one.
    pub env: Vec<(String, String)>,
    /// CPUs it (and its workers) is pinned to; empty: not pinned.
    pub cpus: Vec<usize>,
    /// Where its stdout and stderr go.
    pub log: PathBuf,
    /// The driver that owns it, `PID:START_TIME:BOOT_ID` ([`owner_value`]).
    pub owner: String,
}

/// A started server; stopped when dropped.
pub struct RunningServer {
    root: Root,
    /// Its name, for messages.
    pub name: String,
    /// Its captured output.
    pub log: PathBuf,
}

/// The server's root process: this process's child, or a process started in another role's
/// container ([`RunningServer::adopt`]), known by its pid in this machine's /proc.
enum Root {
    Child(Child),
    Adopted(i32),
}

impl Root {
    /// How the root ended, in words; None while it runs.
    fn ended(&mut self) -> Option<String> {
        match self {
            Root::Child(c) => c.try_wait().ok().flatten().map(|s| s.to_string()),
            Root::Adopted(pid) => gone(*pid).then(|| format!("process {pid} is gone")),
        }
    }
}

/// The value of [`OWNER_VAR`] for the driver `pid` (the parent of a load generator).
pub fn owner_value(pid: i32) -> String {
    let start = PidStat::read(pid).map_or(0, |s| s.start_time);
    format!("{pid}:{start}:{}", procfs::boot_id())
}

impl RunningServer {
    /// Starts the server; an unstartable command is an error naming the service and its log.
    pub fn start(launch: &Launch) -> anyhow::Result<RunningServer> {
        let log = std::fs::File::create(&launch.log).map_err(|e| {
            anyhow::anyhow!(
                "service {}: cannot create its log {}: {e}",
                launch.name,
                launch.log.display()
            )
        })?;
        let (program, args) = launch
            .argv
            .split_first()
            .ok_or_else(|| anyhow::anyhow!("service {}: empty command", launch.name))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(&launch.dir)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .env(OWNER_VAR, &launch.owner)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let pin = (!launch.cpus.is_empty()).then(|| cpu_set(&launch.cpus));
        // SAFETY: `in_child` makes only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || crate::affinity::in_child(pin.as_ref()));
        }
        let child = cmd.spawn().map_err(|e| {
            anyhow::anyhow!(
                "service {}: cannot start {program}: {e}; run `make envs` to build the Python environments",
                launch.name
            )
        })?;
        Ok(RunningServer {
            root: Root::Child(child),
            name: launch.name.clone(),
            log: launch.log.clone(),
        })
    }

    /// A server whose root `pid` (as this machine's /proc numbers it) was started elsewhere:
    /// in the server role's container under `--hosts containers`. It is stopped by signals as
    /// a child is; it ends with its container if this process dies first.
    pub fn adopt(pid: i32, launch: &Launch) -> RunningServer {
        RunningServer {
            root: Root::Adopted(pid),
            name: launch.name.clone(),
            log: launch.log.clone(),
        }
    }

    /// The root process's pid.
    pub fn pid(&self) -> i32 {
        match &self.root {
            Root::Child(c) => c.id() as i32,
            Root::Adopted(pid) => *pid,
        }
    }

    /// Whether the root was started elsewhere and adopted ([`RunningServer::adopt`]).
    pub fn adopted(&self) -> bool {
        matches!(self.root, Root::Adopted(_))
    }

    /// The root and its live descendants.
    pub fn tree(&self) -> Vec<i32> {
        procfs::tree(self.pid())
    }

    /// Waits until `GET /plain` on `addr` answers 200; an exit or the deadline is an error
    /// naming the service, its exit status and its log.
    pub fn wait_ready(&mut self, addr: SocketAddr, limit: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.root.ended() {
                anyhow::bail!(
                    "service {} exited before it answered ({status}); its log: {}",
                    self.name,
                    self.log.display()
                );
            }
            if answers_plain(addr) {
                return Ok(());
            }
            if Instant::now() > deadline {
                anyhow::bail!(
                    "service {} did not answer GET /plain on {addr} within {:.0} s; its log: {}",
                    self.name,
                    limit.as_secs_f64(),
                    self.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the root still runs; how it ended, in words, if not.
    pub fn exited(&mut self) -> Option<String> {
        self.root.ended()
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let tree = self.tree();
        // SAFETY: signalling the server's root (our child, or the adopted pid we watch); its
        // workers are stopped by it.
        unsafe {
            libc::kill(self.pid(), libc::SIGTERM);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            let root_gone = self.root.ended().is_some();
            if root_gone && tree.iter().all(|&p| gone(p)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for &p in tree.iter().chain(self.tree().iter()) {
            // SAFETY: pids of this server's tree, read before and now; ESRCH when gone.
            unsafe {
                libc::kill(p, libc::SIGKILL);
            }
        }
        if let Root::Child(c) = &mut self.root {
            let _ = c.wait();
        }
    }
}

/// Whether `pid` has exited (or is a zombie left for its parent).
fn gone(pid: i32) -> bool {
    PidStat::read(pid).is_none_or(|s| s.is_dead())
}

/// One blocking `GET /plain` answered with 200.
fn answers_plain(addr: SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok()
        && (head.starts_with(b"HTTP/1.1 200") || head.starts_with(b"HTTP/1.0 200"))
}

/// A free loopback port (bound, then released for the server to bind).
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Kills every process of this user whose [`OWNER_VAR`] names a driver that is gone (one that
/// was SIGKILLed before its servers stopped); the pids killed.
pub fn sweep_orphans() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut killed = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return killed;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Some(owner) = owner_of(&entry.path()) else {
            continue;
        };
        if !owner.is_alive() {
            // SAFETY: a process whose recorded driver is gone; ESRCH when it is too.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            killed.push(pid);
        }
    }
    killed
}

/// The driver recorded in a process's environment (`/proc/PID/environ`), if any.
fn owner_of(proc_dir: &Path) -> Option<Owner> {
    let env = std::fs::read(proc_dir.join("environ")).ok()?;
    let prefix = format!("{OWNER_VAR}=");
    let value = env
        .split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))?;
    let text = std::str::from_utf8(value).ok()?;
    let mut parts = text.splitn(3, ':');
    Some(Owner {
        pid: parts.next()?.parse().ok()?,
        start_time: parts.next()?.parse().ok()?,
        boot_id: parts.next()?.to_string(),
        pid_ns: procfs::pid_namespace(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_kills_servers_whose_driver_is_gone_and_spares_live_ones() {
        // A spawned child shows its own environment once it has exec'd.
        let spawn = |owner: String| {
            let child = Command::new("sleep")
                .arg("60")
                .env(OWNER_VAR, owner)
                .spawn()
                .unwrap();
            let proc_dir = PathBuf::from(format!("/proc/{}", child.id()));
            let deadline = Instant::now() + Duration::from_secs(10);
            while owner_of(&proc_dir).is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            child
        };
        // A driver that is gone: this process's pid with a start time it never had.
        let me = std::process::id() as i32;
        let mut orphan = spawn(format!("{me}:1:{}", procfs::boot_id()));
        let mut owned = spawn(owner_value(me));
        let swept = sweep_orphans();
        assert!(swept.contains(&(orphan.id() as i32)), "{swept:?}");
        assert!(!swept.contains(&(owned.id() as i32)), "{swept:?}");
        assert!(orphan.wait().is_ok());
        assert_eq!(
            owned.try_wait().unwrap(),
            None,
            "a live driver's server runs on"
        );
        owned.kill().unwrap();
        owned.wait().unwrap();
    }
}
