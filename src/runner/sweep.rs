//! `--rates`: the `rate_per_s` matrix axis, and for `--rates auto` ([`Batches`]) the batches that
//! start at [`AUTO_START_PER_S`] and double, one rate per batch, dropping each sweep once the
//! [`Saturation`] rule it is handed (the analysis's knee rule) finds it saturated.

use serde_json::Value;

use super::matrix::{cell_id, CellSpec, ParamOverride};
use crate::catalogue::{sweep_key, Scenario, SweepKey, RATE_PARAM};
use crate::error::UsageError;
use crate::results::Cell;

/// First rate of `--rates auto`, per second.
pub const AUTO_START_PER_S: u64 = 10;
/// Most rates `--rates auto` tries (10/s doubled 9 times is 5120/s).
pub const AUTO_MAX_STEPS: usize = 10;

/// What `--rates` asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Rates {
    /// These rates, per second, as a matrix axis.
    List(Vec<u64>),
    /// Double from [`AUTO_START_PER_S`] until each variant saturates.
    Auto,
}

impl std::str::FromStr for Rates {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "auto" {
            return Ok(Rates::Auto);
        }
        let rates = s
            .split(',')
            .map(|r| r.trim().parse::<u64>().ok().filter(|r| *r > 0).ok_or(r.trim()))
            .collect::<Result<Vec<u64>, &str>>()
            .map_err(|bad| {
                format!("'{bad}' is not a rate; give whole requests per second, e.g. --rates 50,100,200, or --rates auto")
            })?;
        Ok(Rates::List(rates))
    }
}

/// `--param` overrides plus `--rates` as the `rate_per_s` axis (for `auto`, its first rate).
pub fn with_rates(
    overrides: &[ParamOverride],
    rates: Option<&Rates>,
    scenarios: &[&Scenario],
) -> Result<Vec<ParamOverride>, UsageError> {
    let mut out = overrides.to_vec();
    let Some(rates) = rates else {
        return Ok(out);
    };
    let flag = "--rates";
    if let Some(s) = scenarios
        .iter()
        .find(|s| s.param_example(RATE_PARAM).is_none())
    {
        let message = format!(
            "scenario {} has no {RATE_PARAM} parameter, so it has no open-loop mode; sweep io_http (or another scenario with {RATE_PARAM}) on its own",
            s.name
        );
        return Err(UsageError::Flag { flag, message });
    }
    if overrides.iter().any(|o| o.key == RATE_PARAM) {
        let message = format!("given together with --param {RATE_PARAM}=...; use one of them");
        return Err(UsageError::Flag { flag, message });
    }
    let values = match rates {
        Rates::List(v) => v.iter().map(u64::to_string).collect(),
        Rates::Auto => vec![AUTO_START_PER_S.to_string()],
    };
    out.push(ParamOverride {
        key: RATE_PARAM.into(),
        values,
    });
    Ok(out)
}

/// A spec at another rate: parameters, id and matrix group (where the rate is an axis).
pub fn with_rate(spec: &CellSpec, rate_per_s: u64) -> CellSpec {
    let mut s = spec.clone();
    s.params.insert(RATE_PARAM.into(), Value::from(rate_per_s));
    s.id = cell_id(&s.scenario, &s.variant, &s.python.version, &s.params);
    let prefix = format!("{RATE_PARAM}=");
    let mut axes: Vec<String> = s
        .group
        .split_whitespace()
        .filter(|a| !a.starts_with(&prefix))
        .map(String::from)
        .collect();
    axes.push(format!("{prefix}{rate_per_s}"));
    axes.sort_by(|a, b| a.split('=').next().cmp(&b.split('=').next()));
    s.group = axes.join(" ");
    s
}

/// The rule that ends a sweep of `--rates auto`: which sweeps ([`SweepKey`]) of the cells
/// measured so far have saturated. The runner is handed it, so when to stop is decided by the
/// analysis's rule, not by the runner.
pub trait Saturation {
    /// The sweeps of `measured` that saturated at some rate.
    fn saturated(&self, measured: &[Cell]) -> Vec<SweepKey>;
}

/// The batches of cells one scenario is measured in: the whole matrix at once, or for
/// `--rates auto` one rate per batch, doubling, for the sweeps that have not saturated yet.
pub struct Batches {
    active: Vec<CellSpec>,
    auto: bool,
    step: usize,
}

impl Batches {
    /// Batches over `specs` (for `auto`, the specs at [`AUTO_START_PER_S`]).
    pub fn new(specs: Vec<CellSpec>, auto: bool) -> Self {
        let active = if auto {
            specs
                .iter()
                .map(|s| with_rate(s, AUTO_START_PER_S))
                .collect()
        } else {
            specs
        };
        Batches {
            active,
            auto,
            step: 0,
        }
    }

