//! Reads `workloads/catalogue.toml` (and a user's own catalogues, `--catalogue FILE`):
//! scenarios, variants and parameter matrices, as data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;
use crate::toml_input::{self, Fault};

mod narrow;
pub mod servers;
pub use narrow::narrow;
pub use servers::{Server, ServerKind};

/// What drives a scenario's cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Driver {
    /// A Python worker (`workloads/harness.py`) runs the scenario's script.
    #[default]
    Python,
    /// The lab's load generator drives a service under test: each variant names a
    /// `[[server]]`, started for every run.
    Loadgen,
}

/// A service a scenario needs started before its workers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Service {
    /// The mock HTTP server.
    Http,
    /// PostgreSQL, seeded.
    Postgres,
    /// The TCP echo server.
    Echo,
}

impl Service {
    /// Its name in the catalogue: `http`, `postgres`, `echo`.
    pub fn name(self) -> &'static str {
        match self {
            Service::Http => "http",
            Service::Postgres => "postgres",
            Service::Echo => "echo",
        }
    }
}

/// Parameters every scenario with a service has without declaring them: the round trip (ms)
/// a delay line adds between the workers and the services, and its uniform jitter (ms per
/// direction). The driver applies them; scripts only see the services' addresses, which then
/// point through the line. 0 (or absent) means no delay line at all.
pub const NETWORK_PARAMS: [&str; 2] = ["rtt_ms", "jitter_ms"];

/// `rtt_ms` and `jitter_ms`, where a scenario sets them: numbers of ms from 0 to 10,000 (or
/// lists of them), and only in a scenario that has a service to put the delay line before.
fn check_network_params(s: &Scenario) -> anyhow::Result<()> {
    let tables = std::iter::once(&s.params)
        .chain(s.variant_params.values())
        .chain(std::iter::once(&s.quick));
    for table in tables {
        for key in NETWORK_PARAMS {
            let Some(v) = table.get(key) else { continue };
            if !s.has_network() {
                anyhow::bail!(
                    "scenario {}: {key} needs a service to delay; add services = [...] or remove {key}",
                    s.name
                );
            }
            let values = match v {
                toml::Value::Array(a) => a.clone(),
                one => vec![one.clone()],
            };
            let ms = |v: &toml::Value| match v {
                toml::Value::Integer(i) => Some(*i as f64),
                toml::Value::Float(f) => Some(*f),
                _ => None,
            };
            if let Some(bad) = values
                .iter()
                .find(|v| !ms(v).is_some_and(|ms| ms.is_finite() && (0.0..=10_000.0).contains(&ms)))
            {
                anyhow::bail!(
                    "scenario {}: {key} = {bad} is not a number of milliseconds from 0 to 10000",
                    s.name
                );
            }
        }
    }
    Ok(())
}

