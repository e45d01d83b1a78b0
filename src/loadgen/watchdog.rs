//! Request timeouts without a timer per request: each connection posts when its request went
//! out, and one watchdog task looks over all of them every [`Watchdog::period`], cutting short
//! the requests past the timeout.
//!
//! Mechanism: a request's number and send time sit in its connection's [`Slot`]; the watchdog
//! names an overdue one by storing its number in `cut` and waking the slot's waiters, and the
//! request, waiting on its answer and on that wake at once, fails as a timeout when the number
//! is its own. A number, not a flag: a wake meant for a request that has just ended finds the
//! next request's number in the slot and is ignored. A request is cut between `timeout` and
//! `timeout + period` after it went out.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// One connection's request in flight, as the watchdog sees it.
#[derive(Default)]
pub struct Slot {
    /// The request in flight's number (from 1); 0: none.
    in_flight: AtomicU64,
    /// When it went out, ns after the watchdog's start.
    since_ns: AtomicU64,
    /// The number of the request the watchdog cut.
    cut: AtomicU64,
    wake: Notify,
}

impl Slot {
    /// Runs `work` as request `seq` sent `sent_ns` after the watchdog's start: its result, or
    /// `None` when the watchdog cut it.
    pub async fn guard<T>(
        &self,
        seq: u64,
        sent_ns: u64,
        work: impl std::future::Future<Output = T>,
    ) -> Option<T> {
        self.since_ns.store(sent_ns, Ordering::Release);
        self.in_flight.store(seq, Ordering::Release);
        let out = tokio::select! {
            biased;
            r = work => Some(r),
            () = self.cut(seq) => None,
        };
        self.in_flight.store(0, Ordering::Release);
        out
    }

    async fn cut(&self, seq: u64) {
        loop {
            let woken = self.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.cut.load(Ordering::Acquire) == seq {
                return;
            }
            woken.await;
        }
    }
}

/// The slots of a load's connections and the timeout they are held to.
pub struct Watchdog {
    pub slots: Vec<Arc<Slot>>,
    timeout_ns: u64,
    start: Instant,
}

impl Watchdog {
    /// `n` slots, their requests held to `timeout`; send times count from `start`.
    pub fn new(n: usize, timeout: Duration, start: Instant) -> Watchdog {
        Watchdog {
            slots: (0..n).map(|_| Arc::new(Slot::default())).collect(),
            timeout_ns: timeout.as_nanos() as u64,
            start,
        }
    }

    /// How often it looks: a tenth of the timeout, between 1 ms and 100 ms.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.timeout_ns / 10)
            .clamp(Duration::from_millis(1), Duration::from_millis(100))
    }

    /// Looks every period until dropped (run it as a task and abort it when the load ends).
    pub async fn watch(self) {
        let mut tick = tokio::time::interval(self.period());
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let now_ns = self.start.elapsed().as_nanos() as u64;
            for s in &self.slots {
                let seq = s.in_flight.load(Ordering::Acquire);
                if seq != 0
                    && now_ns.saturating_sub(s.since_ns.load(Ordering::Acquire)) >= self.timeout_ns
                    && s.cut.load(Ordering::Acquire) != seq
                {
                    s.cut.store(seq, Ordering::Release);
                    s.wake.notify_waiters();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_overdue_request_is_cut_and_a_prompt_one_is_not() {
        let start = Instant::now();
        let dog = Watchdog::new(2, Duration::from_millis(50), start);
        let (a, b) = (dog.slots[0].clone(), dog.slots[1].clone());
        let watching = tokio::spawn(dog.watch());
        let slow = a.guard(1, 0, tokio::time::sleep(Duration::from_secs(5)));
        let prompt = b.guard(1, 0, async { 7 });
        let (slow, prompt) = tokio::join!(slow, prompt);
        assert_eq!((slow, prompt), (None, Some(7)));
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(50) && took < Duration::from_secs(2),
            "{took:?}"
        );
        // The slot's next request is not cut by the last one's number.
        let next_ns = start.elapsed().as_nanos() as u64;
        assert_eq!(a.guard(2, next_ns, async { 1 }).await, Some(1));
        watching.abort();
    }
}
