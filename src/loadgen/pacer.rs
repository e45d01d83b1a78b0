//! The open-loop schedule's clock: one `timerfd` in the generator's own event loop, armed for
//! the earliest deadline not yet due.
//!
//! Mechanism: the timer is a kernel hrtimer behind a file descriptor that tokio's epoll watches
//! like any socket, so a deadline wakes the runtime's own thread (no other thread, no futex, no
//! cross-thread queue) and the pacer task runs on it. Deadlines are absolute on
//! `CLOCK_MONOTONIC`, the clock `std::time::Instant` reads, so no arming drifts; timerfd's
//! hrtimer has no timer slack, and a deadline already past does not wait at all. One wake
//! releases every request due by then, so deadlines that coincide cost one wake.

use std::io;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use rustix::time::{
    clock_gettime, timerfd_create, timerfd_settime, ClockId, Itimerspec, TimerfdClockId,
    TimerfdFlags, TimerfdTimerFlags, Timespec,
};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A timer that wakes its task at absolute instants.
pub struct Pacer {
    fd: AsyncFd<OwnedFd>,
    /// An instant and the same instant on `CLOCK_MONOTONIC`, read back to back: deadlines are
    /// converted through it.
    origin: Instant,
    origin_ts: Duration,
}

impl Pacer {
    /// A timer on the current tokio runtime.
    pub fn new() -> io::Result<Pacer> {
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        // SAFETY: the AsyncFd owns the OwnedFd, which stays open and is the same descriptor
        // until the AsyncFd is dropped.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        let origin = Instant::now();
        let ts = clock_gettime(ClockId::Monotonic);
        Ok(Pacer {
            fd,
            origin,
            origin_ts: Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32),
        })
    }

    /// Returns once `at` has passed (at once when it has).
    pub async fn until(&mut self, at: Instant) -> io::Result<()> {
        if Instant::now() >= at {
            return Ok(());
        }
        let abs = self.origin_ts + at.saturating_duration_since(self.origin);
        let spec = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: Timespec {
                tv_sec: abs.as_secs() as _,
                tv_nsec: abs.subsec_nanos() as _,
            },
        };
        timerfd_settime(self.fd.get_ref(), TimerfdTimerFlags::ABSTIME, &spec)?;
        loop {
            let mut ready = self.fd.readable().await?;
            let mut expirations = [0u8; 8];
            let read = rustix::io::read(self.fd.get_ref(), &mut expirations);
            // Read or not, the timer has nothing more to say until it is armed again: clearing
            // the readiness here spares the next wait a read that would find nothing.
            ready.clear_ready();
            match read {
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::AGAIN) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_deadline_is_kept_and_a_past_one_does_not_wait() {
        let mut p = Pacer::new().unwrap();
        let start = Instant::now();
        for k in 1..=20u32 {
            let at = start + Duration::from_millis(2) * k;
            p.until(at).await.unwrap();
            assert!(Instant::now() >= at, "woken before deadline {k}");
        }
        let past = Instant::now() - Duration::from_secs(1);
        let t = Instant::now();
        p.until(past).await.unwrap();
        assert!(t.elapsed() < Duration::from_millis(50));
    }
}