/// One scenario: a script and its variants.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name used with `--scenario`.
    pub name: String,
    /// Script file, relative to the catalogue's folder (a user catalogue's scripts are made
    /// absolute when it is added to the built-in one, see [`Catalogue::load_with`]); none for a
    /// `loadgen` scenario.
    #[serde(default)]
    pub script: String,
    /// `python` (default): a worker runs the script; `loadgen`: the lab's load generator drives
    /// the `[[server]]` each variant names.
    #[serde(default)]
    pub driver: Driver,
    /// One line saying what is measured.
    pub title: String,
    /// What the scenario answers, for the report.
    #[serde(default)]
    pub question: String,
    /// Services to start.
    #[serde(default, alias = "fixtures")]
    pub services: Vec<Service>,
    /// Variants, in report order.
    pub variants: Vec<String>,
    /// The variant speed-ups are computed against (default: the first).
    #[serde(default)]
    pub baseline: Option<String>,
    /// Per-run time limit in seconds (the worker is killed past it).
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// Default parameters; an array value is a matrix axis.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// Per-variant parameter overrides.
    #[serde(default)]
    pub variant_params: BTreeMap<String, BTreeMap<String, toml::Value>>,
    /// Overrides applied with `--quick`.
    #[serde(default)]
    pub quick: BTreeMap<String, toml::Value>,
    /// Measured rounds when `--rounds` is not given (default 5; under `--quick`,
    /// `quick_rounds`, else at most 3).
    #[serde(default)]
    pub rounds: Option<usize>,
    /// Measured rounds under `--quick` (default: `rounds`, at most 3): for scenarios whose
    /// ratios need more rounds than 3 to hold still between runs.
    #[serde(default)]
    pub quick_rounds: Option<usize>,
    /// A Rust reference client to run beside the cells at each setting: `postgres`
    /// (tokio-postgres, the point selects of db.py) or `http` (reqwest, io_http.py's GETs).
    #[serde(default)]
    pub ceiling: Option<String>,
    /// Warm-up runs per cell when `--warmups` is not given (default 1).
    #[serde(default)]
    pub warmups: Option<usize>,
    /// Cells to leave out: a table matches when every key matches (`variant` or a parameter;
    /// an array lists accepted values).
    #[serde(default)]
    pub exclude: Vec<BTreeMap<String, toml::Value>>,
    /// Whether the mock server's request count must equal ops + errors.
    #[serde(default)]
    pub check_server_requests: bool,
    /// A correctness study: the worker reports expected-versus-observed rows in
    /// `extra.rows`, and any error fails the run (`make test-db` relies on it).
    #[serde(default)]
    pub correctness: bool,
    /// How the decision table ranks variants: `throughput` (higher is better), `memory`
    /// (peak RSS delta, lower is better) or `none` (left out).
    #[serde(default)]
    pub decide_by: DecideBy,
    /// Keys of the workers' `extra` that every variant must report equal (same rows, same
    /// checksum): a variant that computes something else is caught, not ranked.
    #[serde(default)]
    pub agree: Vec<String>,
    /// Extra packages the script needs beyond the lab's pinned requirements, as uv/pip
    /// requirement strings (`"pkg==1.2"`); `asynclab envs` and `run` install them.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// The comparisons that answer the scenario's question (`[[scenario.contrast]]`): variant
    /// `new` against variant `base` in every setting, on a figure, each optionally one row of
    /// the published decision framework.
    #[serde(default)]
    pub contrast: Vec<Contrast>,
    /// The user catalogue file the scenario came from; `None` for the built-in catalogue.
    #[serde(skip)]
    pub catalogue: Option<PathBuf>,
}

/// The longest per-run time limit a catalogue may ask for: a week.
const MAX_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;

/// Whether `name` can name a scenario (and its script's module): a letter or `_`, then
/// letters, digits or `_`.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One comparison a scenario's question asks for (`[[scenario.contrast]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contrast {
    /// The variant the question asks about.
    pub new: String,
    /// The variant it is held against.
    pub base: String,
    /// The figure compared.
    #[serde(default)]
    pub figure: ContrastFigure,
    /// The row of the decision framework it answers, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<FrameworkRow>,
}

/// The figure a contrast compares, round by round; its ratio is oriented so that above 1 the
/// `new` variant is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContrastFigure {
    /// Throughput, higher is better: new / base.
    #[default]
    Throughput,
    /// Each round's latency p99, lower is better: base / new.
    P99,
    /// Peak RSS above the baseline, lower is better: base / new.
    Memory,
}

/// The seven rows of the published decision framework (should this be async?).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameworkRow {
    /// High-concurrency I/O (100+ connections).
    HighConcurrencyIo,
    /// CPU-heavy work.
    CpuHeavy,
    /// A database on the same host.
    LocalhostDatabase,
    /// A database a network away.
    RemoteDatabase,
    /// Strict p99 requirements.
    StrictP99,
    /// Simple scripts.
    SimpleScripts,
    /// WebSocket / real-time.
    Websocket,
}

impl FrameworkRow {
    /// Every row, in the framework's order.
    pub const ALL: [FrameworkRow; 7] = [
        FrameworkRow::HighConcurrencyIo,
        FrameworkRow::CpuHeavy,
        FrameworkRow::LocalhostDatabase,
        FrameworkRow::RemoteDatabase,
        FrameworkRow::StrictP99,
        FrameworkRow::SimpleScripts,
        FrameworkRow::Websocket,
    ];

    /// The row as the framework words it.
    pub fn text(self) -> &'static str {
        match self {
            FrameworkRow::HighConcurrencyIo => "High-concurrency I/O (100+ connections)",
            FrameworkRow::CpuHeavy => "CPU-heavy work",
            FrameworkRow::LocalhostDatabase => "Localhost database",
            FrameworkRow::RemoteDatabase => "Remote database",
            FrameworkRow::StrictP99 => "Strict p99 requirements",
            FrameworkRow::SimpleScripts => "Simple scripts",
            FrameworkRow::Websocket => "WebSocket / real-time",
        }
    }
}

