//! Study files (`asynclab run --study FILE.toml`): a run's choices as data, and the resolved
//! study every results.json embeds so `asynclab rerun` can make it again.
//!
//! [`Study::parse`] reads the text and checks its types and ranges, and never panics: any
//! input is a [`Study`] or one line naming the file, the key and the fix. Names (scenarios,
//! parameters, event loops, the PostgreSQL backend) are checked against this build when the
//! study is merged into a run's flags (`commands::run::resolve`), which also makes the
//! resolved study a run records.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::UsageError;
use crate::toml_input::{self, Fault};

/// The commented example study file, in the workloads folder.
pub const EXAMPLE: &str = "workloads/studies/example.toml";

/// The choices of one run, in the shape of a study file (every key optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    /// Scenarios to run (`--scenario`), or `["all"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<String>,
    /// Only these variants of each scenario (`--variants`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// Parameter overrides (`--param`): a value is a setting, an array a matrix axis.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, toml::Value>,
    /// Interpreters (`--python`): versions like "3.12" or paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub python: Vec<String>,
    /// Event loops as a matrix axis (`--loop`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<String>,
    /// Where PostgreSQL comes from (`--pg`): auto, local, external or container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg: Option<String>,
    /// Image for `pg = "container"` (`--pg-image`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg_image: Option<String>,
    /// Where the roles run: "local" or "containers" (`--hosts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<String>,
    /// The Docker engine of the database role, "tcp://HOST:PORT" or "unix:///PATH"
    /// (`--database-host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_host: Option<String>,
    /// Measured rounds of every scenario (`--rounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
    /// Adaptive rounds up to this many (`--max-rounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<usize>,
    /// A time budget for the run, e.g. "10m" (`--budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// Warm-up runs per cell of every scenario (`--warmups`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmups: Option<usize>,
    /// Rounds and warm-ups of single scenarios, by name, over `rounds` and `warmups`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub plans: BTreeMap<String, StudyPlan>,
    /// The catalogue's quick parameters and quick rounds (`--quick`: each scenario's
    /// `quick_rounds`, else at most 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quick: Option<bool>,
    /// Where the services and the workers run: "shared", "split" or "unpinned"
    /// (`--placement`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// CPUs the workers are pinned to (`--cpus`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<usize>,
    /// Open-loop rates per second as a matrix axis, or "auto" (`--rates`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<StudyRates>,
    /// Exit 1 on errors, disagreeing variants or inconclusive cells (`--strict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Foreign CPU, in cores' worth, above which a run is contaminated (`--max-foreign-cores`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_foreign_cores: Option<f64>,
    /// How often a contaminated run is repeated in its round (`--repeats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<usize>,
    /// Smallest difference a verdict counts, a fraction of the baseline (`--noise-threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_threshold: Option<f64>,
    /// Significance level of every verdict's test (`--alpha`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Pass/fail thresholds by scenario (`io_http = ["asyncio/sync >= 5"]`): a run that
    /// misses one exits 1 and prints it ([`crate::threshold`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub thresholds: BTreeMap<String, Vec<String>>,
}

/// Rounds and warm-ups of one scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyPlan {
    /// Measured rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
    /// Warm-up runs per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmups: Option<usize>,
}

/// `rates`: a list of whole rates per second, or the word "auto".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StudyRates {
    /// These rates per second.
    List(Vec<u64>),
    /// "auto" (anything else is refused by [`Study::parse`]).
    Word(String),
}

