//! The results document (`results.json`): the lab's public interface, versioned.
//!
//! `schema/results.schema.json` describes it; tests check real output and every field of these
//! types against that schema. [`Results::load`] is the one reader, for every subcommand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::stats::Summary;

/// Version of the results document; bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The oldest `schema_version` this build still reads (every one up to [`SCHEMA_VERSION`]).
pub const OLDEST_SCHEMA_VERSION: u32 = 1;

/// What a rejected results document's error line suggests.
const LOAD_FIX: &str = "give a results folder written by `asynclab run` (or its results.json)";

/// The results.json of `dir_or_file`: `DIR/results.json` for a folder, else the path itself.
pub fn json_path(dir_or_file: &Path) -> PathBuf {
    if dir_or_file.is_dir() {
        dir_or_file.join("results.json")
    } else {
        dir_or_file.to_path_buf()
    }
}

impl Results {
    /// Reads a results document from a results folder or a results.json path. Fails with one
    /// line naming the file and the fix: unreadable, not JSON, no `schema_version`, a schema
    /// this build cannot read (checked before the fields, so a newer document is reported as
    /// newer, not as missing a field), or fields that do not match the schema.
    pub fn load(dir_or_file: &Path) -> anyhow::Result<Results> {
        let file = json_path(dir_or_file);
        let shown = file.display();
        let text = std::fs::read_to_string(&file)
            .map_err(|e| anyhow::anyhow!("cannot read {shown}: {e}; {LOAD_FIX}"))?;
        Self::parse(&text, &shown.to_string())
    }

    /// Parses the text of a results document; `shown` names it in the errors, which are one
    /// line each, as [`Results::load`]'s.
    pub fn parse(text: &str, shown: &str) -> anyhow::Result<Results> {
        let fix = LOAD_FIX;
        let doc: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("{shown} is not JSON ({e}); {fix}"))?;
        let version = doc
            .get("schema_version")
            .and_then(serde_json::Value::as_u64);
        let Some(version) = version else {
            anyhow::bail!("{shown} is not a results document (no schema_version); {fix}");
        };
        if version > u64::from(SCHEMA_VERSION) {
            anyhow::bail!(
                "{shown} was written by a newer asynclab (schema {version}, this build reads ≤ {SCHEMA_VERSION}): upgrade asynclab"
            );
        }
        if version < u64::from(OLDEST_SCHEMA_VERSION) {
            anyhow::bail!(
                "{shown} has schema_version {version}, older than any asynclab wrote; {fix}"
            );
        }
        serde_json::from_str(text).map_err(|e| {
            anyhow::anyhow!("{shown} is not a results document of schema {version} ({e}); {fix}")
        })
    }
}

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
    /// What the catalogue says of each scenario measured (title, question, baseline), by name,
    /// so the report can say it; empty in documents written before it was recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scenarios: BTreeMap<String, ScenarioInfo>,
    /// Open-loop rate sweeps derived from the cells: per variant, latency against offered rate
    /// and the knee; empty when no cell ran open loop. A derived copy for outside readers
    /// (`analysis::summary::derive` writes it; the lab derives it again when it reads).
    #[serde(default)]
    pub sweeps: Vec<Sweep>,
    /// How the document was made: the command line, where it ran, and the resolved study that
    /// `asynclab rerun` runs again; absent in documents written before reruns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<Invocation>,
    /// The Rust reference clients' runs (a scenario's `ceiling`), one record per setting:
    /// what a Python variant's throughput is a fraction of; empty when none ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ceilings: Vec<CeilingRecord>,
    /// A/A twins: a second copy of a scenario's baseline cell, run in the same rounds, whose
    /// ratio to it measures what the run can tell apart (`analysis::resolution`); kept apart
    /// from `cells` so no table, chart or comparison counts them as variants. Empty where none
    /// ran (`--no-twins`, fewer than 3 rounds, or a document from before twins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub twins: Vec<Cell>,
    /// Scenarios asked for that did not run because a service they need could not be had
    /// (without `--strict`); empty when every scenario ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedScenario>,
    /// Interpreters asked for that could not be found (without `--strict`, when another one
    /// was): every scenario ran on the others; empty when every interpreter ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_pythons: Vec<SkippedPython>,
}