/// How the decision table ranks a scenario's variants (its catalogue's `decide_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecideBy {
    /// By throughput, higher is better.
    #[default]
    Throughput,
    /// By peak RSS delta, lower is better.
    Memory,
    /// The variants are not alternatives: not ranked, no ratio to a baseline.
    None,
    /// Not recorded (`""`): results documents written before the field was. Compared with
    /// the baseline, not ranked; a catalogue cannot ask for it.
    #[serde(rename = "")]
    Unrecorded,
}

impl DecideBy {
    /// Whether the decision table ranks the variants.
    pub fn ranks(self) -> bool {
        matches!(self, DecideBy::Throughput | DecideBy::Memory)
    }
}

fn default_timeout_s() -> f64 {
    300.0
}

/// The whole catalogue file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    /// Scenarios in catalogue order (a user catalogue may hold only servers).
    #[serde(rename = "scenario", default)]
    pub scenarios: Vec<Scenario>,
    /// Services under test, which `loadgen` scenarios name as variants.
    #[serde(rename = "server", default)]
    pub servers: Vec<Server>,
    /// Folder the catalogue was read from (scripts are relative to it).
    #[serde(skip)]
    pub dir: PathBuf,
}

impl Catalogue {
    /// Reads and checks `DIR/catalogue.toml`.
    pub fn load(dir: &Path) -> anyhow::Result<Catalogue> {
        let path = dir.join("catalogue.toml");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            anyhow::anyhow!(
                "cannot read {}: {e}; run from the asynclab checkout or pass --workloads DIR",
                path.display()
            )
        })?;
        Self::parse(&text, dir).with_context(|| format!("in {}", path.display()))
    }

    /// The built-in catalogue of `workloads` plus each user catalogue in `extra` (in order),
    /// whose scripts are resolved relative to that file's folder. A user scenario may not take
    /// a name already in use, nor a script whose module name the workloads folder already has
    /// (the worker imports scripts by file name beside `harness`).
    pub fn load_with(workloads: &Path, extra: &[PathBuf]) -> anyhow::Result<Catalogue> {
        let mut cat = Self::load(workloads)?;
        let modules = python_modules(workloads);
        for file in extra {
            let user = Self::load_user(file)?;
            for mut server in user.servers.clone() {
                if cat.servers.iter().any(|b| b.name == server.name) {
                    anyhow::bail!(
                        "--catalogue {}: server '{}' has the name of one already defined; rename it there",
                        file.display(),
                        server.name
                    );
                }
                server.dir = user.dir.join(&server.dir).display().to_string();
                server.catalogue = Some(file.clone());
                cat.servers.push(server);
            }
            for mut s in user.scenarios {
                if let Some(clash) = cat.scenarios.iter().find(|b| b.name == s.name) {
                    let other = match &clash.catalogue {
                        None => "a built-in scenario".to_string(),
                        Some(f) => format!("a scenario in {}", f.display()),
                    };
                    anyhow::bail!(
                        "--catalogue {}: scenario '{}' has the name of {other}; rename it there",
                        file.display(),
                        s.name
                    );
                }
                let script = user.dir.join(&s.script);
                let stem = script
                    .file_stem()
                    .map(|m| m.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if modules.contains(&stem) {
                    anyhow::bail!(
                        "--catalogue {}: scenario '{}': script {} has the module name of {}/{stem}.py, which the worker imports too; rename the script",
                        file.display(),
                        s.name,
                        s.script,
                        workloads.display()
                    );
                }
                s.script = script.display().to_string();
                s.catalogue = Some(file.clone());
                cat.scenarios.push(s);
            }
        }
        Ok(cat)
    }

    /// Reads a user catalogue file (`--catalogue FILE`); errors name the file.
    fn load_user(file: &Path) -> anyhow::Result<Catalogue> {
        let text = std::fs::read_to_string(file).map_err(|e| {
            anyhow::anyhow!(
                "--catalogue {}: cannot read it ({e}); give the path of a catalogue.toml (`asynclab new-scenario` writes one)",
                file.display()
            )
        })?;
        let dir = std::path::absolute(file.parent().unwrap_or(Path::new(".")))?;
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        Self::parse(&text, &dir).with_context(|| format!("--catalogue {}", file.display()))
    }

    /// Parses catalogue text; `dir` is where scripts live.
    pub fn parse(text: &str, dir: &Path) -> anyhow::Result<Catalogue> {
        let mut cat: Catalogue = toml_input::parse(text).map_err(|e| {
            let fix = match e.kind {
                Fault::Syntax => "fix the TOML syntax there",
                Fault::UnknownKey => "remove it or fix its spelling",
                Fault::MissingKey => "add it",
                Fault::Value => "give it the type named",
            };
            anyhow::anyhow!(
                "malformed catalogue: {}: {}; {fix} (workloads/catalogue.toml has every key)",
                e.place(),
                e.message
            )
        })?;
        cat.dir = dir.to_path_buf();
        let mut seen = std::collections::BTreeSet::new();
        for s in &cat.scenarios {
            if !is_identifier(&s.name) {
                anyhow::bail!(
                    "scenario name {:?} is not an identifier: use letters, digits and _ (not first a digit)",
                    s.name
                );
            }
            if !seen.insert(s.name.as_str()) {
                anyhow::bail!("scenario {} is listed twice; rename one", s.name);
            }
            if !(s.timeout_s.is_finite() && s.timeout_s > 0.0 && s.timeout_s <= MAX_TIMEOUT_S) {
                anyhow::bail!(
                    "scenario {}: timeout_s must be a number of seconds above 0 and at most {MAX_TIMEOUT_S}",
                    s.name
                );
            }
            if let Some(bad) = s.requirements.iter().find(|r| !is_requirement(r)) {
                anyhow::bail!(
                    "scenario {}: requirement {bad:?} is not a package requirement; write one like \"pkg==1.2\" (a package name first, no options)",
                    s.name
                );
            }
            if s.variants.is_empty() {
                anyhow::bail!("scenario {} lists no variants", s.name);
            }
            for v in s.variant_params.keys() {
                if !s.variants.contains(v) {
                    anyhow::bail!(
                        "scenario {}: variant_params names unknown variant {v:?}",
                        s.name
                    );
                }
            }
            if s.rounds == Some(0) {
                anyhow::bail!("scenario {}: rounds must be at least 1", s.name);
            }
            if s.decide_by == DecideBy::Unrecorded {
                anyhow::bail!(
                    "scenario {}: decide_by must be throughput, memory or none",
                    s.name
                );
            }
            for c in &s.contrast {
                if let Some(v) = [&c.new, &c.base]
                    .into_iter()
                    .find(|v| !s.variants.contains(v))
                {
                    anyhow::bail!(
                        "scenario {}: contrast names {v:?}, not one of its variants ({})",
                        s.name,
                        s.variants.join(", ")
                    );
                }
            }
            if let Some(b) = &s.baseline {
                if !s.variants.contains(b) {
                    anyhow::bail!(
                        "scenario {}: baseline {b:?} is not one of its variants",
                        s.name
                    );
                }
            }
            check_network_params(s)?;
            if let Some(c) = &s.ceiling {
                let service = match c.as_str() {
                    "postgres" => Service::Postgres,
                    "http" => Service::Http,
                    _ => anyhow::bail!(
                        "scenario {}: ceiling = {c:?}; give \"postgres\" or \"http\" (a Rust reference client)",
                        s.name
                    ),
                };
                if !s.services.contains(&service) {
                    anyhow::bail!(
                        "scenario {}: ceiling = {c:?} needs services = [\"{c}\"]",
                        s.name
                    );
                }
            }
            if s.driver == Driver::Loadgen {
                continue; // its variants are checked against the servers below
            }
            if !dir.join(&s.script).is_file() {
                anyhow::bail!(
                    "scenario {}: script {:?} not found in {}",
                    s.name,
                    s.script,
                    dir.display()
                );
            }
        }
        let mut names = std::collections::BTreeSet::new();
        for server in &cat.servers {
            server.check()?;
            if !names.insert(server.name.as_str()) {
                anyhow::bail!("server {} is listed twice; rename one", server.name);
            }
            if !dir.join(&server.dir).is_dir() {
                anyhow::bail!(
                    "server {}: dir {:?} not found in {}",
                    server.name,
                    server.dir,
                    dir.display()
                );
            }
        }
        Ok(cat)
    }

    /// The server a `loadgen` scenario's variant names; the error lists the known ones.
    pub fn server(&self, scenario: &str, variant: &str) -> anyhow::Result<&Server> {
        self.servers
            .iter()
            .find(|s| s.name == variant)
            .ok_or_else(|| {
                let known: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
                anyhow::anyhow!(
                    "scenario {scenario}: variant {variant} names no [[server]]; known servers: {} (add a [[server]] table to a catalogue)",
                    known.join(", ")
                )
            })
    }

    /// Looks a scenario up by name; the error lists the known names.
    pub fn get(&self, name: &str) -> Result<&Scenario, UsageError> {
        self.scenarios
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| UsageError::UnknownScenario {
                name: name.to_string(),
                known: self.names().join(", "),
            })
    }

    /// Scenario names in catalogue order.
    pub fn names(&self) -> Vec<String> {
        self.scenarios.iter().map(|s| s.name.clone()).collect()
    }
}

