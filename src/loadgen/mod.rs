//! The lab's own HTTP load generator: requests on a fixed schedule over N keep-alive
//! connections (open loop, wrk2's rule), or back to back on each connection (closed loop, ab's).
//!
//! Open loop: request i is intended at `t0 + i / rate` whatever happened to the ones before
//! it, and goes out on connection `i mod N`. A connection carries one request at a time
//! (HTTP/1.1 without pipelining), so a request whose connection is still busy waits for it:
//! its latency from the intended start (corrected) counts that wait, its latency from the
//! actual send (uncorrected) does not, which is what a closed-loop client reports of a stalled
//! server ("coordinated omission"). A saturated server would take `count / capacity` to get
//! through the schedule, so nothing is sent once twice the duration has passed since t0:
//! such requests are `abandoned` (counted, never sent).
//!
//! A server that closes the connection after a response (gunicorn's sync workers do) is
//! reconnected to for the next request, inside that request's latency, as a real client would
//! be. Each response is checked ([`check::Endpoint`]); a wrong answer, a non-2xx status, a
//! timeout or a refused connection is an error, counted and never timed.
//!
//! Everything runs on the caller's tokio runtime, one thread in the service cells: the
//! schedule's deadlines are a `timerfd` in its event loop ([`pacer`]), timeouts are one
//! watchdog task's ([`watchdog`]), and requests go over the generator's own HTTP/1.1 client
//! ([`http1`]), so a request costs no wake from another thread and no timer of its own.

pub mod check;
pub mod fanout;
pub mod hold;
pub mod http1;
pub mod pacer;
pub mod selfcheck;
pub mod slow;
pub mod watchdog;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http1::Request;
use pacer::Pacer;
use watchdog::{Slot, Watchdog};

pub use check::Endpoint;

/// Failures whose message is kept, as the workers' `error_samples` are.
const ERROR_SAMPLES: usize = 5;

/// What to send, how often and over how many connections.
#[derive(Debug, Clone)]
pub struct Load {
    /// The server's address.
    pub addr: SocketAddr,
    /// What every request asks for (its path) and how its answer is checked.
    pub endpoint: Endpoint,
    /// Keep-alive connections.
    pub connections: usize,
    /// Requests per second offered; 0: closed loop (each connection sends back to back).
    pub rate_per_s: f64,
    /// How long the schedule (or the closed loop) lasts.
    pub duration: Duration,
    /// A request with no answer by then is an error.
    pub timeout: Duration,
}

impl Load {
    /// Requests the open-loop schedule holds (0 for a closed loop).
    pub fn scheduled(&self) -> usize {
        if self.rate_per_s > 0.0 {
            (self.rate_per_s * self.duration.as_secs_f64())
                .round()
                .max(1.0) as usize
        } else {
            0
        }
    }
}

/// One request that was answered correctly.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Its intended start (open loop) or its send (closed loop), ns after t0.
    pub intended_ns: u64,
    /// When it went out, ns after t0.
    pub sent_ns: u64,
    /// When its answer was read whole and checked, ns after t0.
    pub done_ns: u64,
}

impl Sample {
    /// Latency from the intended start, ms (corrected; equal to [`Sample::service_ms`] in a
    /// closed loop).
    pub fn corrected_ms(&self) -> f64 {
        (self.done_ns - self.intended_ns) as f64 / 1e6
    }

    /// Latency from the actual send, ms.
    pub fn service_ms(&self) -> f64 {
        (self.done_ns - self.sent_ns) as f64 / 1e6
    }
}

/// What a load run saw.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Answered correctly, in schedule order (closed loop: by connection, then send).
    pub samples: Vec<Sample>,
    /// Failed requests (status, wrong answer, timeout, connection).
    pub errors: usize,
    /// The first failures' messages.
    pub error_samples: Vec<String>,
    /// Requests of the schedule never sent (the server could not keep up).
    pub abandoned: usize,
    /// Requests sent (answered or failed).
    pub sent: usize,
    /// ns after t0 of the last send.
    pub last_send_ns: u64,
    /// The largest gap between a request's send and its intended start, ms.
    pub max_start_lag_ms: f64,
    /// Connections opened (more than `connections` when the server closed some).
    pub connects: usize,
    /// Wall time from t0 to the last answer.
    pub elapsed: Duration,
}