/// A scenario the run left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedScenario {
    /// The scenario's name.
    pub scenario: String,
    /// The service it needs (`postgres`).
    pub service: String,
    /// Why that service could not be had, and the fix.
    pub reason: String,
}

/// An interpreter the run was asked for and could not find.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkippedPython {
    /// As given (`3.14`, a path).
    pub python: String,
    /// Why it could not be had, and the fix.
    pub reason: String,
}

/// A Rust reference client (src/reference/) at one setting of a scenario: the same load as the
/// cells with these parameters (concurrency, ops, requests of k queries, the delay line), run by
/// the driver once per round after the scenario's rounds, on the workers' CPUs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CeilingRecord {
    /// Scenario name.
    pub scenario: String,
    /// The parameters of the cells it stands beside (every variant with exactly these).
    pub params: BTreeMap<String, serde_json::Value>,
    /// The client: `reqwest` (against the mock server) or `tokio-postgres`.
    pub client: String,
    /// One run per round.
    pub runs: Vec<CeilingRun>,
    /// Throughput over the runs, ops per second; absent when every run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_per_s: Option<crate::stats::Summary>,
    /// Why it could not run, when it could not (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// What one reference-client run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CeilingRun {
    /// Ops completed (successfully; one latency each).
    pub ops: u64,
    /// Failed ops (HTTP status other than 2xx, transport or query errors).
    pub errors: u64,
    /// Wall time of the timed region, s.
    pub wall_s: f64,
    /// Throughput: `ops / wall_s`, ops per second.
    pub throughput_per_s: f64,
    /// Median per-op latency of the completed ops, ms (NaN, `null` in JSON, when none).
    #[serde(with = "crate::stats::serde_nan")]
    pub latency_p50_ms: f64,
    /// 99th percentile per-op latency of the completed ops, ms (NaN, `null` in JSON, when none).
    #[serde(with = "crate::stats::serde_nan")]
    pub latency_p99_ms: f64,
    /// Sum of the returned `value`s (postgres) or body bytes received, error bodies included
    /// (http): shows the work was done.
    pub checksum: u64,
    /// Worker threads of the client's runtime (CPUs in the caller's affinity mask).
    pub worker_threads: usize,
    /// The first failure's message, when there were errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// The command that wrote a results document, and every choice it resolved to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    /// The exact command line (`std::env::args()`), program first.
    #[serde(default)]
    pub argv: Vec<String>,
    /// The working directory it ran in.
    #[serde(default)]
    pub cwd: String,
    /// The resolved study: study file, flags and defaults merged, in a study file's shape.
    #[serde(default)]
    pub study: crate::study::Study,
}

/// What the catalogue says of one scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    /// One line saying what is measured.
    pub title: String,
    /// The question the scenario answers.
    #[serde(default)]
    pub question: String,
    /// The variant ratios are computed against (default: the first).
    #[serde(default)]
    pub baseline: Option<String>,
    /// The comparisons that answer the question (the catalogue's contrasts); empty in
    /// documents from before they were recorded, and for scenarios without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contrasts: Vec<crate::catalogue::Contrast>,
}

/// `memory_metric` of a run of one process: VmHWM (reset at ready) over RSS at ready.
pub const MEMORY_RSS_HWM: &str = "rss-hwm";
/// `memory_metric` of a run of a process tree: PSS summed over the tree, sampled.
pub const MEMORY_PSS_TREE: &str = "pss-tree-sampled";

