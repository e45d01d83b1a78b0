//! Expands scenarios, parameter overrides and interpreters into the cells to measure.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::catalogue::{Scenario, Service, NETWORK_PARAMS};
use crate::error::UsageError;
use crate::python::PythonEnv;

/// A `--param KEY=V1,V2` override: one value is a setting, several are a matrix axis.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamOverride {
    /// Parameter name.
    pub key: String,
    /// Raw values as typed.
    pub values: Vec<String>,
}

impl std::str::FromStr for ParamOverride {
    type Err = UsageError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (key, vals) = s
            .split_once('=')
            .ok_or_else(|| UsageError::ParamSyntax(s.into()))?;
        let key = key.trim();
        if key.is_empty() || vals.trim().is_empty() {
            return Err(UsageError::ParamSyntax(s.into()));
        }
        Ok(ParamOverride {
            key: key.to_string(),
            values: vals.split(',').map(|v| v.trim().to_string()).collect(),
        })
    }
}

/// The network distance a cell's workers have to their services: a delay line's round trip
/// and jitter, from the cell's `rtt_ms` and `jitter_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Network {
    /// Round trip added to every exchange, ms (half each way).
    pub rtt_ms: f64,
    /// Uniform jitter per direction, ms (each chunk waits U[0, 2 × jitter] more).
    pub jitter_ms: f64,
}

impl Network {
    /// The delay a cell's parameters ask for; `None` when both are 0 or absent (no delay
    /// line). The catalogue and `--param` have checked both are milliseconds, 0 or more.
    pub fn of(params: &BTreeMap<String, serde_json::Value>) -> Option<Network> {
        let ms = |key: &str| params.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0);
        let net = Network {
            rtt_ms: ms("rtt_ms"),
            jitter_ms: ms("jitter_ms"),
        };
        (net.rtt_ms > 0.0 || net.jitter_ms > 0.0).then_some(net)
    }

    /// `rtt 5 ms` or `rtt 5 ms ± U[0, 2] ms`: how the report and the logs name it.
    pub fn describe(&self) -> String {
        if self.jitter_ms > 0.0 {
            format!(
                "rtt {} ms, jitter U[0, {}] ms each way",
                self.rtt_ms,
                2.0 * self.jitter_ms
            )
        } else {
            format!("rtt {} ms", self.rtt_ms)
        }
    }
}

/// One cell of the matrix: what a worker process is started with.
#[derive(Debug, Clone)]
pub struct CellSpec {
    /// Stable id: scenario/variant/python/k=v,...
    pub id: String,
    /// Scenario name.
    pub scenario: String,
    /// Script path.
    pub script: PathBuf,
    /// Variant name.
    pub variant: String,
    /// Parameters, typed.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Interpreter environment.
    pub python: PythonEnv,
    /// Per-run time limit.
    pub timeout: Duration,
    /// Services the scenario needs.
    pub services: Vec<Service>,
    /// Whether the mock server's count must equal ops + errors.
    pub check_server_requests: bool,
    /// The matrix-axis values (parameters given as lists) that set this cell apart from other
    /// cells of the same variant, e.g. `concurrency=100`; cells compared in the decision
    /// table share it.
    pub group: String,
    /// How the decision table ranks this scenario's variants (`throughput`, `memory`, `none`).
    pub decide_by: crate::catalogue::DecideBy,
    /// CPUs the worker (and its children) is pinned to before exec, as the plan's placement
    /// decided; empty: not pinned (it inherits the driver's mask).
    pub cpus: Vec<usize>,
    /// The delay line between this cell's workers and its services; `None`: direct.
    pub network: Option<Network>,
    /// The service under test of a `loadgen` cell; `None`: a Python worker runs the script.
    pub server: Option<ServerUnderTest>,
    /// The id of the cell this one repeats as its A/A twin; `None` for every other cell.
    pub twin_of: Option<String>,
}

/// What the load generator of a `loadgen` cell starts and drives.
#[derive(Debug, Clone)]
pub struct ServerUnderTest {
    /// The catalogue's `[[server]]`.
    pub server: crate::catalogue::Server,
    /// Its app folder, absolute.
    pub dir: PathBuf,
    /// CPUs it is pinned to (the load generator keeps the cell's `cpus`); empty: not pinned.
    pub cpus: Vec<usize>,
}

