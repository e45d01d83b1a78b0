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
//! Deadlines are [`precise_timer`](crate::services::precise_timer) sleeps (a fraction of a
//! millisecond late, where tokio's timer wheel is up to 2 ms late).

pub mod check;
pub mod fanout;
pub mod hold;
pub mod selfcheck;
pub mod slow;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::SendRequest;

use crate::services::precise_timer;

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

/// A keep-alive connection's sending half; the connection closes when it is dropped.
pub type Sender = SendRequest<Empty<Bytes>>;

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
    let t0 = Instant::now();
    let n = load.connections.max(1);
    let mut open = open.into_iter();
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..n {
        let load = load.clone();
        let start = open.next().flatten();
        tasks.spawn(async move { (c, connection(&load, c, t0, start).await) });
    }
    let mut out = Outcome::default();
    let mut indexed = Vec::new();
    let mut senders: Vec<Option<Sender>> = (0..n).map(|_| None).collect();
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
        out.absorb(c);
    }
    out.elapsed = t0.elapsed();
    indexed.sort_by_key(|(i, _)| *i);
    out.samples = indexed.into_iter().map(|(_, s)| s).collect();
    (out, senders)
}

fn ns_since(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

/// Connection `c`'s requests: its share of the schedule, or back to back until the duration
/// has passed.
async fn connection(load: &Load, c: usize, t0: Instant, start: Option<Sender>) -> ConnOutcome {
    let mut out = ConnOutcome::default();
    let mut sender = start;
    let give_up = t0 + 2 * load.duration;
    let n = load.connections.max(1);
    let open = load.rate_per_s > 0.0;
    let mut i = c;
    loop {
        let intended = if open {
            if i >= load.scheduled() {
                break;
            }
            let at = t0 + Duration::from_secs_f64(i as f64 / load.rate_per_s);
            precise_timer::sleep_until(at).await;
            if Instant::now() >= give_up {
                out.abandoned += (load.scheduled() - i).div_ceil(n);
                break;
            }
            at
        } else {
            let now = Instant::now();
            if now >= t0 + load.duration {
                break;
            }
            now
        };
        let index = i;
        i += n;
        let intended_ns = intended.saturating_duration_since(t0).as_nanos() as u64;
        let sent_ns = ns_since(t0);
        out.sent += 1;
        out.last_send_ns = out.last_send_ns.max(sent_ns);
        let lag_ms = sent_ns.saturating_sub(intended_ns) as f64 / 1e6;
        out.max_start_lag_ms = out.max_start_lag_ms.max(lag_ms);
        match one_request(load, &mut sender, &mut out.connects).await {
            Ok(()) => {
                let done_ns = ns_since(t0);
                out.samples.push((
                    index,
                    Sample {
                        intended_ns: if open { intended_ns } else { sent_ns },
                        sent_ns,
                        done_ns,
                    },
                ));
            }
            Err(m) => {
                out.fail(m);
                sender = None;
            }
        }
    }
    out.sender = sender;
    out
}

/// Sends one request on the connection (opening it first when there is none or the server
/// closed it, counted in `connects`) and checks the answer.
async fn one_request(
    load: &Load,
    sender: &mut Option<Sender>,
    connects: &mut usize,
) -> Result<(), String> {
    let work = async {
        if sender.as_ref().is_none_or(|s| s.is_closed()) {
            *sender = Some(connect(load.addr).await?);
            *connects += 1;
        }
        let s = sender.as_mut().expect("connected above");
        s.ready().await.map_err(|e| format!("connection: {e}"))?;
        let req = hyper::Request::get(load.endpoint.path())
            .header(hyper::header::HOST, load.addr.to_string())
            .body(Empty::new())
            .map_err(|e| format!("request: {e}"))?;
        let resp = s
            .send_request(req)
            .await
            .map_err(|e| format!("request: {e}"))?;
        let status = resp.status();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        if !status.is_success() {
            // The services under test answer a failed handler with its one-line reason: keep
            // its start, so the error samples say why.
            let why = String::from_utf8_lossy(&body[..body.len().min(160)]);
            let why = why.lines().next().unwrap_or("").trim();
            return Err(if why.is_empty() {
                format!("HTTP {}", status.as_u16())
            } else {
                format!("HTTP {}: {why}", status.as_u16())
            });
        }
        load.endpoint.check(&body)
    };
    match tokio::time::timeout(load.timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "timeout: no answer within {:.1} s",
            load.timeout.as_secs_f64()
        )),
    }
}

/// Opens a keep-alive HTTP/1.1 connection (TCP_NODELAY), its driver on a task of its own.
async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let io = hyper_util::rt::TokioIo::new(stream);
    let (sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("handshake {addr}: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}