    /// The next batch, judged on everything measured so far by `rule`; None when done.
    pub fn next_batch(
        &mut self,
        measured: &[Cell],
        rule: &dyn Saturation,
    ) -> Option<Vec<CellSpec>> {
        let step = self.step;
        self.step += 1;
        if step == 0 {
            return (!self.active.is_empty()).then(|| self.active.clone());
        }
        if !self.auto || step >= AUTO_MAX_STEPS {
            return None;
        }
        let saturated = rule.saturated(measured);
        self.active.retain(|spec| {
            let key = sweep_key(
                &spec.scenario,
                &spec.variant,
                &spec.python.version,
                &spec.params,
            );
            !saturated.contains(&key)
        });
        let rate = AUTO_START_PER_S << step;
        self.active = self.active.iter().map(|s| with_rate(s, rate)).collect();
        (!self.active.is_empty()).then(|| self.active.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summary::derive_cell;
    use crate::analysis::sweep::analyze;
    use crate::catalogue::Catalogue;
    use crate::python::PythonEnv;
    use crate::results::{CellStatus, Knee};
    use crate::runner::scheduler::new_cell;

    /// The knee rule as the `run` command hands it over.
    struct Knees;
    impl Saturation for Knees {
        fn saturated(&self, measured: &[Cell]) -> Vec<SweepKey> {
            crate::analysis::sweep::saturated(measured)
        }
    }

    /// Specs of a scenario with variants sync, threads, asyncio at `rate` (0: closed loop).
    fn specs(rate: u64, delay: bool) -> Vec<CellSpec> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.py"), "").unwrap();
        let delay = if delay { "delay_ms = 100\n" } else { "" };
        let text = format!(
            "[[scenario]]\nname='io_http'\nscript='s.py'\ntitle='t'\nvariants=['sync','threads','asyncio']\n[scenario.params]\n{delay}rate_per_s = {rate}\n"
        );
        let cat = Catalogue::parse(&text, dir.path()).unwrap();
        let py = [PythonEnv::fake("3.12.1")];
        super::super::matrix::expand(&cat.scenarios[0], dir.path(), &py, &[], false).unwrap()
    }

    fn spec(variant: &str, rate: u64) -> CellSpec {
        let s = specs(rate, true)
            .into_iter()
            .find(|s| s.variant == variant)
            .unwrap();
        with_rate(&s, rate)
    }

    /// A measured cell: achieved `achieved`/s; corrected latencies 98 × 101 ms and 2 × `p99`
    /// (so p50 101 and p99 `p99`), uncorrected 101 ms each.
    fn measured(spec: &CellSpec, achieved: f64, p99: f64) -> Cell {
        let mut corrected = vec![101.0; 98];
        corrected.extend([p99, p99]);
        let run: crate::results::RunRecord = serde_json::from_value(serde_json::json!({
            "round": 0, "wall_s": 1.0, "inside_wall_s": 1.0, "cpu_s": 0.1,
            "baseline_rss_mib": 1.0, "peak_rss_mib": 1.0, "peak_rss_delta_mib": 0.0,
            "ops": 100, "errors": 0, "server_requests": null, "throughput_per_s": achieved,
            "latency_kind": "open-loop-corrected", "latencies_ms": corrected,
            "latency_sets_ms": {"uncorrected": vec![101.0; 100]},
            "error_samples": [],
            "extra": {"achieved_rate_per_s": achieved, "abandoned": 0},
        }))
        .unwrap();
        let mut cell = new_cell(spec);
        cell.runs = vec![run];
        derive_cell(&mut cell);
        cell.status = CellStatus::Ok;
        cell
    }

    fn cell(variant: &str, rate: u64, achieved: f64, p99: f64) -> Cell {
        measured(&spec(variant, rate), achieved, p99)
    }

    #[test]
    fn knee_is_the_last_sustained_rate_before_the_first_saturated_one() {
        let cells = vec![
            cell("threads", 200, 95.0, 2500.0), // out of order on purpose
            cell("threads", 50, 49.9, 110.0),
            cell("threads", 100, 96.0, 300.0), // 96% achieved, p99 < 10 × 100 ms: sustained
            cell("sync", 50, 9.6, 5000.0),
            cell("asyncio", 50, 49.9, 104.0),
            cell("asyncio", 100, 99.8, 108.0),
        ];
        let sweeps = analyze(&cells);
        let names: Vec<&str> = sweeps.iter().map(|s| s.variant.as_str()).collect();
        assert_eq!(names, ["threads", "sync", "asyncio"]);
        let t = &sweeps[0];
        let rates: Vec<f64> = t.points.iter().map(|p| p.offered_rate_per_s).collect();
        assert_eq!(rates, [50.0, 100.0, 200.0]);
        assert_eq!(t.reference_ms, Some(100.0));
        assert_eq!(t.points[1].corrected_p99_ms, Some(300.0));
        assert_eq!(t.points[1].uncorrected_p99_ms, Some(101.0));
        assert_eq!(
            (t.knee, t.knee_rate_per_s, t.saturated_rate_per_s),
            (Knee::Reached, Some(100.0), Some(200.0))
        );
        let why = t.points[2].reason.as_deref().unwrap();
        assert!(why.contains("achieved 95.0/s"), "{why}");
        assert!(!t.params.contains_key(RATE_PARAM));
        assert_eq!(sweeps[1].knee, Knee::BelowLowestRate);
        assert_eq!(
            (sweeps[2].knee, sweeps[2].knee_rate_per_s),
            (Knee::NotReached, None)
        );
    }

    #[test]
    fn p99_rule_and_failures_saturate_too() {
        let mut failed = new_cell(&spec("threads", 400));
        failed.status = CellStatus::Failed;
        let cells = vec![
            cell("threads", 50, 50.0, 999.0),
            cell("threads", 100, 100.0, 1001.0),
            failed,
        ];
        let s = &analyze(&cells)[0];
        assert!(!s.points[0].saturated, "999 ms is within 10 × 100 ms");
        let why = s.points[1].reason.as_deref().unwrap();
        assert!(why.contains("corrected p99 1001.0 ms"), "{why}");
        assert_eq!(s.points[2].reason.as_deref(), Some("the cell failed"));
        assert_eq!((s.knee, s.knee_rate_per_s), (Knee::Reached, Some(50.0)));
    }

    #[test]
    fn closed_loop_cells_are_not_sweeps_and_reference_falls_back_to_p50() {
        let closed = measured(&specs(0, true)[0], 50.0, 1.0);
        let no_delay = measured(&with_rate(&specs(0, false)[0], 50), 50.0, 20.0);
        let mut never_ran = new_cell(&spec("asyncio", 50));
        never_ran.status = CellStatus::Failed;
        let sweeps = analyze(&[closed, no_delay, never_ran]);
        assert_eq!(sweeps.len(), 1);
        assert_eq!(
            sweeps[0].reference_ms,
            Some(101.0),
            "the lowest rate's uncorrected p50"
        );
    }

    #[test]
    fn rates_flag_parses_lists_and_auto() {
        assert_eq!("50,100".parse::<Rates>(), Ok(Rates::List(vec![50, 100])));
        assert_eq!("auto".parse::<Rates>(), Ok(Rates::Auto));
        for bad in ["0", "12.5", "50,,100", "fast"] {
            let err = bad.parse::<Rates>().unwrap_err();
            assert!(err.contains("--rates 50,100,200"), "{bad}: {err}");
        }
    }

    #[test]
    fn auto_batches_double_until_each_sweep_saturates() {
        let start: Vec<CellSpec> = specs(0, true)
            .into_iter()
            .filter(|s| s.variant != "asyncio")
            .collect();
        let mut b = Batches::new(start, true);
        let mut done: Vec<Cell> = Vec::new();
        let mut seen = Vec::new();
        while let Some(batch) = b.next_batch(&done, &Knees) {
            for s in batch {
                let rate = s.params[RATE_PARAM].as_u64().unwrap();
                assert_eq!(s.id, cell_id("io_http", &s.variant, "3.12.1", &s.params));
                assert_eq!(s.group, format!("rate_per_s={rate}"));
                seen.push((s.variant.clone(), rate));
                // sync keeps up to 10/s, threads to 80/s.
                let cap = if s.variant == "sync" { 10.0 } else { 80.0 };
                done.push(measured(&s, (rate as f64).min(cap), 150.0));
            }
        }
        let rates = |v: &str| -> Vec<u64> {
            seen.iter()
                .filter(|(x, _)| x == v)
                .map(|(_, r)| *r)
                .collect()
        };
        assert_eq!(rates("sync"), [10, 20]);
        assert_eq!(rates("threads"), [10, 20, 40, 80, 160]);
        let sweeps = analyze(&done);
        assert_eq!(sweeps[1].knee_rate_per_s, Some(80.0));
        let fixed = Batches::new(specs(50, true), false);
        let mut fixed = fixed;
        assert_eq!(fixed.next_batch(&[], &Knees).unwrap().len(), 3);
        assert!(fixed.next_batch(&[], &Knees).is_none());
    }
}
