//! WebSocket fan-out: N clients join one chat room (workloads/services/room.py) and messages go
//! into it on a fixed schedule, each sent by one client in turn and broadcast by the server to
//! every client, the sender included.
//!
//! Message i is intended at `t0 + i / rate` whatever happened before it (open loop, wrk2's
//! rule); its text is `<seq> <intended_ns>`, and the server sends every client
//! `<server_ns> <seq> <intended_ns>`, stamped on receipt with its wall clock. Each receipt gives
//! two latencies: from the intended send (corrected: a late send, a slow read by the server and
//! a slow broadcast all count), and from the server's stamp (the broadcast alone, on the wall
//! clock the two processes share on one host). Every delivery is recorded in a histogram; the
//! corrected latencies of a few clients spread over the join order are also kept one by one
//! (the run's latency sample; a room of 10,000 would otherwise send millions of numbers).
//!
//! Joining is bounded as opening held connections is ([`super::hold`]): at most
//! [`super::hold::OPENING`] handshakes at once, and a deadline for all of them. Messages whose
//! seq starts with `w` are warm-up: delivered, never counted. Messages may be padded to a size
//! (`<seq> <intended_ns> xxx…`); the room sends the padding on with the rest.
//!
//! A room may hold slow consumers: clients that join and then never read, spread over the join
//! order. Their unread deliveries fill the kernel's buffers, then whatever the server does with
//! a client it cannot write to (buffer, block, drop) shows in the other clients' deliveries and
//! the server's memory. At the end each slow consumer reads what reaches it, and the timed
//! schedule is read second by second ([`super::slow`]).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::stream::{SplitSink, StreamExt};
use futures_util::SinkExt;
use hdrhistogram::Histogram;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use super::hold::OPENING;
use super::ERROR_SAMPLES;
use crate::services::precise_timer;

/// The room's path on every WebSocket service.
pub const PATH: &str = "/ws";
/// Clients whose corrected latencies are kept one by one, at most.
pub const SAMPLED_CLIENTS: usize = 100;
/// Highest latency the histograms hold, µs (an hour).
const MAX_US: u64 = 3_600_000_000;

type Writer = SplitSink<WebSocketStream<TcpStream>, Message>;

/// The room to join and the messages to send into it.
#[derive(Debug, Clone)]
pub struct Room {
    /// The server's address.
    pub addr: SocketAddr,
    /// Clients to join.
    pub clients: usize,
    /// Messages per second into the room, from all clients together.
    pub rate_per_s: f64,
    /// How long the schedule lasts.
    pub duration: Duration,
    /// How long joining may take in all.
    pub join_within: Duration,
    /// A handshake or a send with no end by then is an error.
    pub timeout: Duration,
    /// How long after the last send deliveries are waited for.
    pub drain: Duration,
    /// Clients that join and never read (slow consumers), spread over the join order.
    pub slow: usize,
    /// Bytes of each message sent (padded; shorter means as short as its numbers).
    pub message_bytes: usize,
}

impl Room {
    /// Messages the schedule holds.
    pub fn scheduled(&self, duration: Duration) -> usize {
        (self.rate_per_s * duration.as_secs_f64()).round().max(1.0) as usize
    }
}

/// What the clients received of the timed messages: one tally for all of them (the readers
/// share one thread, and a histogram per client would cost each delivery a cache miss).
struct Tally {
    received: u64,
    /// From the intended send, µs.
    corrected: Histogram<u64>,
    /// From the server's stamp, µs.
    stamped: Histogram<u64>,
    /// Corrected latencies one by one, ms, per sampled client.
    sampled: Vec<Vec<f64>>,
    /// The latest receipt, ns after the room's base.
    last_ns: u64,
    /// Per timed message (by seq): deliveries and the largest latency.
    per_seq: Vec<Seq>,
}

/// One timed message's deliveries so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Seq {
    /// Clients it reached.
    pub count: u64,
    /// Its largest delivery latency from the intended send, µs.
    pub max_us: u64,
}

/// Seqs past this are not tallied per message (a schedule is far shorter).
const MAX_SEQ: usize = 10_000_000;

/// Each client's buffers: the room's messages are tens of bytes, and tungstenite's default
/// 128 KiB read buffer per client would make a room of 10,000 cost the generator over a GiB,
/// every delivery reading into memory no cache holds.
fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(CLIENT_BUFFER)
        .write_buffer_size(0)
}