impl Outcome {
    /// Requests sent per second: those sent over the span from t0 to the last send plus one
    /// interval, which equals the offered rate exactly when every request went out on time
    /// (`workloads/openloop.py` defines it the same way). Closed loop: sent over the elapsed time.
    pub fn achieved_rate_per_s(&self, load: &Load) -> f64 {
        if load.rate_per_s > 0.0 {
            let span = self.last_send_ns as f64 / 1e9 + 1.0 / load.rate_per_s;
            self.sent as f64 / span
        } else {
            self.sent as f64 / self.elapsed.as_secs_f64().max(1e-9)
        }
    }

    fn absorb(&mut self, c: ConnOutcome) {
        self.samples.extend(c.samples.into_iter().map(|(_, s)| s));
        self.errors += c.errors;
        for m in c.error_samples {
            if self.error_samples.len() < ERROR_SAMPLES {
                self.error_samples.push(m);
            }
        }
        self.abandoned += c.abandoned;
        self.sent += c.sent;
        self.last_send_ns = self.last_send_ns.max(c.last_send_ns);
        self.max_start_lag_ms = self.max_start_lag_ms.max(c.max_start_lag_ms);
        self.connects += c.connects;
    }
}

/// A keep-alive connection; it closes when dropped.
pub type Sender = http1::Conn;

/// One connection's share.
#[derive(Default)]
struct ConnOutcome {
    /// (schedule index, sample).
    samples: Vec<(usize, Sample)>,
    errors: usize,
    error_samples: Vec<String>,
    abandoned: usize,
    sent: usize,
    last_send_ns: u64,
    max_start_lag_ms: f64,
    connects: usize,
    /// The connection as the share left it (None: never opened, or failed).
    sender: Option<Sender>,
}

impl ConnOutcome {
    fn fail(&mut self, message: String) {
        self.errors += 1;
        if self.error_samples.len() < ERROR_SAMPLES {
            self.error_samples.push(message);
        }
    }
}

/// Runs `load` on the current tokio runtime over connections it opens, and returns what it saw.
pub async fn run(load: &Load) -> Outcome {
    run_over(load, Vec::new()).await.0
}

/// Runs `load` starting from the connections given (connection `c` of the load starts on
/// `open[c]`; missing or `None`: opened on its first request) and hands every connection back
/// as the load left it, so a caller holding them keeps them open.
pub async fn run_over(load: &Load, open: Vec<Option<Sender>>) -> (Outcome, Vec<Option<Sender>>) {
    let n = load.connections.max(1);
    let mut out = Outcome::default();
    let pacer = if load.rate_per_s > 0.0 {
        match Pacer::new() {
            Ok(p) => Some(p),
            Err(e) => {
                out.errors = load.scheduled();
                out.error_samples.push(format!("the schedule's timer: {e}"));
                return (out, open);
            }
        }
    } else {
        None
    };
    let t0 = Instant::now();
    let req = Request::get(load.addr, &load.endpoint.path());
    let dog = Watchdog::new(n, load.timeout, t0);
    let mut open = open.into_iter();
    let mut tasks = tokio::task::JoinSet::new();
    let mut releases = Vec::with_capacity(n);
    for c in 0..n {
        let released = pacer.is_some().then(|| {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            releases.push(tx);
            rx
        });
        let share = Share {
            load: load.clone(),
            req: req.clone(),
            slot: dog.slots[c].clone(),
            c,
            t0,
            released,
        };
        let start = open.next().flatten();
        tasks.spawn(async move { (c, share.run(start).await) });
    }
    let watching = tokio::spawn(dog.watch());
    let pacing = async {
        match pacer {
            Some(p) => pace(p, load, t0, releases).await,
            None => Ok(()),
        }
    };
    let collecting = async {
        let mut indexed = Vec::new();
        let mut senders: Vec<Option<Sender>> = (0..n).map(|_| None).collect();
        let mut got = Outcome::default();
        while let Some(r) = tasks.join_next().await {
            let mut c = match r {
                Ok((i, mut c)) => {
                    senders[i] = c.sender.take();
                    c
                }
                Err(e) => {
                    let mut c = ConnOutcome::default();
                    c.fail(format!("load task failed: {e}"));
                    c
                }
            };
            indexed.append(&mut c.samples);
            got.absorb(c);
        }
        (got, indexed, senders)
    };
    let (paced, (got, mut indexed, senders)) = tokio::join!(pacing, collecting);
    watching.abort();
    out = got;
    if let Err((unreleased, why)) = paced {
        out.errors += unreleased;
        out.error_samples.insert(0, why);
        out.error_samples.truncate(ERROR_SAMPLES);
    }
    out.elapsed = t0.elapsed();
    indexed.sort_by_key(|(i, _)| *i);
    out.samples = indexed.into_iter().map(|(_, s)| s).collect();
    (out, senders)
}

