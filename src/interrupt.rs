//! SIGINT (Ctrl-C), SIGTERM and SIGHUP handling: which signal arrived, plus a registry of child
//! process groups to stop.
//!
//! The handler never tears services down itself (Drop guards do that on the main thread). In
//! signal context it only stores the signal's number (`signal_hook::flag`), so [`interrupted`]
//! is true from that instant; `signal_hook`'s iterator wakes a forwarding thread, which sends
//! SIGINT to every registered child, so blocking waits return (SIGINT for all three signals:
//! postgres takes it as a fast shutdown, where SIGTERM would wait for its clients to leave).
//! The first signal the lab reads wins: [`received`] and the forwarding thread both latch the
//! stored number once. Every wait loop polls [`interrupted`], and the error from [`check`]
//! names the signal; `main` exits with [`Signal::exit_code`] (130, 143 or 129).
//!
//! `signal-hook` registers through `signal-hook-registry`, the registry tokio's signal streams
//! use too, so a later `tokio::signal` listener (the standalone mock server's) and these
//! handlers both see the signal.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use rustix::process::Pid;

/// The latest termination signal's number, stored in signal context; 0 while none arrived.
static LATEST: AtomicUsize = AtomicUsize::new(0);
/// The signal the lab reports: the first value of [`LATEST`] read, 0 until then.
static FIRST: AtomicUsize = AtomicUsize::new(0);
static CHILDREN: OnceLock<Mutex<BTreeSet<i32>>> = OnceLock::new();

fn children() -> &'static Mutex<BTreeSet<i32>> {
    CHILDREN.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// A signal that stops the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C in the terminal, or `kill -INT`.
    Int,
    /// SIGTERM: `kill`, a service manager or a container runtime stopping us.
    Term,
    /// SIGHUP: the terminal went away (a closed window, a dropped ssh session).
    Hup,
}

impl Signal {
    /// All of them, in the order they are installed.
    pub const ALL: [Signal; 3] = [Signal::Int, Signal::Term, Signal::Hup];

    /// The signal's number (`libc::SIGINT`, ...).
    pub fn number(self) -> i32 {
        match self {
            Signal::Int => libc::SIGINT,
            Signal::Term => libc::SIGTERM,
            Signal::Hup => libc::SIGHUP,
        }
    }

    /// The signal with this number, if it is one of ours.
    pub fn from_number(number: i32) -> Option<Signal> {
        Signal::ALL.into_iter().find(|s| s.number() == number)
    }

    /// `SIGINT`, `SIGTERM` or `SIGHUP`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Int => "SIGINT",
            Signal::Term => "SIGTERM",
            Signal::Hup => "SIGHUP",
        }
    }

    /// How the interruption is described: the name, with `(Ctrl-C)` for SIGINT.
    pub fn describe(self) -> &'static str {
        match self {
            Signal::Int => "SIGINT (Ctrl-C)",
            Signal::Term => "SIGTERM",
            Signal::Hup => "SIGHUP",
        }
    }

    /// The shell's convention for a process stopped by the signal, 128 + its number: 130 for
    /// SIGINT, 143 for SIGTERM, 129 for SIGHUP.
    pub fn exit_code(self) -> i32 {
        128 + self.number()
    }
}

/// Installs the SIGINT / SIGTERM / SIGHUP handlers once; later calls are no-ops. If they cannot be
/// installed, says so on stderr and carries on (the signals then keep their default action).
pub fn install() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        if let Err(e) = try_install() {
            eprintln!(
                "warning: cannot handle SIGINT/SIGTERM/SIGHUP ({e}); \
                 a signal will kill the lab without stopping its services"
            );
        }
    });
}

fn try_install() -> std::io::Result<()> {
    let numbers = Signal::ALL.map(Signal::number);
    for number in numbers {
        signal_hook::flag::register_usize(number, &LATEST, number as usize)?;
    }
    let mut signals = signal_hook::iterator::Signals::new(numbers)?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                received();
                forward();
            }
        })?;
    Ok(())
}

/// SIGINT to each registered child, on every signal (again on a second one, for a child that
/// ignored the first). A negative pid is a process group.
fn forward() {
    let Ok(set) = children().lock() else { return };
    for &pid in set.iter() {
        // Failure (the child is already gone) is harmless.
        let _ = match pid.checked_abs().and_then(Pid::from_raw) {
            Some(p) if pid < 0 => {
                rustix::process::kill_process_group(p, rustix::process::Signal::INT)
            }
            Some(p) => rustix::process::kill_process(p, rustix::process::Signal::INT),
            None => continue,
        };
    }
}

/// The first of SIGINT, SIGTERM and SIGHUP received, `None` while there was none.
pub fn received() -> Option<Signal> {
    let latest = LATEST.load(Ordering::SeqCst);
    if latest != 0 {
        let _ = FIRST.compare_exchange(0, latest, Ordering::SeqCst, Ordering::SeqCst);
    }
    Signal::from_number(FIRST.load(Ordering::SeqCst) as i32)
}

/// True once SIGINT (Ctrl-C), SIGTERM or SIGHUP was received.
pub fn interrupted() -> bool {
    received().is_some()
}

/// Returns an error when interrupted, naming the signal, so loops can `?` out and let Drop
/// guards clean up.
pub fn check() -> anyhow::Result<()> {
    match received() {
        Some(signal) => anyhow::bail!(
            "interrupted by {}: services and children were stopped, results so far are kept",
            signal.describe()
        ),
        None => Ok(()),
    }
}

/// Registers a child pid (a process-group leader when negative) to be sent SIGINT when the lab
/// is interrupted.
pub fn register(pid: i32) {
    if let Ok(mut set) = children().lock() {
        set.insert(pid);
    }
}

/// Removes a pid registered with [`register`].
pub fn unregister(pid: i32) {
    if let Ok(mut set) = children().lock() {
        set.remove(&pid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell_convention() {
        assert_eq!(Signal::Int.exit_code(), 130);
        assert_eq!(Signal::Term.exit_code(), 143);
        assert_eq!(Signal::Hup.exit_code(), 129);
        for s in Signal::ALL {
            assert_eq!(Signal::from_number(s.number()), Some(s));
        }
        assert_eq!(Signal::from_number(0), None);
    }
}