/// Whether `req` looks like one requirement for uv/pip: a package name first (not an option
/// such as `-r file` or `--index-url`, which would change what the lab installs), on one line.
fn is_requirement(req: &str) -> bool {
    req.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && !req.chars().any(char::is_control)
}

/// Module names of the Python files in the workloads folder (`harness`, `openloop`, ...).
fn python_modules(workloads: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(workloads) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .filter_map(|p| Some(p.file_stem()?.to_string_lossy().into_owned()))
        .collect()
}

impl Scenario {
    /// Measured rounds and warm-ups: the flags when given, else the scenario's `rounds` and
    /// `warmups`, else 5 rounds and 1 warm-up; `--quick` takes `quick_rounds`, else at most 3.
    pub fn plan(
        &self,
        rounds: Option<usize>,
        warmups: Option<usize>,
        quick: bool,
    ) -> (usize, usize) {
        let default_rounds = self.rounds.unwrap_or(5);
        let rounds = rounds.unwrap_or(if quick {
            self.quick_rounds.unwrap_or(default_rounds.min(3))
        } else {
            default_rounds
        });
        (rounds, warmups.or(self.warmups).unwrap_or(1))
    }

    /// The variant speed-ups are computed against.
    pub fn baseline_variant(&self) -> &str {
        self.baseline.as_deref().unwrap_or(&self.variants[0])
    }