/// How a run was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Method {
    /// Measured rounds; every cell runs once per round.
    pub rounds: usize,
    /// Warm-up runs per cell before the first round (discarded).
    pub warmups: usize,
    /// Order of cells inside a round.
    pub order: String,
    /// Seed of the random order within each round (`--order-seed` replays it); absent in
    /// documents from before rounds were shuffled (their order rotated by one each round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// Whether `--quick` was given.
    pub quick: bool,
    /// CPUs the workers were pinned to (`--cpus`); empty when not pinned.
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// Where the services, the driver and the workers ran (`--placement`); absent in documents
    /// from before placement was recorded (nothing was pinned but `--cpus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementRecord>,
    /// Scenarios measured with other rounds or warm-ups than the above (the catalogue's
    /// per-scenario `rounds`/`warmups`), by scenario name.
    #[serde(default)]
    pub scenario_plans: BTreeMap<String, ScenarioPlan>,
    /// The smallest difference a verdict counts, as a fraction of the baseline
    /// (`--noise-threshold`): a ratio is significant only when its 95 % interval lies beyond
    /// `[1 / (1 + t), 1 + t]`. Absent in documents from before it was recorded, which are
    /// analysed with the default ([`Method::noise_threshold`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_threshold: Option<f64>,
    /// Significance level of the Mann–Whitney test every verdict uses (`--alpha`); absent in
    /// documents from before it was recorded, which are analysed with the default
    /// ([`Method::alpha`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// The adaptive rounds' stopping rule in words (`--max-rounds`); each cell records its
    /// own least and most rounds and why it stopped. Absent with fixed rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<String>,
    /// The run's time budget (`--budget`), seconds from the services' start; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// When a run counted as contaminated by other programs, and how often it was repeated;
    /// absent in documents from before interference was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<InterferencePolicy>,
    /// The delay lines put between workers and services (cells with `rtt_ms` or `jitter_ms`
    /// above 0); empty when every cell talked to its services directly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delay_lines: Vec<DelayLineRecord>,
    /// Where the run's roles ran when they were apart (`--hosts containers`): each role's
    /// container, image and CPUs, and the round trips measured between them; absent when
    /// everything ran on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<HostsRecord>,
    /// The CPU wake-up latency request in force while the run measured: "held at 0 µs ..."
    /// (idle CPUs poll, so the lab's timers and every wake-up are prompt) or "not held (why)";
    /// absent in documents from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_hold: Option<String>,
}

impl Method {
    /// Measured rounds of `scenario`: its own plan where it had one (`scenario_plans`), else
    /// the run's `rounds`.
    pub fn rounds_of(&self, scenario: &str) -> usize {
        self.scenario_plans
            .get(scenario)
            .map_or(self.rounds, |p| p.rounds)
    }

    /// The run's significance level, or the default for documents that do not record one.
    pub fn alpha(&self) -> f64 {
        self.alpha.unwrap_or(crate::stats::ALPHA)
    }

    /// The run's noise threshold, or the default for documents that do not record one.
    pub fn noise_threshold(&self) -> f64 {
        self.noise_threshold
            .unwrap_or(crate::stats::DEFAULT_NOISE_THRESHOLD)
    }
}

/// One delay line a run started: a TCP proxy in front of one service
/// (src/services/delay_line.rs), released on a sub-millisecond timer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DelayLineRecord {
    /// The service behind it: `http`, `postgres` or `echo`.
    pub service: String,
    /// Round trip it adds, ms (half each way).
    pub rtt_ms: f64,
    /// Uniform jitter per direction, ms: each chunk waits U[0, 2 × jitter_ms] more.
    pub jitter_ms: f64,
}

/// Where the roles of a run ran (`--hosts containers`): one container per role on a private
/// network of one Docker engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostsRecord {
    /// How the roles were placed: `containers`.
    pub mode: String,
    /// The Docker engine's address (`unix:///var/run/docker.sock`, `tcp://...`).
    pub engine: String,
    /// The private network the roles shared.
    pub network: String,
    /// One entry per role: `client`, `server`, `database`.
    pub roles: Vec<RoleRecord>,
    /// Round trips measured from the client to the other roles, over the path the cells used.
    pub round_trips: Vec<RoundTripRecord>,
}

