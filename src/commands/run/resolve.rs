//! Before stage 1 of `asynclab run`: a study file (or a results document's recorded study)
//! merged into the flags — flags given explicitly win — with its names checked against the
//! catalogue and this build; and, once planned, the resolved study the run records.

use clap::ValueEnum;

use super::placement::Policy;
use super::plan::RunPlan;
use super::{RunArgs, EVENT_LOOPS};
use crate::catalogue::Catalogue;
use crate::error::UsageError;
use crate::runner::matrix::{self, ParamOverride};
use crate::runner::sweep::Rates;
use crate::services::postgres::PgBackend;
use crate::study::{bad, one_line, Study, StudyPlan, StudyRates};

/// A study's `params` table as `--param` overrides.
pub fn overrides(study: &Study) -> Vec<ParamOverride> {
    study
        .params
        .iter()
        .map(|(k, v)| ParamOverride {
            key: k.clone(),
            values: match v {
                toml::Value::Array(a) => a.iter().map(raw).collect(),
                one => vec![raw(one)],
            },
        })
        .collect()
}

/// A parameter value as `--param` takes it.
fn raw(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A `--param` value typed as TOML would read it: integer, number, true/false, else text.
fn typed_guess(v: &str) -> toml::Value {
    if let Ok(i) = v.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    match v.parse::<f64>() {
        Ok(f) if f.is_finite() => toml::Value::Float(f),
        _ => match v.parse::<bool>() {
            Ok(b) => toml::Value::Boolean(b),
            Err(_) => toml::Value::String(v.to_string()),
        },
    }
}

/// `--pg`'s name for a backend.
pub(super) fn pg_name(b: PgBackend) -> String {
    b.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_else(|| "auto".into())
}

/// A study's `rates` as `--rates` takes them.
fn to_rates(r: &StudyRates) -> Rates {
    match r {
        StudyRates::List(l) => Rates::List(l.clone()),
        StudyRates::Word(_) => Rates::Auto,
    }
}

/// Checks the study's names against the catalogue and this build: scenarios, `plans`,
/// parameters (against `scenarios`, the ones the run will use), event loops, the backend.
fn check_names(
    study: &Study,
    cat: &Catalogue,
    scenarios: &[String],
    source: &str,
) -> Result<(), UsageError> {
    let known = cat.names();
    let fix = format!(
        "known scenarios: {} (see `asynclab list`)",
        known.join(", ")
    );
    if let Some(name) = study
        .scenarios
        .iter()
        .find(|n| *n != "all" && !known.contains(n))
    {
        let what = format!("no scenario named '{name}'");
        return Err(bad(source, "scenarios", &what, &fix));
    }
    if let Some(name) = study.plans.keys().find(|n| !known.contains(n)) {
        let key = format!("plans.{name}");
        return Err(bad(source, &key, "no such scenario", &fix));
    }
    if let Some(name) = study.thresholds.keys().find(|n| !known.contains(n)) {
        let key = format!("thresholds.{name}");
        return Err(bad(source, &key, "no such scenario", &fix));
    }
    let names: Vec<String> = if scenarios.iter().any(|s| s == "all") {
        known.clone()
    } else {
        scenarios.to_vec()
    };
    let used: Vec<_> = names.iter().filter_map(|n| cat.get(n).ok()).collect();
    for o in overrides(study) {
        matrix::check_overrides(&used, std::slice::from_ref(&o)).map_err(|e| {
            let what = e.to_string();
            let what = what.split_once(": ").map_or(what.as_str(), |(_, w)| w);
            let key = format!("params.{}", o.key);
            bad(source, &key, what, "see `asynclab list` for the parameters")
        })?;
    }
    crate::catalogue::narrow(&used, &study.variants).map_err(|what| {
        bad(
            source,
            "variants",
            &what,
            "see `asynclab list` for each scenario's variants",
        )
    })?;
    if let Some(l) = study
        .loops
        .iter()
        .find(|l| !EVENT_LOOPS.contains(&l.as_str()))
    {
        let what = format!("unknown event loop '{l}'");
        let fix = format!("known loops: {}", EVENT_LOOPS.join(", "));
        return Err(bad(source, "loops", &what, &fix));
    }
    if let Some(p) = &study.placement {
        if Policy::from_str(p, true).is_err() {
            let what = format!("'{p}' is not a placement");
            let fix = "give \"shared\", \"split\" or \"unpinned\"";
            return Err(bad(source, "placement", &what, fix));
        }
    }
    if let Some(p) = &study.pg {
        if PgBackend::from_str(p, true).is_err() {
            let what = format!("'{p}' is not a backend");
            let fix = "give \"auto\", \"local\", \"external\" or \"container\"";
            return Err(bad(source, "pg", &what, fix));
        }
    }
    Ok(())
}

/// Merges `study` into the command line `cli`: every flag given explicitly wins, the study
/// fills the rest (parameters key by key: a `--param` replaces the study's value of that
/// key; `--quick` and `--strict` only turn on). `source` names the study in errors.
pub fn apply(study: &Study, source: &str, cli: &RunArgs) -> Result<RunArgs, UsageError> {
    let cat = cli
        .env
        .common
        .catalogue()
        .map_err(|e| UsageError::Study(one_line(&format!("{source}: {e:#}"))))?;
    let mut args = cli.clone();
    if args.scenario.is_empty() {
        if study.scenarios.is_empty() {
            return Err(bad(
                source,
                "scenarios",
                "missing, and no --scenario given",
                "add e.g. scenarios = [\"io_http\"]",
            ));
        }
        args.scenario = study.scenarios.clone();
    }
    check_names(study, &cat, &args.scenario, source)?;
    let mut params = overrides(study);
    params.retain(|o| !cli.params.iter().any(|c| c.key == o.key));
    params.extend(cli.params.iter().cloned());
    args.params = params;
    if args.env.python.is_empty() {
        args.env.python = study.python.clone();
    }
    if args.variants.is_empty() {
        args.variants = study.variants.clone();
    }
    if args.event_loops.is_empty() && !cli.params.iter().any(|p| p.key == "loop") {
        args.event_loops = study.loops.clone();
    }
    if args.pg.is_none() {
        args.pg = study
            .pg
            .as_deref()
            .and_then(|p| PgBackend::from_str(p, true).ok());
    }
    if args.pg_image.is_none() {
        args.pg_image = study.pg_image.clone();
    }
    if args.hosts.is_none() {
        // Study::parse has checked it.
        args.hosts = study
            .hosts
            .as_deref()
            .and_then(|h| crate::hosts::Hosts::from_str(h, true).ok());
    }
    if args.database_host.is_none() {
        args.database_host = study.database_host.clone();
    }
    let (cli_rounds, cli_warmups) = (cli.rounds.is_some(), cli.warmups.is_some());
    if !cli_rounds {
        args.rounds = study.rounds;
    }
    if !cli_warmups {
        args.warmups = study.warmups;
    }
    if args.max_rounds.is_none() {
        args.max_rounds = study.max_rounds;
    }
    if args.budget.is_none() {
        // Study::parse has checked it.
        args.budget = study.budget.as_deref().and_then(|b| b.parse().ok());
    }
    for (name, p) in &study.plans {
        let p = StudyPlan {
            rounds: p.rounds.filter(|_| !cli_rounds),
            warmups: p.warmups.filter(|_| !cli_warmups),
        };
        if p != StudyPlan::default() {
            args.plans.insert(name.clone(), p);
        }
    }
    args.quick |= study.quick.unwrap_or(false);
    args.strict |= study.strict.unwrap_or(false);
    if args.cpus.is_empty() {
        args.cpus = study.cpus.clone();
    }
    if args.placement.is_none() {
        args.placement = study
            .placement
            .as_deref()
            .and_then(|p| Policy::from_str(p, true).ok());
    }
    if args.rates.is_none() {
        args.rates = study.rates.as_ref().map(to_rates);
    }
    if args.max_foreign_cores.is_none() {
        args.max_foreign_cores = study.max_foreign_cores;
    }
    if args.repeats.is_none() {
        args.repeats = study.repeats;
    }
    if args.noise_threshold.is_none() {
        args.noise_threshold = study.noise_threshold;
    }
    if args.alpha.is_none() {
        args.alpha = study.alpha;
    }
    args.thresholds = study.thresholds.clone();
    Ok(args)
}

/// What a planned run uses: every choice after merging file, flags and defaults, so that
/// [`apply`]ing it to an empty command line plans the same cells. Rounds and warm-ups are
/// the first scenario's, with `plans` for scenarios that differ; interpreters are recorded
/// as major.minor of the versions found, so another machine finds its own; parameters are the
/// overrides given (the catalogue supplies the rest, and each cell records all of its own).
pub fn resolved(args: &RunArgs, plan: &RunPlan) -> Study {
    let first = plan.scenarios.first().map(|s| s.plan);
    let rounds = first.map(|p| p.rounds);
    let warmups = first.map(|p| p.warmups);
    let plans = plan
        .scenarios
        .iter()
        .filter(|s| Some(s.plan.rounds) != rounds || Some(s.plan.warmups) != warmups)
        .map(|s| {
            let p = StudyPlan {
                rounds: Some(s.plan.rounds),
                warmups: Some(s.plan.warmups),
            };
            (s.scenario.name.clone(), p)
        })
        .collect();
    let mut python: Vec<String> = Vec::new();
    for env in &plan.pythons {
        let v = env.version.split('.').take(2).collect::<Vec<_>>().join(".");
        if !python.contains(&v) {
            python.push(v);
        }
    }
    let params = args
        .params
        .iter()
        .map(|o| {
            let vals: Vec<toml::Value> = o.values.iter().map(|v| typed_guess(v)).collect();
            let v = match vals.as_slice() {
                [one] => one.clone(),
                _ => toml::Value::Array(vals),
            };
            (o.key.clone(), v)
        })
        .collect();
    Study {
        scenarios: plan
            .scenarios
            .iter()
            .map(|s| s.scenario.name.clone())
            .collect(),
        variants: args.variants.clone(),
        params,
        python,
        loops: args.event_loops.clone(),
        pg: Some(pg_name(args.pg())),
        pg_image: Some(args.pg_image().to_string()),
        hosts: (args.hosts == Some(crate::hosts::Hosts::Containers)).then(|| "containers".into()),
        database_host: args.database_host.clone(),
        rounds,
        max_rounds: args.max_rounds,
        budget: args.budget.map(|b| format!("{}s", b.0.as_secs_f64())),
        warmups,
        plans,
        quick: Some(args.quick),
        placement: Some(args.placement().name().to_string()),
        cpus: args.cpus.clone(),
        rates: args.rates.as_ref().map(|r| match r {
            Rates::List(l) => StudyRates::List(l.clone()),
            Rates::Auto => StudyRates::Word("auto".into()),
        }),
        strict: Some(args.strict),
        max_foreign_cores: Some(args.max_foreign_cores()),
        repeats: Some(args.repeats()),
        noise_threshold: Some(args.noise_threshold()),
        alpha: Some(args.alpha()),
        thresholds: args.thresholds.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `asynclab run ARGS...` as parsed.
    fn cli(args: &[&str]) -> RunArgs {
        let argv = ["asynclab", "run"].iter().chain(args);
        match crate::Opts::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Run(a) => *a,
            other => panic!("{other:?}"),
        }
    }

    const STUDY: &str = "scenarios = ['cpu', 'io_http']\nrounds = 2\nwarmups = 0\n\
        max_foreign_cores = 0.5\nquick = true\n[params]\nn = 2000\njobs = [1, 2]\n\
        [plans.io_http]\nrounds = 4\n";

    #[test]
    fn the_file_fills_what_the_flags_leave_and_flags_win() {
        let study = Study::parse(STUDY, "s.toml").unwrap();
        let a = apply(&study, "s.toml", &cli(&["--study", "s.toml"])).unwrap();
        assert_eq!(a.scenario, ["cpu", "io_http"]);
        assert_eq!((a.rounds, a.warmups), (Some(2), Some(0)));
        assert_eq!(a.plans["io_http"].rounds, Some(4));
        assert_eq!(a.max_foreign_cores(), 0.5);
        assert!(a.quick && !a.strict);
        assert_eq!(a.repeats(), crate::runner::interference::DEFAULT_REPEATS);

        let flags = cli(&[
            "--study",
            "s.toml",
            "--rounds",
            "7",
            "--param",
            "jobs=3",
            "--scenario",
            "cpu",
            "--max-foreign-cores",
            "0.2",
            "--strict",
        ]);
        let a = apply(&study, "s.toml", &flags).unwrap();
        assert_eq!(a.scenario, ["cpu"]);
        assert_eq!(a.rounds, Some(7));
        assert!(
            a.plans.is_empty(),
            "--rounds overrides every scenario's rounds"
        );
        assert_eq!(a.max_foreign_cores(), 0.2);
        assert!(a.strict);
        let jobs: Vec<_> = a.params.iter().filter(|p| p.key == "jobs").collect();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].values, ["3"]);
        assert!(a
            .params
            .iter()
            .any(|p| p.key == "n" && p.values == ["2000"]));
    }

    #[test]
    fn names_are_checked_against_the_catalogue() {
        for (text, want) in [
            (
                "scenarios = ['nope']",
                "s.toml: scenarios: no scenario named 'nope'",
            ),
            (
                "scenarios = ['cpu']\n[params]\nzz = 1",
                "s.toml: params.zz:",
            ),
            ("scenarios = ['cpu']\nloops = ['tokio']", "s.toml: loops:"),
            ("scenarios = ['cpu']\npg = 'cloud'", "s.toml: pg:"),
            (
                "scenarios = ['cpu']\nplacement = 'far'",
                "s.toml: placement:",
            ),
            (
                "scenarios = ['cpu']\n[plans.nope]\nrounds = 1",
                "s.toml: plans.nope:",
            ),
            ("rounds = 1", "s.toml: scenarios: missing"),
        ] {
            let study = Study::parse(text, "s.toml").unwrap();
            let e = apply(&study, "s.toml", &cli(&["--study", "s.toml"]))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(want) && !e.contains('\n'), "{text}: {e}");
        }
    }

    #[test]
    fn params_become_overrides_and_back() {
        let s = Study::parse("[params]\nn = [1, 2]\nname = \"x\"\nf = 0.5\n", "s").unwrap();
        let o = overrides(&s);
        assert_eq!(o[0].key, "f");
        assert_eq!(o[0].values, ["0.5"]);
        assert_eq!(o[1].values, ["1", "2"]);
        assert_eq!(o[2].values, ["x"]);
        for (k, v) in &s.params {
            let back: Vec<toml::Value> = match v {
                toml::Value::Array(a) => a.iter().map(|x| typed_guess(&raw(x))).collect(),
                one => vec![typed_guess(&raw(one))],
            };
            let want = match v {
                toml::Value::Array(a) => a.clone(),
                one => vec![one.clone()],
            };
            assert_eq!(back, want, "{k}");
        }
    }
}