fn to_json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => serde_json::Value::String(s.clone()),
        toml::Value::Integer(i) => serde_json::Value::from(*i),
        toml::Value::Float(f) => serde_json::Value::from(*f),
        toml::Value::Boolean(b) => serde_json::Value::Bool(*b),
        toml::Value::Array(a) => serde_json::Value::Array(a.iter().map(to_json).collect()),
        other => serde_json::Value::String(other.to_string()),
    }
}

/// Parses one override value with the type of the catalogue's example value.
fn typed(key: &str, raw: &str, example: &toml::Value) -> Result<toml::Value, UsageError> {
    let example = match example {
        toml::Value::Array(a) if !a.is_empty() => &a[0],
        other => other,
    };
    let err = |expected| UsageError::ParamType {
        key: key.into(),
        value: raw.into(),
        expected,
        example: example.to_string(),
    };
    if NETWORK_PARAMS.contains(&key) {
        // Milliseconds, whole or not: kept an integer when whole, so that `rtt_ms=5` names
        // the same cell as the catalogue's `rtt_ms = [..., 5]`.
        let ms: f64 = raw
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0 && *v <= 10_000.0)
            .ok_or_else(|| err("milliseconds from 0 to 10000"))?;
        return Ok(if ms.fract() == 0.0 {
            toml::Value::Integer(ms as i64)
        } else {
            toml::Value::Float(ms)
        });
    }
    Ok(match example {
        toml::Value::Integer(_) => {
            toml::Value::Integer(raw.parse().map_err(|_| err("an integer"))?)
        }
        toml::Value::Float(_) => toml::Value::Float(raw.parse().map_err(|_| err("a number"))?),
        toml::Value::Boolean(_) => {
            toml::Value::Boolean(raw.parse().map_err(|_| err("true or false"))?)
        }
        _ => toml::Value::String(raw.to_string()),
    })
}

/// Checks overrides against the selected scenarios: each key must exist in at least one, and
/// values must have the parameter's type.
pub fn check_overrides(
    scenarios: &[&Scenario],
    overrides: &[ParamOverride],
) -> Result<(), UsageError> {
    for o in overrides {
        let mut known = false;
        for s in scenarios {
            if let Some(example) = s.param_example(&o.key) {
                known = true;
                for v in &o.values {
                    typed(&o.key, v, example)?;
                }
            }
        }
        if !known {
            let s = scenarios
                .first()
                .map(|s| s.name.clone())
                .unwrap_or_default();
            let names: Vec<String> = scenarios.iter().flat_map(|s| s.param_names()).collect();
            return Err(UsageError::UnknownParam {
                key: o.key.clone(),
                scenario: s,
                known: names.join(", "),
            });
        }
    }
    Ok(())
}

fn excluded(scenario: &Scenario, variant: &str, params: &BTreeMap<String, toml::Value>) -> bool {
    scenario.exclude.iter().any(|rule| {
        rule.iter().all(|(k, want)| {
            let have = if k == "variant" {
                toml::Value::String(variant.to_string())
            } else {
                match params.get(k) {
                    Some(v) => v.clone(),
                    None => return false,
                }
            };
            match want {
                toml::Value::Array(options) => options.contains(&have),
                single => *single == have,
            }
        })
    })
}

/// Expands one scenario into cells for each interpreter: variants × parameter combinations.
pub fn expand(
    scenario: &Scenario,
    dir: &std::path::Path,
    pythons: &[PythonEnv],
    overrides: &[ParamOverride],
    quick: bool,
) -> Result<Vec<CellSpec>, UsageError> {
    let mut cells = Vec::new();
    for variant in &scenario.variants {
        let mut merged = scenario.params.clone();
        if let Some(vp) = scenario.variant_params.get(variant) {
            merged.extend(vp.clone());
        }
        if quick {
            for (k, v) in &scenario.quick {
                merged.insert(k.clone(), v.clone());
            }
        }
        for o in overrides {
            if let Some(example) = scenario.param_example(&o.key) {
                let vals = o
                    .values
                    .iter()
                    .map(|v| typed(&o.key, v, example))
                    .collect::<Result<Vec<_>, _>>()?;
                let value = if vals.len() == 1 {
                    vals[0].clone()
                } else {
                    toml::Value::Array(vals)
                };
                merged.insert(o.key.clone(), value);
            }
        }
        let axes: Vec<&String> = merged
            .iter()
            .filter(|(_, v)| v.is_array())
            .map(|(k, _)| k)
            .collect();
        for combo in combinations(&merged) {
            if excluded(scenario, variant, &combo) {
                continue;
            }
            let group = axes
                .iter()
                .map(|k| format!("{k}={}", to_json(&combo[*k]).to_string().trim_matches('"')))
                .collect::<Vec<_>>()
                .join(" ");
            for py in pythons {
                let params: BTreeMap<String, serde_json::Value> =
                    combo.iter().map(|(k, v)| (k.clone(), to_json(v))).collect();
                let id = cell_id(&scenario.name, variant, &py.version, &params);
                let network = if scenario.has_network() {
                    Network::of(&params)
                } else {
                    None
                };
                cells.push(CellSpec {
                    id,
                    scenario: scenario.name.clone(),
                    script: dir.join(&scenario.script),
                    variant: variant.clone(),
                    params,
                    python: py.clone(),
                    timeout: Duration::from_secs_f64(scenario.timeout_s),
                    services: scenario.services.clone(),
                    check_server_requests: scenario.check_server_requests,
                    group: group.clone(),
                    decide_by: scenario.decide_by,
                    cpus: Vec::new(),
                    network,
                    server: None,
                    twin_of: None,
                });
            }
        }
    }
    Ok(cells)
}

