//! The fan-out form of a `loadgen` cell (parameter `clients` > 0): the server under test is a
//! WebSocket chat room ([`crate::loadgen::fanout`]). Between start and `ready`, untimed: read
//! the server tree's RSS, join the clients, hold them idle `hold_s`, read it again (memory per
//! connection, as for held HTTP connections), then send `warmup_s` of warm-up messages and wait
//! for their deliveries. Timed, between `go` and `done`: the schedule of messages and the wait
//! for their deliveries (at most `drain_s` after the last send).
//!
//! With `slow_clients`, that many clients never read. The server tree's RSS is read before `go`
//! and again after the wait (the slow consumers still unread), and every second in between;
//! then each slow consumer reads what reaches it and says whether the server had closed it.
//! The run's `extra.slow_consumer` holds these with the timeline of the other clients'
//! deliveries, second by second.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::loadgen_cell::{own_cpu_s, server_figures, settled_rss_mib, Cell, Ctl, MemoryWatch};
use crate::catalogue::Server;
use crate::loadgen::fanout::{self, Room};
use crate::loadgen::slow;
use crate::services::under_test::RunningServer;

/// How long closing the clients may take at the end.
const LEAVE_WITHIN: Duration = Duration::from_secs(5);
/// A slow consumer reading at the end takes its connection as still open once nothing has
/// arrived for this long, or once it has read for [`SLOW_READ_WITHIN`].
const SLOW_IDLE: Duration = Duration::from_secs(2);
const SLOW_READ_WITHIN: Duration = Duration::from_secs(30);

/// One fan-out cell's server, parameters and address.
pub(crate) struct Setting<'a> {
    pub(crate) server: &'a Server,
    pub(crate) cell: &'a Cell,
    pub(crate) cpus: &'a [usize],
    pub(crate) addr: SocketAddr,
}

/// Percentiles of a histogram of µs, in ms (None when it is empty).
fn percentiles_ms(h: &hdrhistogram::Histogram<u64>) -> Value {
    if h.is_empty() {
        return Value::Null;
    }
    json!({
        "p50": h.value_at_quantile(0.50) as f64 / 1000.0,
        "p99": h.value_at_quantile(0.99) as f64 / 1000.0,
        "max": h.max() as f64 / 1000.0,
    })
}