/// Bytes of each client's read buffer.
const CLIENT_BUFFER: usize = 4096;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 3).expect("valid bounds")
}

/// The joined room: a writer per client that joined, and a reader task per client tallying
/// what it receives.
pub struct Joined {
    base: Instant,
    writers: Vec<Writer>,
    /// The slow consumers: joined, never read until [`super::slow::fates`].
    pub(super) slow: Vec<WebSocketStream<TcpStream>>,
    tally: Arc<Mutex<Tally>>,
    /// Deliveries of timed messages, then of warm-up ones.
    received: Arc<[AtomicU64; 2]>,
    closed: Arc<AtomicU64>,
    readers: tokio::task::JoinSet<()>,
    /// Clients whose handshake failed or did not end by the deadline.
    pub failed: usize,
    /// The first failures' messages.
    pub error_samples: Vec<String>,
    /// How long joining took.
    pub elapsed: Duration,
}

impl Joined {
    /// Clients in the room, slow consumers included.
    pub fn joined(&self) -> usize {
        self.writers.len() + self.slow.len()
    }

    /// Clients in the room that read (every one but the slow consumers): whose deliveries
    /// are counted.
    pub fn reading(&self) -> usize {
        self.writers.len()
    }

    /// Clients whose connection has ended (the server closed it, or it failed).
    pub fn closed(&self) -> u64 {
        self.closed.load(Ordering::Relaxed)
    }
}

/// Joins `room.clients` clients on the current tokio runtime.
pub async fn join(room: &Room) -> Joined {
    let base = Instant::now();
    let until = tokio::time::Instant::from_std(base + room.join_within);
    let gate = Arc::new(tokio::sync::Semaphore::new(OPENING));
    let url = format!("ws://{}{PATH}", room.addr);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..room.clients {
        let (gate, url, addr, timeout) = (gate.clone(), url.clone(), room.addr, room.timeout);
        tasks.spawn(async move {
            let one = async {
                let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
                let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
                let _ = tcp.set_nodelay(true);
                let handshake =
                    tokio_tungstenite::client_async_with_config(url, tcp, Some(config()));
                match tokio::time::timeout(timeout, handshake).await {
                    Ok(Ok((ws, _))) => Ok(ws),
                    Ok(Err(e)) => Err(format!("handshake: {e}")),
                    Err(_) => Err(format!(
                        "no handshake within {:.0} s",
                        timeout.as_secs_f64()
                    )),
                }
            };
            let joined = tokio::time::timeout_at(until, one)
                .await
                .unwrap_or_else(|_| Err("not joined within the time given to joining".to_string()));
            (i, joined)
        });
    }
    let mut streams: Vec<Option<WebSocketStream<TcpStream>>> =
        (0..room.clients).map(|_| None).collect();
    let (mut failed, mut error_samples) = (0, Vec::new());
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok((i, Ok(ws))) => streams[i] = Some(ws),
            Ok((_, Err(e))) => {
                failed += 1;
                if error_samples.len() < ERROR_SAMPLES {
                    error_samples.push(e);
                }
            }
            Err(e) => {
                failed += 1;
                if error_samples.len() < ERROR_SAMPLES {
                    error_samples.push(e.to_string());
                }
            }
        }
    }
    let mut streams: Vec<_> = streams.into_iter().flatten().collect();
    let slow = slow_places(room.slow, streams.len())
        .into_iter()
        .rev()
        .map(|k| streams.remove(k))
        .collect();
    let stride = streams.len().div_ceil(SAMPLED_CLIENTS).max(1);
    let received = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let closed = Arc::new(AtomicU64::new(0));
    let mut readers = tokio::task::JoinSet::new();
    let mut writers = Vec::new();
    let tally = Arc::new(Mutex::new(Tally {
        received: 0,
        corrected: histogram(),
        stamped: histogram(),
        sampled: Vec::new(),
        last_ns: 0,
        per_seq: Vec::new(),
    }));
    for (k, ws) in streams.into_iter().enumerate() {
        let (writer, reader) = ws.split();
        let slot = (k % stride == 0).then(|| {
            let mut t = tally.lock().expect("not poisoned");
            t.sampled.push(Vec::new());
            t.sampled.len() - 1
        });
        let reading = Reading {
            base,
            tally: tally.clone(),
            slot,
            received: received.clone(),
            closed: closed.clone(),
        };
        readers.spawn(read(reader, reading));
        writers.push(writer);
    }
    Joined {
        base,
        writers,
        slow,
        tally,
        received,
        closed,
        readers,
        failed,
        error_samples,
        elapsed: base.elapsed(),
    }
}

