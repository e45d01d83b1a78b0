//! The workers' scenario-specific figures (`extra` of a result), typed once at the boundary.
//!
//! Every kind the lab reads has a field here: per-operation figures (`ops`), pyperf results
//! (`benchmarks`), open-loop figures (`achieved_rate_per_s`, `abandoned`), correctness rows
//! (`rows`) and a batch's own timing (`elapsed_ms`). Anything else a script reports is kept in
//! [`Extras::other`] and written back unchanged, so a user's scenario can report what it likes.
//! Which report sections a scenario gets follows from which of these kinds its runs carry
//! (`analysis`), never from its name. docs/protocol.md documents each kind.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Scenario-specific figures of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extras {
    /// Per-operation figures by operation name (the asyncio runtime study, or any scenario that
    /// times several operations per run): a per-operation table and chart in the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<BTreeMap<String, OpFigure>>,
    /// pyperf's own results by benchmark name (a cross-check of `ops` in its worker processes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmarks: Option<BTreeMap<String, PyperfBenchmark>>,
    /// Expected-against-observed rows of a correctness study, or (in other scenarios, e.g.
    /// db) a plain figure under the same key, kept as it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<Rows>,
    /// The timed batch as the worker measured it, in milliseconds (event-loop comparisons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<f64>,
    /// Open loop: requests actually sent per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_rate_per_s: Option<f64>,
    /// Open loop: requests not sent by twice the run's duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned: Option<u64>,
    /// Processes or threads that did the work in parallel (CPU-bound scenarios): the report
    /// shows the speed-up per worker and the bound the machine's cores set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u64>,
    /// How long making one worker ready took, ms (median over the pool; subinterpreters): set-up
    /// the timed run does not include, shown beside the speed-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_start_ms: Option<f64>,
    /// Round trip of a call that does nothing, µs (subinterpreters: sending a call and its result
    /// across), shown beside the speed-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_overhead_us: Option<f64>,
    /// A service under test (`loadgen` cells): its workers, CPU per request and memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerFigures>,
    /// The load generator of a `loadgen` cell: what it cost, to show it was not the bottleneck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientFigures>,
    /// Held connections of a `loadgen` cell with `hold`: how many the server kept open and
    /// what they cost it in memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldFigures>,
    /// A WebSocket room of a `loadgen` cell with `clients`: who joined, what it cost the server
    /// in memory, and how the broadcasts were delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fanout: Option<FanoutFigures>,
    /// Slow consumers of a room (`slow_clients`): what the server did with clients that never
    /// read, from its memory and the other clients' deliveries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_consumer: Option<SlowConsumerFigures>,
    /// Everything else the worker reported, by key, kept as it came.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// A service under test during one run (`extra.server`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerFigures {
    /// The catalogue's `[[server]]` name.
    pub name: String,
    /// `sync` or `async`.
    pub kind: String,
    /// Worker processes it was started with.
    pub workers: u64,
    /// Threads per worker.
    pub threads: u64,
    /// Database connections per worker process.
    pub db_pool_per_worker: u64,
    /// Keep-alive connections to the upstream per worker process.
    #[serde(default)]
    pub upstream_pool_per_worker: u64,
    /// CPUs it was pinned to (empty: not pinned).
    pub cpus: Vec<usize>,
    /// CPU seconds of its process tree over the timed load.
    pub cpu_s: f64,
    /// `cpu_s` per request attempted, ms.
    pub cpu_ms_per_request: f64,
    /// Peak of its tree's summed RSS during the load, MiB.
    pub rss_mib: f64,
    /// Processes in its tree.
    pub processes: u64,
    /// Each process's peak RSS, MiB, largest first.
    pub rss_per_process_mib: Vec<f64>,
}

/// The load generator during one run (`extra.client`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientFigures {
    /// Keep-alive connections it held.
    pub connections: u64,
    /// Connections it opened (more than `connections` when the server closed them).
    pub connects: u64,
    /// Its CPU seconds over the timed load.
    pub cpu_s: f64,
    /// `cpu_s` over the load's wall time: near 1, it may have been the bottleneck.
    pub cpu_share: f64,
    /// The largest gap between a request's send and its intended start, ms.
    pub max_start_lag_ms: f64,
}

/// Idle keep-alive connections held open to a service under test before its timed trickle
/// (`extra.held`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldFigures {
    /// Connections asked for.
    pub asked: u64,
    /// Connections whose first request failed (refused, reset, wrong or no answer in time).
    pub failed: u64,
    /// The first failures' messages.
    #[serde(default)]
    pub error_samples: Vec<String>,
    /// Seconds opening them took.
    pub open_s: f64,
    /// Seconds they were then held idle before memory was read.
    pub idle_s: f64,
    /// Connections the server still held after the idle time.
    pub open_after_idle: u64,
    /// Connections the server still held after the timed trickle.
    pub open_at_end: u64,
    /// The server tree's summed RSS before opening, MiB (median of readings).
    pub rss_before_mib: f64,
    /// The same after the idle time, MiB.
    pub rss_after_mib: f64,
    /// (after − before) over the connections held after the idle time, KiB; None when the
    /// server held none.
    pub kib_per_connection: Option<f64>,
}