/// One role's host: its container, image, address and CPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleRecord {
    /// `client` (the driver and its workers), `server` (the mock HTTP and echo servers) or
    /// `database` (PostgreSQL).
    pub role: String,
    /// The container's name.
    pub container: String,
    /// The image it ran, and the image's id (`sha256:...`).
    pub image: String,
    /// The image's id.
    pub image_id: String,
    /// Its address on the private network.
    pub address: String,
    /// Its CPU set (`--cpuset-cpus`).
    pub cpus: Vec<usize>,
}

/// What one role's processes used during a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleUsage {
    /// `server` or `database`.
    pub role: String,
    /// CPU seconds of the role's process tree between `go` and `done` (the scheduler's
    /// runtime, as for PostgreSQL's short-lived backends).
    pub cpu_s: f64,
    /// Memory of the role's process tree at `done`, MiB: PSS summed, so pages its processes
    /// share (PostgreSQL's shared buffers) count once.
    pub pss_mib: f64,
}

/// Round trips between two roles: a reader sees the distance every number of the run includes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundTripRecord {
    /// The role that sent (`client`).
    pub from: String,
    /// The role that answered.
    pub to: String,
    /// What went over the path: "64-byte TCP echo ping-pong" or "SELECT 1".
    pub probe: String,
    /// Round trips timed (after warm-up ones).
    pub samples: usize,
    /// Median round trip, ms.
    pub median_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
}

/// `--placement`: how the services and the workers share the machine's CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PlacementPolicy {
    /// Services and the driver on the first allowed CPU, the workers of service scenarios on
    /// the others (unpinned on a one-CPU machine).
    Split,
    /// Services, the driver and the workers of service scenarios all on the first allowed CPU
    /// (the default).
    Shared,
    /// Nothing pinned: the kernel places everything (what the lab did before placement).
    Unpinned,
}

impl PlacementPolicy {
    /// The flag's spelling of the policy (and its name in results.json).
    pub fn name(self) -> &'static str {
        match self {
            PlacementPolicy::Split => "split",
            PlacementPolicy::Shared => "shared",
            PlacementPolicy::Unpinned => "unpinned",
        }
    }
}

impl std::fmt::Display for PlacementPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the lab's processes ran: the CPUs of the services and the driver, and of the workers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementRecord {
    /// The policy asked for: `split`, `shared` or `unpinned`.
    pub policy: PlacementPolicy,
    /// The policy in force (`unpinned` when the machine had one CPU to give).
    pub effective: PlacementPolicy,
    /// CPUs the driver and the services it started were pinned to; empty: not pinned.
    pub service_cpus: Vec<usize>,
    /// CPUs of the workers of scenarios that use a service; empty: not pinned.
    pub service_worker_cpus: Vec<usize>,
    /// CPUs of the workers of scenarios that use none; empty: not pinned.
    pub other_worker_cpus: Vec<usize>,
    /// Services outside the placement (PostgreSQL in a container or at DATABASE_URL), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_placed: Option<String>,
}