/// Request `i`'s intended start.
fn intended(t0: Instant, i: usize, rate_per_s: f64) -> Instant {
    t0 + Duration::from_secs_f64(i as f64 / rate_per_s)
}

/// How late a request may go out so that it shares a wake with the next ones: on this kind of
/// VM a wake costs a few µs of CPU on each end, so above 1/BATCH requests per second a wake for
/// each deadline would cost more than the lab's generator measures. Below that rate no two
/// deadlines share a wake and none is late by design; above it none is later than this. The
/// lateness is inside the corrected latency, which counts from the intended start.
const BATCH: Duration = Duration::from_micros(100);

/// The schedule: request `i` is released to connection `i mod n` once its intended start has
/// passed, every request due at a wake in that wake (see [`BATCH`]). On a failed timer: the
/// requests it did not release and why.
async fn pace(
    mut pacer: Pacer,
    load: &Load,
    t0: Instant,
    releases: Vec<tokio::sync::mpsc::UnboundedSender<usize>>,
) -> Result<(), (usize, String)> {
    let total = load.scheduled();
    let n = releases.len();
    let mut i = 0;
    while i < total {
        // The deadlines within BATCH of this one share its wake, at the last of them.
        let first = intended(t0, i, load.rate_per_s);
        let mut last = i;
        while last + 1 < total && intended(t0, last + 1, load.rate_per_s) <= first + BATCH {
            last += 1;
        }
        if let Err(e) = pacer.until(intended(t0, last, load.rate_per_s)).await {
            return Err((total - i, format!("the schedule's timer: {e}")));
        }
        let now = Instant::now();
        while i < total && intended(t0, i, load.rate_per_s) <= now {
            // A connection's task ends only once its releases are closed: this cannot fail.
            let _ = releases[i % n].send(i);
            i += 1;
        }
    }
    Ok(())
}

