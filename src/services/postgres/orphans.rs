//! Cluster directories left behind by a driver that was killed (SIGKILL runs no Drop guard):
//! each local cluster's directory names its owner, and the next start removes those whose owner
//! is gone, stopping a postgres still running from one first.
//!
//! The owner is a pid together with the process's start time (field 22 of `/proc/PID/stat`),
//! the boot it ran in and its pid namespace, so a reused pid, a reboot or a process in another
//! container sharing `/tmp` is never mistaken for the owner. A directory is removed only when
//! all of this holds: its name starts with [`DIR_PREFIX`], it is a real directory (not a link)
//! belonging to us (or to the user postgres runs as), it has a complete owner file from our boot
//! and pid namespace, and that process is no longer running. Anything else (no owner file yet,
//! another namespace, someone else's) is left alone.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::procfs::{self, PidStat};

/// How every local cluster's directory name starts (`asynclab-pg-XXXXXX`).
pub const DIR_PREFIX: &str = "asynclab-pg-";
/// The file in a cluster directory naming the process that owns it.
pub const OWNER_FILE: &str = "asynclab-owner";

/// How often a stopping postmaster is checked on.
const POLL: Duration = Duration::from_millis(10);

/// The process a cluster directory belongs to, as recorded in its [`OWNER_FILE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The owner's pid.
    pub pid: i32,
    /// When it started, in clock ticks since boot (`/proc/PID/stat` field 22).
    pub start_time: u64,
    /// `/proc/sys/kernel/random/boot_id` of the boot it ran in.
    pub boot_id: String,
    /// Its pid namespace (`readlink /proc/self/ns/pid`, e.g. `pid:[4026531836]`).
    pub pid_ns: String,
}

impl Owner {
    /// This process.
    pub fn current() -> io::Result<Owner> {
        let pid = std::process::id() as i32;
        let stat = PidStat::read(pid)
            .ok_or_else(|| io::Error::other(format!("cannot read /proc/{pid}/stat")))?;
        Ok(Owner {
            pid,
            start_time: stat.start_time,
            boot_id: procfs::boot_id(),
            pid_ns: procfs::pid_namespace(),
        })
    }

    /// True while the recorded process runs: same boot, a process with that pid, started at the
    /// recorded time, and not a zombie. Only meaningful for an owner in our pid namespace.
    pub fn is_alive(&self) -> bool {
        if self.boot_id != procfs::boot_id() {
            return false;
        }
        match PidStat::read(self.pid) {
            Some(stat) => stat.start_time == self.start_time && !stat.is_dead(),
            None => false,
        }
    }

