//! Held connections: N keep-alive connections opened to a server, each proven by one answered
//! request, then held idle. A connection counts as held while the server has not closed it,
//! which is read from the client's side without sending anything.
//!
//! Opening is bounded twice. At most [`OPENING`] connections are being opened at once (the
//! handshake and the first request with its answer), so what the server's memory grows by is
//! what it keeps per idle connection, not what many requests in flight at once left behind
//! (a threaded server's per-thread allocator arenas, say). And opening as a whole gets a
//! deadline, so a server that stops answering new connections (one at its own connection limit,
//! the rest waiting in the kernel's queue) costs that deadline, not one timeout per connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{checked_request, connect, http1::Request, Load, Sender, ERROR_SAMPLES};

/// Connections being opened at once.
pub const OPENING: usize = 16;

/// What opening the connections gave.
#[derive(Default)]
pub struct Held {
    /// One slot per connection asked for; `None` where it was refused, reset, answered wrongly
    /// or not at all within the request timeout.
    pub senders: Vec<Option<Sender>>,
    /// Connections whose first request failed.
    pub failed: usize,
    /// The first failures' messages.
    pub error_samples: Vec<String>,
    /// How long opening took.
    pub elapsed: Duration,
}

impl Held {
    /// Connections the server has not closed.
    pub fn open(&self) -> usize {
        open_count(&self.senders)
    }
}

/// Connections in `senders` the server has not closed.
pub fn open_count(senders: &[Option<Sender>]) -> usize {
    senders
        .iter()
        .filter(|s| s.as_ref().is_some_and(|s| !s.is_closed()))
        .count()
}

/// Opens `n` connections to `load.addr`, each with one request of `load.endpoint` answered and
/// checked within `load.timeout`, on the current tokio runtime; a connection not open by
/// `deadline` after the start counts as failed (a server whose accept queue is full leaves
/// handshakes to the kernel's SYN retries, seconds each).
pub async fn open(load: &Load, n: usize, deadline: Duration) -> Held {
    let t0 = Instant::now();
    let until = tokio::time::Instant::from_std(t0 + deadline);
    let gate = Arc::new(tokio::sync::Semaphore::new(OPENING));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let load = load.clone();
        let gate = gate.clone();
        tasks.spawn(async move {
            let opened = tokio::time::timeout_at(until, open_one(&load, load.addr, &gate)).await;
            (
                i,
                opened.unwrap_or_else(|_| {
                    Err(format!(
                        "not open within the {:.0} s given to opening",
                        deadline.as_secs_f64()
                    ))
                }),
            )
        });
    }
    let mut held = Held {
        senders: (0..n).map(|_| None).collect(),
        ..Held::default()
    };
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok((i, Ok(s))) => held.senders[i] = Some(s),
            Ok((_, Err(m))) => held.fail(m),
            Err(e) => held.fail(format!("open task failed: {e}")),
        }
    }
    held.elapsed = t0.elapsed();
    held
}

impl Held {
    fn fail(&mut self, message: String) {
        self.failed += 1;
        if self.error_samples.len() < ERROR_SAMPLES {
            self.error_samples.push(message);
        }
    }
}

async fn open_one(
    load: &Load,
    addr: SocketAddr,
    gate: &tokio::sync::Semaphore,
) -> Result<Sender, String> {
    let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
    let sender = match tokio::time::timeout(load.timeout, connect(addr)).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(format!(
                "connect {addr}: no handshake within {:.1} s",
                load.timeout.as_secs_f64()
            ))
        }
    };
    let mut slot = Some(sender);
    let mut connects = 0;
    let req = Request::get(addr, &load.endpoint.path());
    match tokio::time::timeout(
        load.timeout,
        checked_request(&req, load, &mut slot, &mut connects),
    )
    .await
    {
        Ok(r) => r?,
        Err(_) => {
            return Err(format!(
                "timeout: no answer within {:.1} s",
                load.timeout.as_secs_f64()
            ))
        }
    }
    slot.ok_or_else(|| "the connection was lost".to_string())
}

/// Reorders `senders` so that the first `used` slots are spread evenly over the whole set
/// (slot k takes connection k·n/used), the rest following in order: a trickle that uses the
/// first `used` slots then samples every part of the opening order, not only its start.
pub fn spread<T>(senders: Vec<T>, used: usize) -> Vec<T> {
    let n = senders.len();
    if used == 0 || used >= n {
        return senders;
    }
    let picked: Vec<usize> = (0..used).map(|k| k * n / used).collect();
    let mut slots: Vec<Option<T>> = senders.into_iter().map(Some).collect();
    let mut out: Vec<T> = picked
        .iter()
        .map(|&i| slots[i].take().expect("picked once"))
        .collect();
    out.extend(slots.into_iter().flatten());
    out
}

/// Descriptors a generator needs besides one per held connection (its own files, the
/// warm-up's and the trickle's extra connections).
pub const SPARE_FILES: u64 = 256;

/// Refuses `n` held connections this machine cannot give one process: more open files than
/// the hard limit allows, or more than the loopback's ephemeral ports. One line naming the
/// limit and the fix.
pub fn check_limits(param: &str, n: usize) -> Result<(), String> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the one struct passed.
    let files = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0 {
        r.rlim_max
    } else {
        libc::RLIM_INFINITY
    };
    let need = n as u64 + SPARE_FILES;
    if files != libc::RLIM_INFINITY && need > files {
        return Err(format!(
            "{param} = {n} needs {need} open files and this machine's hard limit is {files}: give fewer, or raise the limit (`ulimit -Hn {need}` as root, or LimitNOFILE= for a service)"
        ));
    }
    if let Some((low, high)) = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            let mut it = s.split_whitespace().map(|x| x.parse::<usize>().ok());
            Some((it.next()??, it.next()??))
        })
    {
        let ports = high.saturating_sub(low) + 1;
        if n > ports {
            return Err(format!(
                "{param} = {n} connections to one address need {n} local ports and this machine has {ports} ({low}-{high}): give fewer, or widen net.ipv4.ip_local_port_range"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_takes_evenly_spaced_slots_first_and_keeps_every_one() {
        let order = |n: usize, used: usize| spread((0..n).collect::<Vec<usize>>(), used);
        assert_eq!(order(10, 5), [0, 2, 4, 6, 8, 1, 3, 5, 7, 9]);
        assert_eq!(order(10, 3), [0, 3, 6, 1, 2, 4, 5, 7, 8, 9]);
        assert_eq!(order(4, 4), [0, 1, 2, 3]);
        assert_eq!(order(4, 9), [0, 1, 2, 3]);
        let mut all = order(10_000, 500);
        all.sort();
        assert_eq!(all, (0..10_000).collect::<Vec<_>>());
    }

    #[test]
    fn limits_refuse_what_the_machine_cannot_hold_with_the_fix() {
        assert_eq!(check_limits("hold", 100), Ok(()));
        let err = check_limits("hold", 10_000_000).unwrap_err();
        assert!(
            err.contains("hold = 10000000") && (err.contains("ulimit") || err.contains("ports")),
            "{err}"
        );
    }
}
