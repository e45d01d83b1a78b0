//! Idle CPUs that wake in microseconds: a PM QoS request of 0 µs CPU wake-up latency, held
//! through `/dev/cpu_dma_latency` while the lab's own timers (the mock server's delays, the
//! delay line's releases) must be precise.
//!
//! On a VM an idle vCPU halts, and waking it costs a trip through the hypervisor, which makes
//! every timed release late. With the request held, the kernel keeps idle CPUs in their polling
//! state, so a wake-up is a cache line, not a VM exit (`make bench` measures both; docs/defaults.md,
//! "Timer precision", has one machine's figures). Polling idle runs only when nothing else is
//! runnable, so it takes no CPU from a worker. This is what cyclictest does; the request lasts
//! while the file stays open, so it ends with the process, however that ends.

use std::fs::File;
use std::io::Write;

/// Where the kernel takes CPU wake-up latency requests.
pub const DEVICE: &str = "/dev/cpu_dma_latency";

/// A held request (released when dropped), or why none could be made.
pub struct WakeHold {
    file: Option<File>,
    /// What is in force, for the report: held, or why not.
    pub detail: String,
}

impl WakeHold {
    /// Asks for 0 µs wake-up latency; never fails: where the device is missing or not
    /// writable (not root), the hold is absent and `detail` says why.
    pub fn acquire() -> WakeHold {
        let opened = File::options().write(true).open(DEVICE).and_then(|mut f| {
            f.write_all(&0i32.to_ne_bytes())?;
            Ok(f)
        });
        match opened {
            Ok(file) => WakeHold {
                file: Some(file),
                detail: format!("held at 0 µs through {DEVICE}: idle CPUs poll instead of halting"),
            },
            Err(e) => WakeHold {
                file: None,
                detail: format!(
                    "not held ({DEVICE}: {e}): idle CPUs may halt, and timers wake later"
                ),
            },
        }
    }

    /// No request: the machine's own idle policy (`--no-wake-hold`, or nothing timed here).
    pub fn none(why: &str) -> WakeHold {
        WakeHold {
            file: None,
            detail: format!("not held ({why})"),
        }
    }

    /// Whether the request is in force.
    pub fn held(&self) -> bool {
        self.file.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_says_what_is_in_force() {
        let hold = WakeHold::acquire();
        assert_eq!(
            hold.held(),
            hold.detail.starts_with("held at 0 µs"),
            "{}",
            hold.detail
        );
        let none = WakeHold::none("--no-wake-hold");
        assert!(!none.held() && none.detail == "not held (--no-wake-hold)");
    }
}
