//! Sleeps that end a fraction of a millisecond after their deadline (`make bench` measures how
//! late; docs/defaults.md, "Timer precision"), for the mock server's delays and the delay line's
//! releases.
//!
//! tokio's timer wheel rounds every deadline up to its next 1 ms tick, and the runtime's
//! `epoll_wait` timeout is whole milliseconds again, so `tokio::time::sleep(100 ms)` ends up to
//! 2 ms late. This timer keeps the deadlines in a heap served by one
//! thread of its own, which waits on a condition variable with a nanosecond timeout (a futex
//! backed by an hrtimer, with the thread's timer slack cut to 1 ns) and wakes each task when its
//! deadline passes. Nothing spins: a thousand sleeping connections cost one sleeping thread.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A waiting task: woken once `deadline` has passed.
struct Entry {
    deadline: Instant,
    /// Insertion order, so equal deadlines keep their order (and `Ord` needs no waker).
    seq: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.deadline, self.seq) == (other.deadline, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.deadline, self.seq).cmp(&(other.deadline, other.seq))
    }
}

/// The deadlines not yet due, earliest first.
#[derive(Default)]
struct Queue {
    heap: BinaryHeap<Reverse<Entry>>,
    next_seq: u64,
}

/// The shared timer: its queue and the condition variable its thread waits on.
struct Timer {
    queue: Mutex<Queue>,
    changed: Condvar,
}

/// The process's timer, its thread started on first use.
fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let t: &'static Timer = Box::leak(Box::new(Timer {
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("precise-timer".into())
            .spawn(move || run(t))
            .expect("cannot start the precise timer thread");
        t
    })
}

/// The timer thread: wakes every due task, then waits until the earliest deadline or a new,
/// earlier one.
fn run(t: &'static Timer) {
    // SAFETY: prctl with PR_SET_TIMERSLACK only changes this thread's timer slack (default
    // 50 µs, by which the kernel may defer our wake-ups to batch them).
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let mut due = Vec::new();
    let mut q = t.queue.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = Instant::now();
        while q.heap.peek().is_some_and(|Reverse(e)| e.deadline <= now) {
            if let Some(Reverse(e)) = q.heap.pop() {
                due.push(e.waker);
            }
        }
        if !due.is_empty() {
            drop(q);
            for w in due.drain(..) {
                w.wake();
            }
            q = t.queue.lock().unwrap_or_else(|e| e.into_inner());
            continue;
        }
        q = match q.heap.peek() {
            None => t.changed.wait(q).unwrap_or_else(|e| e.into_inner()),
            Some(Reverse(e)) => {
                let wait = e.deadline.saturating_duration_since(now);
                t.changed
                    .wait_timeout(q, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
        };
    }
}

/// A future that completes once `deadline` has passed (never early).
pub struct PreciseSleep {
    deadline: Instant,
    /// The waker last handed to the timer, so a re-poll with the same one adds nothing.
    registered: Option<Waker>,
}

/// Sleeps until `deadline`, ending a fraction of a millisecond after it.
pub fn sleep_until(deadline: Instant) -> PreciseSleep {
    PreciseSleep {
        deadline,
        registered: None,
    }
}

/// Sleeps for `d`, ending a fraction of a millisecond after it.
pub fn sleep(d: Duration) -> PreciseSleep {
    sleep_until(Instant::now() + d)
}

impl Future for PreciseSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return Poll::Pending;
        }
        let t = timer();
        let mut q = t.queue.lock().unwrap_or_else(|e| e.into_inner());
        let earliest = q.heap.peek().map(|Reverse(e)| e.deadline);
        let seq = q.next_seq;
        q.next_seq += 1;
        q.heap.push(Reverse(Entry {
            deadline: self.deadline,
            seq,
            waker: cx.waker().clone(),
        }));
        drop(q);
        if earliest.is_none_or(|e| self.deadline < e) {
            t.changed.notify_one();
        }
        self.registered = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Width of a [`Lateness`] bucket.
const BUCKET: Duration = Duration::from_micros(10);
/// Buckets of a [`Lateness`]: 10 µs each up to 20 ms; the last also holds anything later.
const BUCKETS: usize = 2000;

/// How late sleeps ended (their end minus their deadline), in 10 µs buckets: what a server
/// that sleeps on this timer records, so its own precision can be read apart from its
/// clients' scheduling. Fixed size, lock-free, so recording costs one atomic add.
pub struct Lateness {
    buckets: Vec<std::sync::atomic::AtomicU64>,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            buckets: (0..BUCKETS).map(|_| Default::default()).collect(),
        }
    }
}

impl std::fmt::Debug for Lateness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lateness({} sleeps)", self.count())
    }
}

impl Lateness {
    /// Records one sleep that ended `late` after its deadline.
    pub fn record(&self, late: Duration) {
        let i = (late.as_nanos() / BUCKET.as_nanos()).min(BUCKETS as u128 - 1) as usize;
        self.buckets[i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Sleeps recorded.
    pub fn count(&self) -> u64 {
        self.counts().iter().sum()
    }

    fn counts(&self) -> Vec<u64> {
        let relaxed = std::sync::atomic::Ordering::Relaxed;
        self.buckets.iter().map(|b| b.load(relaxed)).collect()
    }

    /// The `p`th percentile (nearest rank) as its bucket's upper edge, in ms (an overstatement
    /// of at most 10 µs); NaN when nothing was recorded.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        let counts = self.counts();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return f64::NAN;
        }
        let rank = ((p / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (i, c) in counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return BUCKET.as_secs_f64() * 1e3 * (i + 1) as f64;
            }
        }
        unreachable!("the ranks add up to the total")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_percentiles_are_bucket_upper_edges() {
        let l = Lateness::default();
        assert!(l.percentile_ms(50.0).is_nan());
        for us in [5, 15, 25, 35] {
            l.record(Duration::from_micros(us));
        }
        l.record(Duration::from_secs(1)); // beyond the last bucket: kept there
        assert_eq!(l.count(), 5);
        assert!((l.percentile_ms(40.0) - 0.02).abs() < 1e-9);
        assert!((l.percentile_ms(100.0) - 20.0).abs() < 1e-9);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn never_early_and_in_deadline_order() {
        let start = Instant::now();
        let mut tasks = Vec::new();
        for ms in [30u64, 10, 20, 10, 0] {
            let deadline = start + Duration::from_millis(ms);
            tasks.push(tokio::spawn(async move {
                sleep_until(deadline).await;
                (ms, Instant::now() >= deadline)
            }));
        }
        for t in tasks {
            let (ms, on_time) = t.await.unwrap();
            assert!(on_time, "the {ms} ms sleep ended early");
        }
        // A later, then an earlier deadline: the earlier one must not wait for the later.
        let late = tokio::spawn(sleep(Duration::from_secs(5)));
        let t0 = Instant::now();
        sleep(Duration::from_millis(5)).await;
        assert!(t0.elapsed() < Duration::from_secs(4));
        late.abort();
    }
}
