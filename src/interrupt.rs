//! SIGINT (Ctrl-C), SIGTERM and SIGHUP handling: which signal arrived, plus a registry of child
//! process groups to stop.
//!
//! The handler never tears services down itself (Drop guards do that on the main thread). In
//! signal context it only records the signal (the first one wins) and wakes a forwarding thread
//! through a pipe; that thread sends SIGINT to every registered child, so blocking waits return
//! (SIGINT for both signals: postgres takes it as a fast shutdown, where SIGTERM would wait for
//! its clients to leave). Every wait loop polls [`interrupted`], and the error from [`check`]
//! names the signal; `main` exits with [`Signal::exit_code`] (130, 143 or 129).
//!
//! The handlers are registered through `signal-hook-registry`, the registry tokio's signal
//! streams use too, so a later `tokio::signal` listener (the standalone mock server's) and these
//! handlers both see the signal.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};

/// The first termination signal received (its number), 0 while none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// Write end of the pipe that wakes the forwarding thread, -1 until installed.
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
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
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fds[0] is fresh and owned by nobody else; fds[1] stays open for the process's life
    // (the handler may write to it at any time).
    let read_end = unsafe { OwnedFd::from_raw_fd(fds[0]) };
    // The write end is non-blocking so the handler never blocks (should the pipe ever fill, the
    // thread has wake-ups pending anyway); reads block.
    // SAFETY: fcntl on a descriptor we own.
    if unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    WAKE_FD.store(fds[1], Ordering::SeqCst);
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || forward(read_end))?;
    for signal in Signal::ALL {
        let number = signal.number();
        // SAFETY: the action only does async-signal-safe things: atomics, and write(2) to a
        // pipe with errno saved and restored around it.
        unsafe { signal_hook_registry::register(number, move || on_signal(number)) }?;
    }
    Ok(())
}

/// The signal-context part: record the signal, wake the forwarding thread.
fn on_signal(number: i32) {
    // SAFETY: errno is thread-local; reading and restoring it is what a handler must do.
    let errno = unsafe { *libc::__errno_location() };
    let _ = RECEIVED.compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst);
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = number as u8;
        // SAFETY: write(2) is async-signal-safe; `byte` outlives the call. A full pipe (EAGAIN)
        // is fine: the thread already has a wake-up to read.
        unsafe {
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
    // SAFETY: as above.
    unsafe {
        *libc::__errno_location() = errno;
    }
}

/// The forwarding thread: on every signal, SIGINT to each registered child (again on a second
/// signal, for a child that ignored the first).
fn forward(read_end: OwnedFd) {
    let mut pipe = std::fs::File::from(read_end);
    let mut byte = [0u8; 1];
    while let Ok(1) = pipe.read(&mut byte) {
        if let Ok(set) = children().lock() {
            for pid in set.iter() {
                // SAFETY: kill(2) with a pid we spawned; failure (already gone) is harmless.
                unsafe {
                    libc::kill(*pid, libc::SIGINT);
                }
            }
        }
    }
}

/// The first of SIGINT, SIGTERM and SIGHUP received, `None` while there was none.
pub fn received() -> Option<Signal> {
    Signal::from_number(RECEIVED.load(Ordering::SeqCst))
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