    /// Every parameter name the scenario knows (defaults and per-variant ones).
    pub fn param_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.params.keys().cloned().collect();
        for vp in self.variant_params.values() {
            names.extend(vp.keys().cloned());
        }
        if self.has_network() {
            names.extend(NETWORK_PARAMS.iter().map(|k| k.to_string()));
        }
        names.sort();
        names.dedup();
        names
    }

    /// A parameter's default value somewhere in the catalogue, to type-check overrides; the
    /// network parameters ([`NETWORK_PARAMS`]) exist in every scenario that has a service.
    pub fn param_example(&self, key: &str) -> Option<&toml::Value> {
        static NO_DELAY: toml::Value = toml::Value::Float(0.0);
        self.params
            .get(key)
            .or_else(|| self.variant_params.values().find_map(|vp| vp.get(key)))
            .or_else(|| (self.has_network() && NETWORK_PARAMS.contains(&key)).then_some(&NO_DELAY))
    }

    /// Whether the scenario talks to a service, so that `rtt_ms` and `jitter_ms` apply.
    pub fn has_network(&self) -> bool {
        !self.services.is_empty()
    }
}

/// The parameter an open-loop sweep varies: requests per second, open loop when above 0.
pub const RATE_PARAM: &str = "rate_per_s";

/// A cell's offered rate, when it ran open loop.
pub fn offered_rate(params: &BTreeMap<String, serde_json::Value>) -> Option<f64> {
    params
        .get(RATE_PARAM)
        .and_then(serde_json::Value::as_f64)
        .filter(|r| *r > 0.0)
}

/// The parameter of a `loadgen` cell that holds idle keep-alive connections before its timed
/// trickle.
pub const HOLD_PARAM: &str = "hold";

/// The idle connections a cell held open (`hold` > 0), if any.
pub fn held_connections(params: &BTreeMap<String, serde_json::Value>) -> Option<u64> {
    params
        .get(HOLD_PARAM)
        .and_then(serde_json::Value::as_f64)
        .filter(|n| *n > 0.0)
        .map(|n| n as u64)
}

