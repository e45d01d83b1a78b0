//! The results document (`results.json`): the lab's public interface, versioned.
//!
//! `schema/results.schema.json` describes it; a test checks real output against that schema.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::Summary;

/// Version of the results document; bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole results document of one `asynclab run`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// Version of this document's layout ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// `asynclab <version>` that wrote the document.
    pub generated_by: String,
    /// When the run started, RFC 3339 in UTC.
    pub started_at: String,
    /// The machine, interpreters and services the numbers were measured on.
    pub env: Environment,
    /// How the cells were measured (rounds, warm-ups, order).
    pub method: Method,
    /// One entry per matrix cell: scenario × variant × parameters × interpreter.
    pub cells: Vec<Cell>,
    /// Open-loop rate sweeps derived from the cells: per variant, latency against offered rate
    /// and the knee (`runner::sweep::analyze`); empty when no cell ran open loop.
    #[serde(default)]
    pub sweeps: Vec<crate::runner::sweep::Sweep>,
}

/// How a run was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Method {
    /// Measured rounds; every cell runs once per round.
    pub rounds: usize,
    /// Warm-up runs per cell before the first round (discarded).
    pub warmups: usize,
    /// Order of cells inside a round.
    pub order: String,
    /// Whether `--quick` was given.
    pub quick: bool,
    /// CPUs the workers were pinned to (`--cpus`); empty when not pinned.
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// Scenarios measured with other rounds or warm-ups than the above (the catalogue's
    /// per-scenario `rounds`/`warmups`), by scenario name.
    #[serde(default)]
    pub scenario_plans: BTreeMap<String, ScenarioPlan>,
}

/// Rounds and warm-ups of one scenario, where they differ from the run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioPlan {
    /// Measured rounds.
    pub rounds: usize,
    /// Warm-up runs per cell (discarded).
    pub warmups: usize,
}

/// The machine and software the numbers come from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Environment {
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// Logical CPUs available to the lab.
    pub cores: usize,
    /// CPU frequency governor, or "unavailable" where the kernel exposes none (VMs).
    pub governor: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Total memory in MiB.
    pub memory_total_mib: u64,
    /// 1, 5 and 15 minute load averages before the run.
    pub load_avg_before: [f64; 3],
    /// 1, 5 and 15 minute load averages after the run (set when the run ends).
    pub load_avg_after: Option<[f64; 3]>,
    /// `git rev-parse HEAD` of the lab, with `-dirty` when the tree has changes.
    pub git_commit: String,
    /// One entry per interpreter used.
    pub pythons: Vec<PythonInfo>,
    /// The database the `db` scenarios ran against, when one was used.
    pub postgres: Option<String>,
    /// The mock HTTP server's address, when it was started.
    pub mock_http: Option<String>,
    /// Notes about the environment that a reader should know (busy machine, governor...).
    pub warnings: Vec<String>,
}

/// One interpreter and its environment's packages.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PythonInfo {
    /// Full version, e.g. "3.12.1".
    pub version: String,
    /// Implementation name, e.g. "cpython".
    pub implementation: String,
    /// The environment's interpreter path.
    pub executable: String,
    /// Compiler the interpreter was built with (sysconfig CC).
    pub compiler: String,
    /// Configure flags of the build (sysconfig CONFIG_ARGS).
    pub config_args: String,
    /// Installed package versions in the environment.
    pub packages: BTreeMap<String, String>,
}

/// Outcome of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    /// Still being measured (the document is rewritten after every run).
    Running,
    /// Every round measured.
    Ok,
    /// A run crashed, hung or reported an error; later rounds of this cell were skipped.
    Failed,
    /// The cell cannot run in this environment (an optional package such as an event loop is
    /// not installed); `failure` says why and how to get it. Does not fail the run.
    Skipped,
}

/// One matrix cell and its measurements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Stable id: scenario/variant/python/params.
    pub id: String,
    /// Scenario name from the catalogue.
    pub scenario: String,
    /// Variant name (sync, threads, asyncio, multiprocessing, ...).
    pub variant: String,
    /// Interpreter version string.
    pub python: String,
    /// Event loop (from the `loop` parameter), when the scenario has one.
    #[serde(rename = "loop")]
    pub event_loop: Option<String>,
    /// The cell's parameters, typed as in the catalogue.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Matrix-axis values that set the cell apart from others of its variant (e.g.
    /// `concurrency=100`); the decision table compares cells of one group.
    #[serde(default)]
    pub group: String,
    /// How the decision table ranks the scenario's variants: throughput, memory or none.
    #[serde(default)]
    pub decide_by: String,
    /// Running, ok or failed.
    pub status: CellStatus,
    /// Why the cell failed (one line plus the tail of the worker's stderr) or was skipped.
    pub failure: Option<String>,
    /// Measured runs (warm-ups excluded).
    pub runs: Vec<RunRecord>,
    /// Aggregates over the runs; present once one run succeeded.
    pub summary: Option<CellSummary>,
    /// Warnings about this cell's numbers (spread, outliers, request-count mismatch).
    pub warnings: Vec<String>,
}