/// Where the `slow` slow consumers sit among `n` clients in join order: spread evenly, each
/// in the middle of its share (one slow consumer: the middle client).
fn slow_places(slow: usize, n: usize) -> Vec<usize> {
    let slow = slow.min(n);
    (0..slow).map(|j| (2 * j + 1) * n / (2 * slow)).collect()
}

/// What a client's reader shares with the rest.
struct Reading {
    base: Instant,
    tally: Arc<Mutex<Tally>>,
    /// Its place among the sampled clients, if it is one.
    slot: Option<usize>,
    received: Arc<[AtomicU64; 2]>,
    closed: Arc<AtomicU64>,
}

/// One client's reader: tallies each timed message it receives until its connection ends.
async fn read(
    mut reader: futures_util::stream::SplitStream<WebSocketStream<TcpStream>>,
    reading: Reading,
) {
    let Reading {
        base,
        tally,
        slot,
        received,
        closed,
    } = reading;
    while let Some(Ok(msg)) = reader.next().await {
        // Only text frames are the room's messages (a ping's payload may read as text too).
        let Message::Text(text) = msg else { continue };
        let now_ns = base.elapsed().as_nanos() as u64;
        let wall_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let mut parts = text.split(' ');
        let (Some(server_ns), Some(seq), Some(intended_ns)) =
            (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if seq.starts_with('w') {
            received[1].fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let (Ok(server_ns), Ok(intended_ns)) =
            (server_ns.parse::<u64>(), intended_ns.parse::<u64>())
        else {
            continue;
        };
        let corrected_us = now_ns.saturating_sub(intended_ns) / 1000;
        let stamped_us = wall_ns.saturating_sub(server_ns) / 1000;
        let seq = seq.parse::<usize>().ok().filter(|&s| s < MAX_SEQ);
        let mut t = tally.lock().expect("not poisoned");
        if let Some(seq) = seq {
            if t.per_seq.len() <= seq {
                t.per_seq.resize(seq + 1, Seq::default());
            }
            let one = &mut t.per_seq[seq];
            one.count += 1;
            one.max_us = one.max_us.max(corrected_us);
        }
        t.received += 1;
        t.last_ns = t.last_ns.max(now_ns);
        t.corrected.saturating_record(corrected_us.clamp(1, MAX_US));
        t.stamped.saturating_record(stamped_us.clamp(1, MAX_US));
        if let Some(k) = slot {
            t.sampled[k].push(now_ns.saturating_sub(intended_ns) as f64 / 1e6);
        }
        drop(t);
        received[0].fetch_add(1, Ordering::Relaxed);
    }
    closed.fetch_add(1, Ordering::Relaxed);
}

/// What sending a schedule into the room gave.
#[derive(Debug, Default)]
pub struct Sent {
    /// Messages sent.
    pub sent: u64,
    /// Messages whose send failed or did not end in time.
    pub errors: u64,
    /// The first failures' messages.
    pub error_samples: Vec<String>,
    /// The schedule's start, ns after the room's base.
    pub t0_ns: u64,
    /// The schedule's end (its last send), ns after the room's base.
    pub end_ns: u64,
    /// The latest a send started after its intended time, ms.
    pub max_start_lag_ms: f64,
    /// Seqs whose send failed or did not end in time.
    pub unsent: Vec<usize>,
}

/// Sends `room.rate_per_s` messages a second for `duration`, message i from writer
/// i mod joined, the writers spread over the join order. `warm`: the messages are warm-up,
/// never counted by the readers.
pub async fn send(room: &Room, joined: &mut Joined, duration: Duration, warm: bool) -> Sent {
    let n = room.scheduled(duration);
    let mut out = Sent::default();
    if joined.writers.is_empty() {
        return out;
    }
    let base = joined.base;
    let writers = &mut joined.writers;
    // Message i comes from writer (i mod used)·joined/used: the senders spread evenly over the
    // join order (hence over the server's broadcast order) however few messages there are.
    let used = n.min(writers.len());
    let t0 = Instant::now();
    out.t0_ns = t0.duration_since(base).as_nanos() as u64;
    let tag = if warm { "w" } else { "" };
    for i in 0..n {
        let intended = t0 + Duration::from_secs_f64(i as f64 / room.rate_per_s);
        precise_timer::sleep_until(intended).await;
        let lag = intended.elapsed().as_secs_f64() * 1000.0;
        out.max_start_lag_ms = out.max_start_lag_ms.max(lag);
        let intended_ns = intended.duration_since(base).as_nanos() as u64;
        let k = (i % used) * writers.len() / used;
        let text = padded(format!("{tag}{i} {intended_ns}"), room.message_bytes);
        match tokio::time::timeout(room.timeout, writers[k].send(Message::text(text))).await {
            Ok(Ok(())) => out.sent += 1,
            Ok(Err(e)) => fail(&mut out, i, format!("send: {e}")),
            Err(_) => fail(
                &mut out,
                i,
                format!("send not done within {:.0} s", room.timeout.as_secs_f64()),
            ),
        }
    }
    out.end_ns = base.elapsed().as_nanos() as u64;
    out
}

/// `text` padded with ` xxx…` to `bytes`, when it is shorter.
fn padded(mut text: String, bytes: usize) -> String {
    if bytes > text.len() + 1 {
        text.push(' ');
        let pad = bytes - text.len();
        text.extend(std::iter::repeat_n('x', pad));
    }
    text
}

fn fail(out: &mut Sent, seq: usize, e: String) {
    out.errors += 1;
    out.unsent.push(seq);
    if out.error_samples.len() < ERROR_SAMPLES {
        out.error_samples.push(e);
    }
}

/// Waits until the clients have received `expected` deliveries of the timed messages (of the
/// warm-up ones with `warm`), or for `within`, whichever comes first.
pub async fn drain(joined: &Joined, expected: u64, warm: bool, within: Duration) {
    let until = Instant::now() + within;
    let received = &joined.received[usize::from(warm)];
    while received.load(Ordering::Relaxed) < expected && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// What the clients received of the timed messages.
#[derive(Debug)]
pub struct Delivered {
    /// Deliveries received.
    pub received: u64,
    /// From the intended send, µs.
    pub corrected: Histogram<u64>,
    /// From the server's stamp, µs.
    pub stamped: Histogram<u64>,
    /// The sampled clients' corrected latencies, ms.
    pub sampled: Vec<f64>,
    /// Clients sampled.
    pub sampled_clients: usize,
    /// The latest receipt, ns after the room's base.
    pub last_ns: u64,
    /// Per timed message (by seq): deliveries and the largest latency.
    pub per_seq: Vec<Seq>,
}

/// Everything the readers have tallied so far.
pub fn delivered(joined: &Joined) -> Delivered {
    let t = joined.tally.lock().expect("not poisoned");
    Delivered {
        received: t.received,
        corrected: t.corrected.clone(),
        stamped: t.stamped.clone(),
        sampled: t.sampled.concat(),
        sampled_clients: t.sampled.len(),
        last_ns: t.last_ns,
        per_seq: t.per_seq.clone(),
    }
}

/// Closes every client (a close frame each, then the connection) and stops the readers.
pub async fn leave(mut joined: Joined, within: Duration) {
    let writers = std::mem::take(&mut joined.writers);
    let _ = tokio::time::timeout(within, async {
        for mut w in writers {
            let _ = w.close().await;
        }
    })
    .await;
    joined.readers.abort_all();
    joined.slow.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_holds_rate_times_duration_messages() {
        let room = Room {
            addr: "127.0.0.1:1".parse().unwrap(),
            clients: 10,
            rate_per_s: 20.0,
            duration: Duration::from_secs(5),
            join_within: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            drain: Duration::from_secs(1),
            slow: 0,
            message_bytes: 0,
        };
        assert_eq!(room.scheduled(room.duration), 100);
        assert_eq!(room.scheduled(Duration::from_millis(1)), 1);
    }

    #[test]
    fn slow_consumers_sit_evenly_spread_over_the_join_order() {
        assert_eq!(slow_places(1, 50), vec![25]);
        assert_eq!(slow_places(2, 100), vec![25, 75]);
        assert_eq!(slow_places(3, 2), vec![0, 1]);
        assert!(slow_places(0, 10).is_empty());
    }

    #[test]
    fn a_padded_message_has_the_size_asked_and_keeps_its_numbers_first() {
        let text = padded("12 3456".into(), 64);
        assert_eq!(text.len(), 64);
        assert!(text.starts_with("12 3456 xx"));
        assert_eq!(padded("12 3456".into(), 8), "12 3456");
    }
}