/// The id of a cell: `scenario/variant/python/k=v,k=v`.
pub fn cell_id(
    scenario: &str,
    variant: &str,
    python: &str,
    params: &BTreeMap<String, serde_json::Value>,
) -> String {
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{scenario}/{variant}/{python}/{}", p.join(","))
}

/// Cartesian product over array-valued parameters.
fn combinations(params: &BTreeMap<String, toml::Value>) -> Vec<BTreeMap<String, toml::Value>> {
    let mut out = vec![BTreeMap::new()];
    for (k, v) in params {
        let values = match v {
            toml::Value::Array(a) => a.clone(),
            single => vec![single.clone()],
        };
        out = out
            .into_iter()
            .flat_map(|base| {
                values.iter().map(move |val| {
                    let mut m = base.clone();
                    m.insert(k.clone(), val.clone());
                    m
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;

    fn scenario(extra: &str) -> Scenario {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.py"), "").unwrap();
        let text = format!(
            "[[scenario]]\nname='s'\nscript='s.py'\ntitle='t'\nvariants=['a','b']\n{extra}"
        );
        Catalogue::parse(&text, dir.path())
            .unwrap()
            .scenarios
            .remove(0)
    }

    fn py() -> Vec<PythonEnv> {
        vec![PythonEnv::fake("3.12.1")]
    }

    #[test]
    fn arrays_expand_to_a_matrix() {
        let s = scenario("[scenario.params]\nn=[1,2]\nm=['x','y','z']\n");
        let cells = expand(&s, std::path::Path::new("."), &py(), &[], false).unwrap();
        assert_eq!(cells.len(), 2 * 2 * 3);
    }

    #[test]
    fn variant_params_and_overrides_apply() {
        let s = scenario("[scenario.params]\nn=1\n[scenario.variant_params.b]\nn=5\n");
        let cells = expand(&s, std::path::Path::new("."), &py(), &[], false).unwrap();
        assert_eq!(cells[0].params["n"], 1);
        assert_eq!(cells[1].params["n"], 5);
        let o: ParamOverride = "n=7,8".parse().unwrap();
        let cells = expand(&s, std::path::Path::new("."), &py(), &[o], false).unwrap();
        assert_eq!(cells.len(), 4);
        assert!(cells
            .iter()
            .all(|c| c.params["n"] == 7 || c.params["n"] == 8));
    }

    #[test]
    fn exclude_rules_drop_cells() {
        let s =
            scenario("[scenario.params]\nn=[1,200]\n[[scenario.exclude]]\nvariant='b'\nn=[200]\n");
        let cells = expand(&s, std::path::Path::new("."), &py(), &[], false).unwrap();
        assert_eq!(cells.len(), 3);
        assert!(!cells
            .iter()
            .any(|c| c.variant == "b" && c.params["n"] == 200));
    }

    #[test]
    fn overrides_are_type_checked() {
        let s = scenario("[scenario.params]\nn=1\n");
        let bad: ParamOverride = "n=ten".parse().unwrap();
        let err = check_overrides(&[&s], &[bad]).unwrap_err().to_string();
        assert!(
            err.contains("--param n=ten") && err.contains("integer"),
            "{err}"
        );
        let unknown: ParamOverride = "zz=1".parse().unwrap();
        let err = check_overrides(&[&s], &[unknown]).unwrap_err().to_string();
        assert!(err.contains("no such parameter"), "{err}");
        assert!("novalue".parse::<ParamOverride>().is_err());
    }
}