fn ns_since(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

/// One connection's part of a load.
struct Share {
    load: Load,
    req: Request,
    slot: Arc<Slot>,
    c: usize,
    t0: Instant,
    /// Open loop: the schedule's requests released to it, by index; closed loop: none.
    released: Option<tokio::sync::mpsc::UnboundedReceiver<usize>>,
}

impl Share {
    /// Its requests: those the schedule releases to it, or back to back until the duration
    /// has passed.
    async fn run(mut self, start: Option<Sender>) -> ConnOutcome {
        let load = &self.load;
        let mut out = ConnOutcome::default();
        let mut conn = start;
        let give_up = self.t0 + 2 * load.duration;
        let n = load.connections.max(1);
        let mut closed_index = self.c;
        let mut seq = 0u64;
        loop {
            let (index, intended_ns) = match &mut self.released {
                Some(rx) => {
                    let Some(i) = rx.recv().await else { break };
                    if Instant::now() >= give_up {
                        out.abandoned += 1;
                        continue;
                    }
                    let at = intended(self.t0, i, load.rate_per_s);
                    (
                        i,
                        Some(at.saturating_duration_since(self.t0).as_nanos() as u64),
                    )
                }
                None => {
                    if self.t0.elapsed() >= load.duration {
                        break;
                    }
                    closed_index += n;
                    (closed_index - n, None)
                }
            };
            let sent_ns = ns_since(self.t0);
            // Closed loop: a request is intended when it is sent.
            let intended_ns = intended_ns.unwrap_or(sent_ns);
            out.sent += 1;
            out.last_send_ns = out.last_send_ns.max(sent_ns);
            let lag_ms = sent_ns.saturating_sub(intended_ns) as f64 / 1e6;
            out.max_start_lag_ms = out.max_start_lag_ms.max(lag_ms);
            seq += 1;
            let work = checked_request(&self.req, load, &mut conn, &mut out.connects);
            match self.slot.guard(seq, sent_ns, work).await {
                Some(Ok(())) => {
                    let done_ns = ns_since(self.t0);
                    out.samples.push((
                        index,
                        Sample {
                            intended_ns,
                            sent_ns,
                            done_ns,
                        },
                    ));
                }
                Some(Err(m)) => {
                    out.fail(m);
                    conn = None;
                }
                None => {
                    out.fail(format!(
                        "timeout: no answer within {:.1} s",
                        load.timeout.as_secs_f64()
                    ));
                    conn = None;
                }
            }
        }
        out.sender = conn;
        out
    }
}

/// Sends `req` on the connection (opening it first when there is none or the server closed
/// it, counted in `connects`) and checks the answer. No timeout: the caller holds it to one.
async fn checked_request(
    req: &Request,
    load: &Load,
    conn: &mut Option<Sender>,
    connects: &mut usize,
) -> Result<(), String> {
    if !conn.as_ref().is_some_and(Sender::reusable) {
        *conn = Some(connect(load.addr).await?);
        *connects += 1;
    }
    let answer = conn
        .as_mut()
        .expect("connected above")
        .exchange(req)
        .await?;
    if !(200..300).contains(&answer.status) {
        // The services under test answer a failed handler with its one-line reason: keep its
        // start, so the error samples say why.
        let body = answer.body;
        let why = String::from_utf8_lossy(&body[..body.len().min(160)]);
        let why = why.lines().next().unwrap_or("").trim();
        return Err(if why.is_empty() {
            format!("HTTP {}", answer.status)
        } else {
            format!("HTTP {}: {why}", answer.status)
        });
    }
    load.endpoint.check(answer.body)
}

/// Opens a keep-alive HTTP/1.1 connection (TCP_NODELAY).
async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    http1::Conn::open(addr).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server that answers every request on every connection with `answer`.
    async fn always(answer: &'static [u8]) -> SocketAddr {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let mut got = Vec::new();
                    loop {
                        match s.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => got.extend_from_slice(&buf[..n]),
                        }
                        while let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                            got.drain(..end + 4);
                            if s.write_all(answer).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    fn db_load(addr: SocketAddr, rate_per_s: f64) -> Load {
        Load {
            addr,
            endpoint: Endpoint::Db { queries: None },
            connections: 2,
            rate_per_s,
            duration: Duration::from_millis(200),
            timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn a_wrong_db_value_is_an_error_and_a_right_one_is_timed() {
        let wrong =
            always(b"HTTP/1.1 200 OK\r\nContent-Length: 22\r\n\r\n{\"id\": 2, \"value\": 1}\n")
                .await;
        for rate in [0.0, 100.0] {
            let out = run(&db_load(wrong, rate)).await;
            assert!(
                out.samples.is_empty() && out.errors > 0,
                "rate {rate}: {out:?}"
            );
            assert!(
                out.error_samples[0].contains("wrong answer: /db"),
                "{:?}",
                out.error_samples
            );
        }
        let right =
            always(b"HTTP/1.1 200 OK\r\nContent-Length: 26\r\n\r\n{\"id\": 2, \"value\": 15838}\n")
                .await;
        let out = run(&db_load(right, 100.0)).await;
        assert_eq!(
            (out.errors, out.samples.len(), out.connects),
            (0, 20, 2),
            "{out:?}"
        );
    }

    #[tokio::test]
    async fn a_server_that_never_answers_times_out_once_per_request() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        // Accepts and holds every connection, reading nothing.
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((s, _)) = l.accept().await {
                held.push(s);
            }
        });
        let load = Load {
            timeout: Duration::from_millis(100),
            ..db_load(addr, 20.0)
        };
        let start = Instant::now();
        let out = run(&load).await;
        assert_eq!(
            (out.samples.len(), out.errors, out.sent),
            (0, 4, 4),
            "{out:?}"
        );
        assert!(out.error_samples.iter().all(|m| m.starts_with("timeout")));
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }
}