/// Three points of a latency distribution over every delivery of a run, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// A WebSocket chat room during one run (`extra.fanout`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FanoutFigures {
    /// Clients asked to join.
    pub clients: u64,
    /// Clients that joined.
    pub joined: u64,
    /// Clients whose handshake failed or did not end in time.
    pub failed: u64,
    /// The first failures' messages.
    #[serde(default)]
    pub error_samples: Vec<String>,
    /// Seconds joining took.
    pub join_s: f64,
    /// Seconds they were then held idle before memory was read.
    pub idle_s: f64,
    /// Clients still connected after the idle time.
    pub in_room_after_idle: u64,
    /// Clients whose connection had ended by the end of the run.
    pub closed_at_end: u64,
    /// The server tree's summed RSS before joining, MiB (median of readings).
    pub rss_before_mib: f64,
    /// The same after the idle time, MiB.
    pub rss_after_mib: f64,
    /// (after − before) over the clients in the room after the idle time, KiB.
    pub kib_per_connection: Option<f64>,
    /// Messages per second sent into the room.
    pub rate_per_s: f64,
    /// Messages sent.
    pub sent: u64,
    /// Sends that failed or did not end in time.
    pub send_errors: u64,
    /// sent × the clients that read (every one joined but the slow consumers): deliveries owed.
    pub expected: u64,
    /// Deliveries received.
    pub delivered: u64,
    /// expected − delivered: not received within the drain time.
    pub missing: u64,
    /// Deliveries over the time from the first send to the last receipt, per second.
    pub delivered_per_s: f64,
    /// Over every delivery, from its message's intended send; None when none arrived.
    pub delivery_ms: Option<Percentiles>,
    /// Over every delivery, from the server's stamp; None when none arrived.
    pub from_stamp_ms: Option<Percentiles>,
    /// Clients whose latencies are the run's `latencies_ms`, spread over the join order.
    pub sampled_clients: u64,
    /// The p99 delivery latency the room must stay within, ms.
    pub bound_ms: f64,
    /// A deliberate delay in the server's broadcast path, ms.
    pub broadcast_delay_ms: f64,
}

/// What a worker reported under `rows`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Rows {
    /// A correctness study's expected-against-observed rows.
    Checked(Vec<CorrectnessRow>),
    /// Anything else (db's row count), kept as it came.
    Figure(Value),
}

impl Extras {
    /// The correctness rows, when `rows` holds them.
    pub fn correctness_rows(&self) -> Option<&[CorrectnessRow]> {
        match &self.rows {
            Some(Rows::Checked(rows)) => Some(rows),
            _ => None,
        }
    }

    /// The figure under `key` as JSON, typed field or not (for the catalogue's `agree` keys):
    /// only that field is converted, never the whole struct. `None` for an absent key or a
    /// JSON null.
    pub fn value(&self, key: &str) -> Option<Value> {
        fn json<T: Serialize>(field: &Option<T>) -> Option<Value> {
            serde_json::to_value(field.as_ref()?).ok()
        }
        let typed = match key {
            "ops" => json(&self.ops),
            "benchmarks" => json(&self.benchmarks),
            "rows" => json(&self.rows),
            "elapsed_ms" => json(&self.elapsed_ms),
            "achieved_rate_per_s" => json(&self.achieved_rate_per_s),
            "abandoned" => json(&self.abandoned),
            "workers" => json(&self.workers),
            _ => None,
        };
        typed
            .or_else(|| self.other.get(key).cloned())
            .filter(|v| !v.is_null())
    }

    /// A scalar figure as text (a string without quotes), for method notes.
    pub fn text(&self, key: &str) -> Option<String> {
        self.value(key).map(|v| {
            v.as_str()
                .map(String::from)
                .unwrap_or_else(|| v.to_string())
        })
    }
}

/// One operation's figures in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpFigure {
    /// Median over the run's repetitions of nanoseconds per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_per_op_median: Option<f64>,
    /// Standard deviation over the run's repetitions, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_per_op_stddev: Option<f64>,
    /// ns per op divided by the plain call's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_to_plain_call: Option<f64>,
    /// Relative change of the fastest value with twice the iterations (a set-up check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubling_change: Option<f64>,
    /// False when a set-up check flagged the figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_ok: Option<bool>,
    /// Why it was flagged.
    #[serde(default)]
    pub flag: Option<String>,
    /// Other per-operation fields, kept as they came.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// pyperf's figures for one benchmark in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PyperfBenchmark {
    /// Median, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ns: Option<f64>,
    /// Mean, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ns: Option<f64>,
    /// Standard deviation, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdev_ns: Option<f64>,
    /// Other fields (loops, values, processes), kept as they came.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// One expected-against-observed row of a correctness study.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CorrectnessRow {
    /// What was checked.
    #[serde(default)]
    pub case: Value,
    /// What should happen.
    #[serde(default)]
    pub expected: Value,
    /// What did.
    #[serde(default)]
    pub observed: Value,
    /// Whether they match.
    #[serde(default)]
    pub ok: bool,
    /// Other fields, kept as they came.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// Reads `null` (a run that reported nothing extra) as empty extras.