/// The limits a run was held to (`--max-foreign-cores`, `--repeats`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterferencePolicy {
    /// A run whose foreign CPU (or steal) exceeded this many cores' worth was contaminated.
    pub max_foreign_cores: f64,
    /// Foreign CPU below this many seconds never counted (the counters' resolution).
    pub floor_s: f64,
    /// How many times a contaminated run was repeated in its round.
    pub repeats: usize,
    /// What the machine-speed probe timed (absent before it was a 4 MiB walk: 3,000,000
    /// xorshift steps in registers, about 5 ms, whose figures do not compare with the walk's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<String>,
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
    /// Whether the build is free-threaded (sysconfig `Py_GIL_DISABLED`); absent in documents
    /// from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gil_disabled_build: Option<bool>,
    /// Whether the GIL was on when the worker ran (`sys._is_gil_enabled()`, 3.13+; true before
    /// 3.13); absent in documents from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gil_enabled: Option<bool>,
    /// Where the interpreter comes from: its `sys.base_prefix`, and for one in a Debian root
    /// (`asynclab pythons add`) the root's suite and the package's version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub provenance: String,
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
    /// How the decision table ranks the scenario's variants: throughput, memory or none;
    /// `""` in documents from before it was recorded.
    #[serde(default = "unrecorded")]
    pub decide_by: crate::catalogue::DecideBy,
    /// Running, ok or failed.
    pub status: CellStatus,
    /// Why the cell failed (one line plus the tail of the worker's stderr) or was skipped.
    pub failure: Option<String>,
    /// Measured runs (warm-ups excluded).
    pub runs: Vec<RunRecord>,
    /// Aggregates over the measured runs; present once one run succeeded. A derived copy for
    /// outside readers (`analysis::summary::derive` writes it; the lab derives it again when
    /// it reads).
    pub summary: Option<CellSummary>,
    /// Warnings about this cell's numbers (spread, outliers), derived with the summary.
    pub warnings: Vec<String>,
    /// Its adaptive rounds (`--max-rounds`): the least and most it could run, and why it
    /// stopped; absent with fixed rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveRounds>,
    /// The timelines of its warm-up runs, whose measurements are not kept: the time they took
    /// is part of the run's account of where its time went.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup_timelines: Vec<Timeline>,
    /// The id of the cell this one repeats as its A/A twin (the same variant, parameters and
    /// interpreter, run a second time in every round); absent for every other cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twin_of: Option<String>,
}

/// A cell measured in adaptive rounds: checked after every round from `min_rounds` on, stopped
/// when every comparison it takes part in is settled, or at `max_rounds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveRounds {
    /// Rounds before the first check.
    pub min_rounds: usize,
    /// Rounds it stops at whatever its comparisons say.
    pub max_rounds: usize,
    /// How it stopped; None while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<RoundsStop>,
}

impl AdaptiveRounds {
    /// The looks the comparison rule spends its significance level over.
    pub fn looks(&self) -> crate::stats::Looks {
        crate::stats::Looks {
            min: self.min_rounds,
            max: self.max_rounds,
        }
    }
}

/// Why an adaptive cell stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsStop {
    /// Rounds it had measured.
    pub rounds: usize,
    /// What stopped it.
    pub cause: StopCause,
    /// The comparisons' states in words: why each is settled, or which were still open.
    pub reason: String,
}

/// What stopped an adaptive cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopCause {
    /// Every comparison it takes part in was settled: a significant difference, equal within
    /// the noise band, or inconclusive for good.
    Settled,
    /// It reached its most rounds with a comparison still open.
    Maximum,
    /// The run's time budget left no time for another round, with a comparison still open.
    Budget,
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
    /// What the other roles used during the run, when they ran apart (`--hosts containers`):
    /// read from /proc on this machine, like the worker's own figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleUsage>,
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
    /// What else used the machine while the run was timed, and whether that spoiled it;
    /// absent in documents from before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<Interference>,
    /// Scenario-specific figures reported by the worker, typed where the lab reads them
    /// ([`crate::extras::Extras`]; docs/protocol.md lists them).
    #[serde(default, deserialize_with = "crate::extras::null_as_default")]
    pub extra: crate::extras::Extras,
    /// When the run's phases happened on the driver's clock: where a run's time outside the
    /// timed region goes (absent in documents from before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
}