impl Setting<'_> {
    fn room(&self) -> Room {
        Room {
            addr: self.addr,
            clients: self.cell.clients,
            rate_per_s: self.cell.rate_per_s,
            duration: self.cell.duration,
            join_within: self.cell.open_within,
            timeout: self.cell.timeout,
            drain: self.cell.drain,
            slow: self.cell.slow_clients,
            message_bytes: self.cell.message_bytes,
        }
    }

    /// Runs the cell and sends its result on `ctl`.
    pub(crate) fn run(
        &self,
        rt: &tokio::runtime::Runtime,
        running: &mut RunningServer,
        ctl: &mut Ctl,
    ) -> anyhow::Result<()> {
        let (server, cell) = (self.server, self.cell);
        let room = self.room();
        let before = settled_rss_mib(rt, running.pid());
        let mut joined = rt.block_on(fanout::join(&room));
        rt.block_on(async { tokio::time::sleep(cell.hold_idle).await });
        let after = settled_rss_mib(rt, running.pid());
        let in_room = joined.joined() as u64 - joined.closed().min(joined.joined() as u64);
        if let Some(status) = running.exited() {
            anyhow::bail!(
                "service {} exited while {} clients joined its room ({status}); its log: {}",
                server.name,
                cell.clients,
                running.log.display()
            );
        }
        if joined.joined() == 0 {
            anyhow::bail!(
                "service {}: none of {} clients could join its room at {} (first: {}); its log: {}",
                server.name,
                cell.clients,
                fanout::PATH,
                joined.error_samples.first().map_or("none", String::as_str),
                running.log.display()
            );
        }
        if !cell.warmup.is_zero() {
            let warm = rt.block_on(fanout::send(&room, &mut joined, cell.warmup, true));
            let expected = warm.sent * joined.reading() as u64;
            rt.block_on(fanout::drain(&joined, expected, true, room.drain));
        }
        let rss_start = (cell.slow_clients > 0).then(|| settled_rss_mib(rt, running.pid()));
        ctl.ready_and_wait_for_go(running)?;
        let tree_cpu = |r: &RunningServer| crate::runner::sampler::tree_runtime_s(r.pid());
        let cpu_before = tree_cpu(running);
        let client_before = own_cpu_s();
        let memory = MemoryWatch::start(running.pid());
        let start = Instant::now();
        let members = joined.joined() as u64;
        let reading = joined.reading() as u64;
        let sent = rt.block_on(fanout::send(&room, &mut joined, room.duration, false));
        let expected = sent.sent * reading;
        rt.block_on(fanout::drain(&joined, expected, false, room.drain));
        let inside = start.elapsed();
        ctl.send(&json!({"event": "done"}))?;
        let server_cpu_s = tree_cpu(running) - cpu_before;
        let client_cpu_s = own_cpu_s() - client_before;
        let mem = memory.stop();
        let got = fanout::delivered(&joined);
        let closed = joined.closed();
        let slow = rss_start.map(|start| {
            let end = settled_rss_mib(rt, running.pid());
            let fates = rt.block_on(slow::fates(&mut joined, SLOW_IDLE, SLOW_READ_WITHIN));
            let scheduled = room.scheduled(room.duration);
            let line = slow::timeline(
                &got.per_seq,
                scheduled,
                &sent.unsent,
                reading,
                room.rate_per_s,
                cell.bound_ms,
            );
            let owed = sent.sent * fates.len() as u64;
            json!({
                "slow_clients": fates.len(),
                "message_bytes": cell.message_bytes,
                "owed": owed,
                "owed_mib": (owed * cell.message_bytes as u64) as f64 / 1_048_576.0,
                "received": fates.iter().map(|f| f.received).sum::<u64>(),
                "dropped": fates.iter().filter(|f| f.ending.dropped()).count(),
                "endings": fates.iter().map(|f| f.ending.detail()).collect::<Vec<_>>(),
                "rss_start_mib": start,
                "rss_end_mib": end,
                "rss_peak_mib": mem.peak_mib(),
                "first_late_s": line.first_late_s,
                "per_second": {
                    "max_delivery_ms": line.max_ms,
                    "missing": line.missing,
                    "rss_mib": mem.per_second_mib,
                },
            })
        });
        if let Some(status) = running.exited() {
            anyhow::bail!(
                "service {} exited under load ({status}); its log: {}",
                server.name,
                running.log.display()
            );
        }
        let missing = expected.saturating_sub(got.received);
        let span_s = (got.last_ns.saturating_sub(sent.t0_ns)) as f64 / 1e9;
        let mut error_samples = sent.error_samples.clone();
        if missing > 0 {
            error_samples.push(format!(
                "{missing} of {expected} deliveries not received within {:.0} s of the last send",
                room.drain.as_secs_f64()
            ));
        }
        error_samples.extend(joined.error_samples.iter().take(2).cloned());
        let mut extra = json!({
            "server": server_figures(server, cell, self.cpus, server_cpu_s, sent.sent as f64, &mem),
            "client": {
                "connections": members,
                "connects": members,
                "cpu_s": client_cpu_s,
                "cpu_share": client_cpu_s / inside.as_secs_f64().max(1e-9),
                "max_start_lag_ms": sent.max_start_lag_ms,
            },
            "fanout": {
                "clients": cell.clients,
                "joined": members,
                "failed": joined.failed,
                "error_samples": joined.error_samples,
                "join_s": joined.elapsed.as_secs_f64(),
                "idle_s": cell.hold_idle.as_secs_f64(),
                "in_room_after_idle": in_room,
                "closed_at_end": closed,
                "rss_before_mib": before,
                "rss_after_mib": after,
                "kib_per_connection": (in_room > 0).then(|| (after - before) * 1024.0 / in_room as f64),
                "rate_per_s": room.rate_per_s,
                "sent": sent.sent,
                "send_errors": sent.errors,
                "expected": expected,
                "delivered": got.received,
                "missing": missing,
                "delivered_per_s": if span_s > 0.0 { got.received as f64 / span_s } else { 0.0 },
                "delivery_ms": percentiles_ms(&got.corrected),
                "from_stamp_ms": percentiles_ms(&got.stamped),
                "sampled_clients": got.sampled_clients,
                "bound_ms": cell.bound_ms,
                "broadcast_delay_ms": cell.broadcast_delay_ms,
            },
            "offered_rate_per_s": room.rate_per_s,
            "scheduled": room.scheduled(room.duration),
            "achieved_rate_per_s": sent.sent as f64 / room.duration.as_secs_f64(),
        });
        if let Some(slow) = slow {
            extra["slow_consumer"] = slow;
        }
        ctl.send(&json!({
            "event": "result",
            "ops": got.received,
            "errors": sent.errors + missing,
            "latencies_ms": got.sampled,
            "latency_kind": "open-loop-corrected",
            "inside_wall_s": inside.as_secs_f64(),
            "error_samples": error_samples.into_iter().take(5).collect::<Vec<_>>(),
            "latency_sets_ms": {},
            "extra": extra,
        }))?;
        rt.block_on(fanout::leave(joined, LEAVE_WITHIN));
        Ok(())
    }
}