/// How to fix a key, for the error line.
fn hint(key: &str) -> &'static str {
    match key {
        "scenarios" | "variants" | "python" | "loops" => {
            "give a list of strings, e.g. [\"io_http\"]"
        }
        "cpus" => "give a list of CPU numbers, e.g. [0, 1]",
        "rates" => "give whole rates per second, e.g. [10, 50], or \"auto\"",
        "rounds" | "max_rounds" | "warmups" | "repeats" => "give a whole number, e.g. 3",
        "quick" | "strict" => "give true or false",
        "max_foreign_cores" => "give a number of cores, e.g. 0.1",
        "noise_threshold" => "give a fraction of the baseline from 0 to below 1, e.g. 0.03",
        "alpha" => "give a significance level strictly between 0 and 1, e.g. 0.05",
        "thresholds" => {
            "give [thresholds] with SCENARIO = [\"asyncio/sync >= 5\", \"p99_ms < 50\"]"
        }
        "budget" => "give a duration string, e.g. \"10m\", \"90s\" or \"1h30m\"",
        "pg" => "give a string: \"auto\", \"local\", \"external\" or \"container\"",
        "placement" => "give \"shared\", \"split\" or \"unpinned\"",
        "pg_image" => "give an image name, e.g. \"postgres:16\"",
        "hosts" => "give \"local\" or \"containers\"",
        "database_host" => "give an engine address, e.g. \"tcp://10.0.0.7:2375\"",
        "params" => "give [params] with KEY = value or KEY = [v1, v2]",
        "plans" => "give [plans.SCENARIO] with rounds and warmups",
        _ => "see workloads/studies/example.toml for the keys and their types",
    }
}

pub use crate::toml_input::one_line;

/// A study file's error: `FILE: KEY: what; fix`, on one line.
pub fn bad(source: &str, key: &str, what: &str, fix: &str) -> UsageError {
    UsageError::Study(one_line(&format!("{source}: {key}: {what}; {fix}")))
}

impl Study {
    /// Parses a study file's text; `source` names it in errors. Never panics: every input is a
    /// study or one line naming the file, the key and the fix.
    pub fn parse(text: &str, source: &str) -> Result<Study, UsageError> {
        let study: Study = toml_input::parse(text).map_err(|e| {
            // The hint of the key itself (`plans.cpu.rounds`: rounds), else of a table it is in.
            let key = e.keys.iter().rev().find(|k| !hint(k).starts_with("see "));
            let fix = match e.kind {
                Fault::UnknownKey => {
                    "remove it or fix its spelling (see workloads/studies/example.toml)"
                }
                Fault::Value | Fault::MissingKey => hint(key.map_or("", String::as_str)),
                Fault::Syntax => "fix the TOML syntax there (see workloads/studies/example.toml)",
            };
            let place = match e.line {
                None if e.kind == Fault::Syntax => "not a study file".to_string(),
                _ => e.place(),
            };
            UsageError::Study(one_line(&format!(
                "{source}: {place}: {}; {fix}",
                e.message
            )))
        })?;
        study.check(source)?;
        Ok(study)
    }