/// One run's phases, in seconds since the driver's clock started (one origin per document):
/// `spawned_s` to `ready_s` is interpreter start-up, imports and the worker's set-up; `go_s` to
/// `done_s` the timed region; `done_s` to `exited_s` the result, the worker's exit and the
/// closing machine-speed probe. The gap between one run's `exited_s` and the next one's
/// `spawned_s` is the driver's own work (saving the document, the stopping rule, the reference
/// clients).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub spawned_s: f64,
    pub ready_s: f64,
    pub go_s: f64,
    pub done_s: f64,
    pub exited_s: f64,
}

/// What else used the machine while one run was timed (from `go` to `done`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interference {
    /// CPU seconds used on the machine (user + system time of every process, from
    /// /proc/stat) by everything but the worker's process tree, the lab's services, the driver
    /// itself and the kernel's threads.
    pub foreign_cpu_s: f64,
    /// `foreign_cpu_s` over the run's wall time: cores' worth of foreign work, on average.
    pub foreign_cores: f64,
    /// CPU time the hypervisor gave to others while this VM wanted it (steal), seconds.
    pub steal_s: f64,
    /// CPU seconds of the kernel's own threads (ksoftirqd, kworkers: network and memory work,
    /// much of it on the lab's behalf), counted apart from `foreign_cpu_s`.
    #[serde(default)]
    pub kernel_cpu_s: f64,
    /// Times the worker's processes were switched out against their will (involuntary
    /// context switches, summed over its threads).
    pub involuntary_switches: u64,
    /// A fixed reference work (`method.interference.probe`) timed in the driver just before
    /// `go`, ms (fastest of three): its drift across a run shows a slower machine even when
    /// /proc sees nothing (though not a slowdown of the worker's own CPU during its run).
    pub probe_before_ms: f64,
    /// The same reference work once the worker has exited after `done`, ms (timed at `done`
    /// it would share the CPU with the worker writing its result).
    pub probe_after_ms: f64,
    /// Whether the run counts as spoiled (`reason` says why): it is kept, repeated in the
    /// same round, and left out of the cell's summary and comparisons.
    pub contaminated: bool,
    /// Why it is contaminated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
    /// Number of measured rounds (clean runs: contaminated ones are left out).
    pub rounds: usize,
    /// Runs left out because the machine interfered (each was repeated in its round).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contaminated_runs: usize,
    /// Rounds without one clean run: the machine stayed busy through every repeat.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rounds_without_clean_run: usize,
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

/// Where a sweep's knee is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Knee {
    /// A sustained rate followed by a saturated one: the knee is between them.
    Reached,
    /// No rate saturated: the knee is above the highest rate tried.
    NotReached,
    /// The lowest rate tried saturated already.
    BelowLowestRate,
}

impl Knee {
    /// Words for tables.
    pub fn text(self) -> &'static str {
        match self {
            Knee::Reached => "reached",
            Knee::NotReached => "not reached",
            Knee::BelowLowestRate => "below the lowest rate",
        }
    }
}

/// One offered rate of a sweep: one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The cell measured at this rate.
    pub cell_id: String,
    /// Requests per second the schedule asked for.
    pub offered_rate_per_s: f64,
    /// Requests actually sent per second, median over rounds.
    pub achieved_rate_per_s: Option<f64>,
    /// p50 from the intended start (open-loop corrected), ms, pooled over rounds.
    pub corrected_p50_ms: Option<f64>,
    /// p99 from the intended start, ms.
    pub corrected_p99_ms: Option<f64>,
    /// p99.9 from the intended start, ms (from the pooled histogram; meaningful with 1,000
    /// requests or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrected_p99_9_ms: Option<f64>,
    /// p50 from the actual send (uncorrected), ms.
    pub uncorrected_p50_ms: Option<f64>,
    /// p99 from the actual send, ms.
    pub uncorrected_p99_ms: Option<f64>,
    /// Requests never sent because the run reached twice its duration, summed over rounds.
    pub abandoned: u64,
    /// Whether the variant failed to keep up at this rate (see the module docs).
    pub saturated: bool,
    /// Why it counts as saturated.
    pub reason: Option<String>,
}

