//! Ctrl-C handling: a process-wide flag plus a registry of child process groups to stop.
//!
//! The handler never tears services down itself (Drop guards do that on the main thread); it
//! forwards the signal to registered children so blocking waits return, then sets the flag that
//! every wait loop polls.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static CHILDREN: OnceLock<Mutex<BTreeSet<i32>>> = OnceLock::new();

fn children() -> &'static Mutex<BTreeSet<i32>> {
    CHILDREN.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// Installs the Ctrl-C / SIGTERM handler once; later calls are no-ops.
pub fn install() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let _ = ctrlc::set_handler(|| {
            INTERRUPTED.store(true, Ordering::SeqCst);
            if let Ok(set) = children().lock() {
                for pid in set.iter() {
                    // SAFETY: kill(2) with a pid we spawned; failure (already gone) is harmless.
                    unsafe {
                        libc::kill(*pid, libc::SIGINT);
                    }
                }
            }
        });
    });
}

/// True once Ctrl-C (or SIGTERM) was received.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Returns an error when interrupted, so loops can `?` out and let Drop guards clean up.
pub fn check() -> anyhow::Result<()> {
    if interrupted() {
        anyhow::bail!(
            "interrupted by Ctrl-C: services and children were stopped, results so far are kept"
        );
    }
    Ok(())
}

/// Registers a child pid (a process-group leader when negative) to be signalled on Ctrl-C.
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