    /// Writes `dir/asynclab-owner` (to a temporary name first, then renamed, so a concurrent
    /// reader sees the whole file or none).
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        let tmp = dir.join(format!(".{OWNER_FILE}.tmp"));
        let mut f = fs::File::create(&tmp)?;
        f.write_all(self.render().as_bytes())?;
        drop(f);
        fs::rename(&tmp, dir.join(OWNER_FILE))
    }

    /// The owner recorded in `dir`, `None` when there is no complete owner file.
    pub fn read_from(dir: &Path) -> Option<Owner> {
        Self::parse(&fs::read_to_string(dir.join(OWNER_FILE)).ok()?)
    }

    /// The owner on one line, `PID START_TIME BOOT_ID PID_NS`: the value of the label a
    /// container or network of the lab carries ([`Owner::from_label`] reads it back).
    pub fn label(&self) -> String {
        format!(
            "{} {} {} {}",
            self.pid, self.start_time, self.boot_id, self.pid_ns
        )
    }

    /// Parses [`Owner::label`]; anything else is `None`.
    pub fn from_label(text: &str) -> Option<Owner> {
        let mut f = text.split(' ');
        let owner = Owner {
            pid: f.next()?.parse().ok().filter(|p: &i32| *p > 0)?,
            start_time: f.next()?.parse().ok()?,
            boot_id: f.next()?.to_string(),
            pid_ns: f.next()?.to_string(),
        };
        f.next().is_none().then_some(owner)
    }

    /// True when this owner ran in this boot and pid namespace, so [`Owner::is_alive`] can
    /// judge it: an owner from elsewhere is never called gone.
    pub fn judgeable(&self) -> bool {
        self.boot_id == procfs::boot_id() && self.pid_ns == procfs::pid_namespace()
    }

    fn render(&self) -> String {
        format!(
            "pid {}\nstart_time {}\nboot_id {}\npid_ns {}\n",
            self.pid, self.start_time, self.boot_id, self.pid_ns
        )
    }

    /// Parses [`Owner::render`]'s output; anything else (truncated, missing a key) is `None`.
    fn parse(text: &str) -> Option<Owner> {
        let body = text.strip_suffix('\n')?;
        let mut fields = body.split('\n').map(|line| line.split_once(' '));
        let mut next = |key: &str| match fields.next() {
            Some(Some((k, v))) if k == key => Some(v.to_string()),
            _ => None,
        };
        let owner = Owner {
            pid: next("pid")?.parse().ok().filter(|p: &i32| *p > 0)?,
            start_time: next("start_time")?.parse().ok()?,
            boot_id: next("boot_id")?,
            pid_ns: next("pid_ns")?,
        };
        fields.next().is_none().then_some(owner)
    }
}

/// True while `pid` exists and is not a zombie.
fn running(pid: i32) -> bool {
    PidStat::read(pid).is_some_and(|s| !s.is_dead())
}

/// What [`remove_orphans`] found in one directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Removed: its owner is gone (and a postgres still running from it was stopped first).
    Removed {
        /// The directory.
        dir: PathBuf,
        /// Who had owned it.
        owner: Owner,
        /// The postmaster that was still running from it and was stopped, if any.
        stopped: Option<i32>,
    },
    /// Its owner is gone but it was left: the reason, in one line.
    Kept {
        /// The directory.
        dir: PathBuf,
        /// Why it was not removed.
        reason: String,
    },
}

/// Looks at the cluster directories in each of `parents` and removes those whose owner is gone
/// (see the module docs for exactly which); `uids` are the users whose directories we may judge.
/// Reports each removal (or a failed one) on stderr and returns what it did; directories with a
/// live owner, or none on record, are not mentioned.
pub fn remove_orphans(parents: &[PathBuf], uids: &[u32], stop_timeout: Duration) -> Vec<Found> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut found = Vec::new();
    for parent in parents {
        let Ok(canonical) = parent.canonicalize() else {
            continue;
        };
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical);
        let Ok(entries) = fs::read_dir(parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let is_ours = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(DIR_PREFIX));
            if !is_ours {
                continue;
            }
            if let Some(f) = judge(&entry.path(), uids, stop_timeout) {
                match &f {
                    Found::Removed {
                        dir,
                        owner,
                        stopped,
                    } => {
                        let stopped = stopped
                            .map(|p| format!(", after stopping postgres {p} still running from it"))
                            .unwrap_or_default();
                        let reused = if running(owner.pid) {
                            " (its pid now belongs to another process)"
                        } else {
                            ""
                        };
                        eprintln!(
                            "postgres: removed {}, left by process {} which is gone{reused}{stopped}",
                            dir.display(),
                            owner.pid
                        );
                    }
                    Found::Kept { dir, reason } => {
                        eprintln!("postgres: left {} in place: {reason}", dir.display());
                    }
                }
                found.push(f);
            }
        }
    }
    found
}