pub fn null_as_default<'de, D: Deserializer<'de>>(d: D) -> Result<Extras, D::Error> {
    Ok(Option::<Extras>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_and_other_keys_round_trip() {
        let text = r#"{"ops":{"sleep0":{"ns_per_op_median":51.5,"timing_ok":false,"flag":"x","iterations":7}},"workers":4,"abandoned":2}"#;
        let e: Extras = serde_json::from_str(text).unwrap();
        assert_eq!(e.abandoned, Some(2));
        let op = &e.ops.as_ref().unwrap()["sleep0"];
        assert_eq!(op.ns_per_op_median, Some(51.5));
        assert_eq!(op.other["iterations"], Value::from(7));
        assert_eq!(e.value("workers"), Some(Value::from(4)));
        let back: Extras = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
        // `rows` is a correctness table in some scenarios and a count in others (db).
        let count: Extras = serde_json::from_str(r#"{"rows": 4000}"#).unwrap();
        assert_eq!(count.correctness_rows(), None);
        assert_eq!(count.value("rows"), Some(Value::from(4000)));
        let table: Extras = serde_json::from_str(
            r#"{"rows": [{"case": "a", "expected": 1, "observed": 1, "ok": true}]}"#,
        )
        .unwrap();
        assert_eq!(table.correctness_rows().map(|r| r.len()), Some(1));
    }

    #[test]
    fn value_gives_what_the_serialized_struct_holds_for_every_key() {
        let text = r#"{"ops":{"a":{"ns_per_op_median":1.5}},"benchmarks":{"b":{"median_ns":2.0}},
            "rows":4000,"elapsed_ms":12.5,"achieved_rate_per_s":99.0,"abandoned":0,"workers":2,
            "checksum":"abc","nothing":null}"#;
        let e: Extras = serde_json::from_str(text).unwrap();
        let Value::Object(whole) = serde_json::to_value(&e).unwrap() else {
            panic!("extras serialize to an object")
        };
        // The text sets every typed field, one other key and one null: each key the struct
        // writes reads back the same through `value`.
        assert_eq!(whole.len(), 9, "{whole:?}");
        for (key, v) in &whole {
            assert_eq!(
                e.value(key),
                Some(v.clone()).filter(|v| !v.is_null()),
                "{key}"
            );
        }
        assert_eq!(e.value("nothing"), None);
        assert_eq!(e.value("absent"), None);
        assert_eq!(Extras::default().value("workers"), None);
        assert_eq!(e.text("checksum").as_deref(), Some("abc"));
        assert_eq!(e.text("workers").as_deref(), Some("2"));
    }
}

/// Slow consumers of a room during one run (`extra.slow_consumer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowConsumerFigures {
    /// Clients that never read until the end.
    pub slow_clients: u64,
    /// Bytes of each message sent, before the server's stamp.
    pub message_bytes: u64,
    /// Timed messages sent × slow consumers.
    pub owed: u64,
    /// `owed` × `message_bytes`, MiB.
    pub owed_mib: f64,
    /// Timed messages the slow consumers received when they finally read.
    pub received: u64,
    /// Slow consumers whose connection the server had ended when they read.
    pub dropped: u64,
    /// Per slow consumer, how its connection stood when it read.
    #[serde(default)]
    pub endings: Vec<String>,
    /// The server tree's summed RSS just before the schedule, MiB.
    pub rss_start_mib: f64,
    /// The same after the wait for deliveries, the slow consumers still unread, MiB.
    pub rss_end_mib: f64,
    /// The largest summed RSS during the schedule and the wait, MiB.
    pub rss_peak_mib: f64,
    /// When the first message that reached a reading client late or not at all was intended,
    /// s from the schedule's start.
    pub first_late_s: Option<f64>,
    /// Second by second from the schedule's start.
    pub per_second: PerSecond,
}

/// A room's schedule second by second (`extra.slow_consumer.per_second`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerSecond {
    /// The largest delivery latency to a reading client of the second's messages, ms.
    pub max_delivery_ms: Vec<Option<f64>>,
    /// Deliveries to reading clients of the second's messages not received.
    pub missing: Vec<u64>,
    /// The server tree's largest summed RSS in the second, MiB.
    pub rss_mib: Vec<Option<f64>>,
}