    /// Checks what the types alone cannot: values, names, ranges.
    fn check(&self, source: &str) -> Result<(), UsageError> {
        for (key, value) in &self.params {
            let key = format!("params.{key}");
            let scalar = |v: &toml::Value| {
                matches!(
                    v,
                    toml::Value::String(_)
                        | toml::Value::Integer(_)
                        | toml::Value::Float(_)
                        | toml::Value::Boolean(_)
                )
            };
            let ok = match value {
                toml::Value::Array(a) => !a.is_empty() && a.iter().all(scalar),
                v => scalar(v),
            };
            if !ok {
                return Err(bad(
                    source,
                    &key,
                    "must be a string, number or true/false, or a non-empty list of them",
                    "e.g. concurrency = 10 or concurrency = [10, 100]",
                ));
            }
            let finite = |v: &toml::Value| !matches!(v, toml::Value::Float(f) if !f.is_finite());
            let all_finite = match value {
                toml::Value::Array(a) => a.iter().all(finite),
                v => finite(v),
            };
            if !all_finite {
                return Err(bad(source, &key, "is not a finite number", "give e.g. 0.5"));
            }
        }
        if let Some(StudyRates::Word(w)) = &self.rates {
            if w != "auto" {
                return Err(bad(
                    source,
                    "rates",
                    &format!("'{w}' is not a rate"),
                    hint("rates"),
                ));
            }
        }
        if let Some(StudyRates::List(l)) = &self.rates {
            if l.is_empty() || l.contains(&0) {
                return Err(bad(
                    source,
                    "rates",
                    "must list rates above 0",
                    hint("rates"),
                ));
            }
        }
        let zero_rounds =
            self.rounds == Some(0) || self.plans.iter().any(|(_, p)| p.rounds == Some(0));
        if zero_rounds {
            return Err(bad(
                source,
                "rounds",
                "must be at least 1",
                "give 3 or more to get an interval",
            ));
        }
        if let Some(h) = self
            .hosts
            .as_deref()
            .filter(|h| !["local", "containers"].contains(h))
        {
            return Err(bad(
                source,
                "hosts",
                &format!("'{h}' is not a placement of the roles"),
                hint("hosts"),
            ));
        }
        if let Some(e) = self
            .database_host
            .as_deref()
            .filter(|e| !(e.starts_with("tcp://") || e.starts_with("unix://")))
        {
            return Err(bad(
                source,
                "database_host",
                &format!("'{e}' is not an engine address"),
                hint("database_host"),
            ));
        }
        if let Some(b) = &self.budget {
            b.parse::<crate::budget::Budget>()
                .map_err(|why| bad(source, "budget", &why, hint("budget")))?;
        }
        if let Some(m) = self.max_foreign_cores {
            if !(m.is_finite() && m >= 0.0) {
                return Err(bad(
                    source,
                    "max_foreign_cores",
                    &format!("{m} is not a number of cores"),
                    hint("max_foreign_cores"),
                ));
            }
        }
        for (scenario, exprs) in &self.thresholds {
            for e in exprs {
                crate::threshold::Threshold::parse(e).map_err(|why| {
                    bad(
                        source,
                        &format!("thresholds.{scenario}"),
                        &why,
                        crate::threshold::FORMS,
                    )
                })?;
            }
        }
        if let Some(a) = self.alpha {
            if !(a > 0.0 && a < 1.0) {
                return Err(bad(
                    source,
                    "alpha",
                    &format!("{a} is not a significance level"),
                    hint("alpha"),
                ));
            }
        }
        if let Some(t) = self.noise_threshold {
            if !crate::stats::significance::valid_noise_threshold(t) {
                return Err(bad(
                    source,
                    "noise_threshold",
                    &format!("{t} is not a fraction from 0 to below 1"),
                    hint("noise_threshold"),
                ));
            }
        }
        if self.scenarios.iter().any(|s| s.trim().is_empty()) {
            return Err(bad(
                source,
                "scenarios",
                "has an empty name",
                "see `asynclab list`",
            ));
        }
        Ok(())
    }

    /// Reads and parses a study file.
    pub fn load(path: &std::path::Path) -> Result<Study, UsageError> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            UsageError::Study(one_line(&format!(
                "--study {source}: cannot read it ({e}); give the path of a study file like {EXAMPLE}"
            )))
        })?;
        Study::parse(&text, &source)
    }

    /// The study as TOML text (what `--dry-run` prints and a user can save as a study file).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Study::parse(text, "s.toml").unwrap_err().to_string()
    }

    #[test]
    fn the_example_parses() {
        let text = std::fs::read_to_string(EXAMPLE).unwrap();
        let s = Study::parse(&text, EXAMPLE).unwrap();
        assert!(!s.scenarios.is_empty());
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        for (text, want) in [
            ("rounds = \"two\"", "rounds"),
            (
                "budget = \"ten minutes\"",
                "budget: \"ten minutes\" is not a duration",
            ),
            ("roundz = 2", "line 1: roundz: unknown field"),
            ("scenarios = \"io_http\"", "scenarios"),
            (
                "[plans.cpu]\nrounds = -1",
                "line 2: plans.cpu.rounds: invalid value",
            ),
            (
                "[plans.cpu]\nroundz = 1",
                "line 2: plans.cpu.roundz: unknown field",
            ),
            ("cpus = [0, \"a\"]", "line 1: cpus[1]: invalid type"),
            ("rates = \"fast\"", "rates"),
            (
                "hosts = \"cloud\"",
                "hosts: 'cloud' is not a placement of the roles",
            ),
            ("database_host = \"ssh://db\"", "database_host: 'ssh://db'"),
            ("[params]\nn = { a = 1 }", "params.n"),
            ("max_foreign_cores = nan", "max_foreign_cores"),
            ("[params]\nn = [1, nan]", "params.n"),
            ("= = =", "line 1"),
        ] {
            let e = err(text);
            assert!(e.starts_with("s.toml: "), "{text}: {e}");
            assert!(e.contains(want), "{text}: {e}");
            assert!(!e.contains('\n'), "{text}: {e}");
        }
    }
}