/// Decides about one `asynclab-pg-*` entry; `None` when it is not an orphan of ours.
fn judge(dir: &Path, uids: &[u32], stop_timeout: Duration) -> Option<Found> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(dir).ok()?;
    if !meta.is_dir() || !uids.contains(&meta.uid()) {
        return None;
    }
    let owner = Owner::read_from(dir)?;
    if owner.pid_ns != procfs::pid_namespace() || owner.is_alive() {
        return None;
    }
    let kept = |reason: String| {
        Some(Found::Kept {
            dir: dir.to_path_buf(),
            reason,
        })
    };
    let stopped = match stop_postmaster(&dir.join("data"), stop_timeout) {
        Ok(stopped) => stopped,
        Err(reason) => return kept(reason),
    };
    match fs::remove_dir_all(dir) {
        Ok(()) => {}
        // Another start removing the same orphan at the same time.
        Err(_) if !dir.exists() => {}
        Err(e) => {
            return kept(format!(
                "its owner {} is gone, but removing it failed: {e}",
                owner.pid
            ))
        }
    }
    Some(Found::Removed {
        dir: dir.to_path_buf(),
        owner,
        stopped,
    })
}

/// Stops the postmaster `data/postmaster.pid` names, if it still runs from `data`: SIGINT (fast
/// shutdown), then SIGKILL to its process group after `timeout`. `Ok(Some(pid))` when one was
/// stopped, `Ok(None)` when none ran; `Err` (one line) when one may run and could not be stopped.
fn stop_postmaster(data: &Path, timeout: Duration) -> Result<Option<i32>, String> {
    let Ok(text) = fs::read_to_string(data.join("postmaster.pid")) else {
        return Ok(None);
    };
    let Some(pid) = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<i32>().ok())
        .filter(|p| *p > 0)
    else {
        return Ok(None);
    };
    if !running(pid) {
        return Ok(None);
    }
    // The pid may have been reused since: it is our postmaster only if it runs in `data`.
    let cwd = match procfs::cwd(pid) {
        Ok(cwd) => cwd,
        // A process on its way out (killed with its owner) has no cwd any more: give it a
        // moment to finish dying before calling it a stranger.
        Err(_) if wait_gone(pid, Duration::from_secs(2)) => return Ok(None),
        Err(e) => return Err(unreadable_cwd(pid, &e)),
    };
    if data.canonicalize().ok().as_deref() != Some(cwd.as_path()) {
        return Ok(None);
    }
    // SAFETY: kill(2) on a process just checked to run in this cluster's data directory.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    if !wait_gone(pid, timeout) {
        // SAFETY: as above; our postmasters lead their own process group (pgid == pid).
        unsafe {
            if libc::getpgid(pid) == pid {
                libc::kill(-pid, libc::SIGKILL);
            } else {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        if !wait_gone(pid, Duration::from_secs(2)) {
            return Err(format!(
                "postgres {pid} still runs from it after SIGINT and SIGKILL"
            ));
        }
    }
    Ok(Some(pid))
}

/// The line for a postmaster that runs but whose directory cannot be read.
fn unreadable_cwd(pid: i32, e: &std::io::Error) -> String {
    format!("process {pid} named in its postmaster.pid runs, and its directory is unreadable ({e})")
}

/// Polls until `pid` no longer runs (a zombie counts as gone); false on timeout.
fn wait_gone(pid: i32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while running(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_file_round_trips_and_rejects_partial_text() {
        let me = Owner::current().unwrap();
        assert!(me.is_alive());
        let text = me.render();
        assert_eq!(Owner::parse(&text), Some(me.clone()));
        for cut in 0..text.len() {
            assert_eq!(Owner::parse(&text[..cut]), None, "{:?}", &text[..cut]);
        }
        assert_eq!(Owner::parse(&format!("{text}extra 1\n")), None);
    }

    #[test]
    fn a_reused_pid_or_another_boot_is_not_the_owner() {
        let me = Owner::current().unwrap();
        let reused = Owner {
            start_time: me.start_time + 1,
            ..me.clone()
        };
        assert!(!reused.is_alive());
        let other_boot = Owner {
            boot_id: "another-boot".into(),
            ..me
        };
        assert!(!other_boot.is_alive());
    }
}
