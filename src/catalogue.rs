//! Reads `workloads/catalogue.toml`: scenarios, variants and parameter matrices, as data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

use crate::error::UsageError;

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

/// One scenario: a script and its variants.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name used with `--scenario`.
    pub name: String,
    /// Script file in the workloads folder.
    pub script: String,
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
    /// Measured rounds when `--rounds` is not given (default 5; `--quick` takes at most 3).
    #[serde(default)]
    pub rounds: Option<usize>,
    /// Measured rounds under `--quick` (default: `rounds`, at most 3): for scenarios whose
    /// ratios need more rounds than 3 to hold still between runs.
    #[serde(default)]
    pub quick_rounds: Option<usize>,
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
    #[serde(default = "default_decide_by")]
    pub decide_by: String,
    /// Keys of the workers' `extra` that every variant must report equal (same rows, same
    /// checksum): a variant that computes something else is caught, not ranked.
    #[serde(default)]
    pub agree: Vec<String>,
}

fn default_decide_by() -> String {
    "throughput".into()
}

fn default_timeout_s() -> f64 {
    300.0
}

/// The whole catalogue file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    /// Scenarios in catalogue order.
    #[serde(rename = "scenario")]
    pub scenarios: Vec<Scenario>,
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

    /// Parses catalogue text; `dir` is where scripts live.
    pub fn parse(text: &str, dir: &Path) -> anyhow::Result<Catalogue> {
        let mut cat: Catalogue = toml::from_str(text).map_err(|e| {
            anyhow::anyhow!("malformed catalogue: {}", e.to_string().replace('\n', " "))
        })?;
        cat.dir = dir.to_path_buf();
        for s in &cat.scenarios {
            if s.variants.is_empty() {
                anyhow::bail!("scenario {} lists no variants", s.name);
            }
            for v in s.variant_params.keys() {
                if !s.variants.contains(v) {
                    anyhow::bail!(
                        "scenario {}: variant_params names unknown variant {v}",
                        s.name
                    );
                }
            }
            if s.rounds == Some(0) {
                anyhow::bail!("scenario {}: rounds must be at least 1", s.name);
            }
            if !["throughput", "memory", "none"].contains(&s.decide_by.as_str()) {
                anyhow::bail!(
                    "scenario {}: decide_by must be throughput, memory or none",
                    s.name
                );
            }
            if let Some(b) = &s.baseline {
                if !s.variants.contains(b) {
                    anyhow::bail!(
                        "scenario {}: baseline {b} is not one of its variants",
                        s.name
                    );
                }
            }
            if !dir.join(&s.script).is_file() {
                anyhow::bail!(
                    "scenario {}: script {} not found in {}",
                    s.name,
                    s.script,
                    dir.display()
                );
            }
        }
        Ok(cat)
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

impl Scenario {
    /// What the results document records of the scenario.
    pub fn info(&self) -> crate::results::ScenarioInfo {
        crate::results::ScenarioInfo {
            title: self.title.clone(),
            question: self.question.clone(),
            baseline: self.baseline.clone(),
        }
    }

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
        names.sort();
        names.dedup();
        names
    }

    /// A parameter's default value somewhere in the catalogue, to type-check overrides.
    pub fn param_example(&self, key: &str) -> Option<&toml::Value> {
        self.params
            .get(key)
            .or_else(|| self.variant_params.values().find_map(|vp| vp.get(key)))
    }
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
}