/// The parameter of a `loadgen` cell whose server is a WebSocket chat room: the clients that
/// join it.
pub const CLIENTS_PARAM: &str = "clients";

/// The WebSocket clients a cell joined to its server's room (`clients` > 0), if any.
pub fn room_clients(params: &BTreeMap<String, serde_json::Value>) -> Option<u64> {
    params
        .get(CLIENTS_PARAM)
        .and_then(serde_json::Value::as_f64)
        .filter(|n| *n > 0.0)
        .map(|n| n as u64)
}

/// A cell's offered rate as a point of a load sweep: open loop, and neither the trickle across
/// a held-connections cell's idle connections nor the messages into a room (schedules too,
/// but never a load to find a knee in).
pub fn sweep_rate(params: &BTreeMap<String, serde_json::Value>) -> Option<f64> {
    offered_rate(params)
        .filter(|_| held_connections(params).is_none() && room_clients(params).is_none())
}

/// Cells measuring the same thing at different rates share this key: scenario, variant,
/// interpreter and every parameter but the rate (as canonical JSON, keys sorted).
pub type SweepKey = (String, String, String, String);

/// The [`SweepKey`] of a cell (or a sweep, whose parameters already lack the rate).
pub fn sweep_key(
    scenario: &str,
    variant: &str,
    python: &str,
    params: &BTreeMap<String, serde_json::Value>,
) -> SweepKey {
    let mut rest = params.clone();
    rest.remove(RATE_PARAM);
    let rest = serde_json::to_string(&rest).unwrap_or_default();
    (scenario.into(), variant.into(), python.into(), rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.py"), "").unwrap();
        let text =
            format!("[[scenario]]\nname='s'\nscript='s.py'\ntitle='t'\nvariants=['a']\n{extra}");
        Catalogue::parse(&text, dir.path())
            .unwrap()
            .scenarios
            .remove(0)
    }

    #[test]
    fn rounds_and_warmups_come_from_flags_then_the_scenario_then_defaults() {
        let plain = scenario("");
        assert_eq!(plain.plan(None, None, false), (5, 1));
        assert_eq!(plain.plan(None, None, true), (3, 1));
        let own = scenario("rounds = 7\nwarmups = 2\n");
        assert_eq!(own.plan(None, None, false), (7, 2));
        assert_eq!(
            own.plan(None, None, true),
            (3, 2),
            "--quick takes at most 3 rounds"
        );
        assert_eq!(own.plan(Some(4), Some(0), true), (4, 0), "flags win");
        let once = scenario("rounds = 1\nwarmups = 0\n");
        assert_eq!(once.plan(None, None, true), (1, 0));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.py"), "").unwrap();
        let zero = "[[scenario]]\nname='s'\nscript='s.py'\ntitle='t'\nvariants=['a']\nrounds=0\n";
        let err = Catalogue::parse(zero, dir.path()).unwrap_err();
        assert!(
            format!("{err:#}").contains("rounds must be at least 1"),
            "{err:#}"
        );
    }

    #[test]
    fn a_malformed_catalogue_names_the_line_and_the_key_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.py"), "").unwrap();
        let one = "[[scenario]]\nname='s'\nscript='s.py'\ntitle='t'\nvariants=['a']\n";
        for (extra, want) in [
            (
                "rounds = 'x'\n",
                "line 11: scenario[1].rounds: invalid type",
            ),
            ("roundz = 2\n", "line 11: scenario[1].roundz: unknown field"),
            ("[scenario.variant_params.a]\nn = [1,", "line 12: "),
        ] {
            let text = format!("{one}{}{extra}", one.replace("'s'", "'t'"));
            let err = format!("{:#}", Catalogue::parse(&text, dir.path()).unwrap_err());
            assert!(err.starts_with("malformed catalogue: "), "{err}");
            assert!(err.contains(want), "want {want:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
        let text = "[[scenario]]\nname='s'\nscript='s.py'\nvariants=['a']\n";
        let err = format!("{:#}", Catalogue::parse(text, dir.path()).unwrap_err());
        assert!(
            err.contains("line 1: scenario[0]: missing field `title`; add it"),
            "{err}"
        );
    }
}