/// One variant's latency against offered rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// Scenario name.
    pub scenario: String,
    /// Variant name.
    pub variant: String,
    /// Interpreter version.
    pub python: String,
    /// The parameters shared by every point (all but `rate_per_s`).
    pub params: BTreeMap<String, Value>,
    /// The latency the p99 rule compares with, ms (`delay_ms`, or the lowest rate's p50).
    pub reference_ms: Option<f64>,
    /// Points by increasing offered rate.
    pub points: Vec<SweepPoint>,
    /// Where the knee is.
    pub knee: Knee,
    /// The highest offered rate sustained below the first saturated one, per second.
    pub knee_rate_per_s: Option<f64>,
    /// The lowest offered rate that saturated, per second.
    pub saturated_rate_per_s: Option<f64>,
}

fn unrecorded() -> crate::catalogue::DecideBy {
    crate::catalogue::DecideBy::Unrecorded
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A `--quick` run's results.json committed for tests (io_http and cpu, three rounds).
#[cfg(test)]
pub const QUICK_FIXTURE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/results/quick.json");

/// [`QUICK_FIXTURE`], loaded.
#[cfg(test)]
pub fn quick_fixture() -> Results {
    Results::load(Path::new(QUICK_FIXTURE)).expect("the committed quick.json loads")
}

/// The hand-made results document the snapshot tests render (`src/export/tests.rs`): three
/// scenarios with a contaminated run, a failed and a skipped cell, latencies, `extra.ops` and
/// a scenario of its own rounds (tests/data/results/README.md).
#[cfg(test)]
pub const SNAPSHOT_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/snapshot.json"
);

/// [`SNAPSHOT_FIXTURE`], loaded.
#[cfg(test)]
pub fn snapshot_fixture() -> Results {
    Results::load(Path::new(SNAPSHOT_FIXTURE)).expect("the committed snapshot.json loads")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error line `Results::load` gives for a results.json holding `text`.
    fn load_error(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("results.json"), text).unwrap();
        let e = Results::load(dir.path()).unwrap_err();
        let line = format!("{e:#}");
        assert!(!line.contains('\n'), "one line: {line}");
        assert!(line.contains("results.json"), "names the file: {line}");
        line
    }

    #[test]
    fn loads_a_folder_or_its_results_json() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(QUICK_FIXTURE, dir.path().join("results.json")).unwrap();
        let from_dir = Results::load(dir.path()).unwrap();
        let from_file = Results::load(&dir.path().join("results.json")).unwrap();
        assert_eq!(from_dir.schema_version, SCHEMA_VERSION);
        assert_eq!(from_dir.cells.len(), from_file.cells.len());
    }

    #[test]
    fn a_newer_schema_is_reported_as_newer_not_as_a_missing_field() {
        let line = load_error(r#"{"schema_version": 99, "something_new": true}"#);
        assert!(
            line.contains(
                "written by a newer asynclab (schema 99, this build reads ≤ 1): upgrade asynclab"
            ),
            "{line}"
        );
    }

    #[test]
    fn broken_documents_get_one_line_with_the_fix() {
        for (text, needle) in [
            ("{", "is not JSON"),
            (r#"{"cells": []}"#, "no schema_version"),
            (r#"{"schema_version": "1"}"#, "no schema_version"),
            (r#"{"schema_version": 0}"#, "older than any asynclab wrote"),
            (
                r#"{"schema_version": 1}"#,
                "is not a results document of schema 1",
            ),
        ] {
            let line = load_error(text);
            assert!(line.contains(needle), "{text}: {line}");
            assert!(
                line.contains("asynclab run"),
                "{text}: says the fix: {line}"
            );
        }
        let empty = tempfile::tempdir().unwrap();
        let line = format!("{:#}", Results::load(empty.path()).unwrap_err());
        assert!(
            line.starts_with("cannot read ") && line.contains("asynclab run"),
            "{line}"
        );
    }
}