/// One measured run of a cell: one fresh worker process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// Round index, from 0.
    pub round: usize,
    /// Wall time from `go` to `done`, measured by the driver, in seconds.
    pub wall_s: f64,
    /// The worker's own wall time around its timed part, in seconds.
    pub inside_wall_s: f64,
    /// User + system CPU time of the process tree between `go` and `done`, in seconds.
    pub cpu_s: f64,
    /// RSS of the process tree at `ready`, in MiB.
    pub baseline_rss_mib: f64,
    /// Peak RSS of the process tree after `go`, in MiB.
    pub peak_rss_mib: f64,
    /// Peak minus baseline, in MiB.
    pub peak_rss_delta_mib: f64,
    /// How memory was measured: `rss-hwm` (one process: VmHWM reset at ready, over RSS at
    /// ready) or `pss-tree-sampled` (several processes: PSS summed over the tree, sampled
    /// every 20 ms, so shared pages are divided among their sharers).
    #[serde(default)]
    pub memory_metric: String,
    /// Operations completed without error.
    pub ops: u64,
    /// Operations that failed.
    pub errors: u64,
    /// Requests the mock server counted during the run, when it was used.
    pub server_requests: Option<u64>,
    /// ops / wall_s.
    pub throughput_per_s: f64,
    /// What the latencies measure: "service" (from the actual send) or a corrected kind.
    pub latency_kind: String,
    /// Per-operation latencies in milliseconds.
    pub latencies_ms: Vec<f64>,
    /// Further per-operation latency sets by name (e.g. `from_batch`: queueing included), ms.
    #[serde(default)]
    pub latency_sets_ms: BTreeMap<String, Vec<f64>>,
    /// Up to five error messages from the worker.
    pub error_samples: Vec<String>,
    /// Scenario-specific numbers reported by the worker.
    pub extra: serde_json::Value,
}

/// Latency percentiles over all operations of all rounds of a cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencySummary {
    /// What is measured: "service" = from the actual send (closed loop), see docs.
    pub kind: String,
    /// Number of latency samples.
    pub count: usize,
    /// Median, ms.
    pub p50: f64,
    /// 95th percentile, ms.
    pub p95: f64,
    /// 99th percentile, ms.
    pub p99: f64,
    /// Largest, ms.
    pub max: f64,
    /// Each round's own p50 over the rounds that recorded this set: median with min–max and a
    /// bootstrap 95 % interval, so the pooled percentile above carries its spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_over_rounds: Option<crate::stats::Summary>,
    /// Each round's own p99 over the rounds, like `p50_over_rounds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_over_rounds: Option<crate::stats::Summary>,
}

/// Aggregates of a cell over its rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellSummary {
    /// Number of measured rounds.
    pub rounds: usize,
    /// Operations per second of wall time, over rounds.
    pub throughput_per_s: Summary,
    /// Wall time per run in seconds, over rounds.
    pub wall_s: Summary,
    /// CPU seconds per run, over rounds.
    pub cpu_s: Summary,
    /// Peak RSS delta in MiB, over rounds.
    pub peak_rss_delta_mib: Summary,
    /// Latency percentiles pooled over all rounds' operations.
    pub latency_ms: Option<LatencySummary>,
    /// Percentiles of the further latency sets, by name, pooled over rounds.
    #[serde(default)]
    pub latency_sets_ms: BTreeMap<String, LatencySummary>,
    /// The main latencies as an HdrHistogram (µs, 3 significant digits), pooled over rounds:
    /// p50 … p99.99 exact to 0.1%, and the histogram itself.
    #[serde(default)]
    pub latency_hist: Option<crate::stats::hdr::LatencyHistogram>,
    /// The further latency sets as HdrHistograms, by name.
    #[serde(default)]
    pub latency_sets_hist: BTreeMap<String, crate::stats::hdr::LatencyHistogram>,
    /// Total operations over rounds.
    pub ops: u64,
    /// Total errors over rounds.
    pub errors: u64,
}
