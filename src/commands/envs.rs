//! `asynclab envs`: finds the interpreters and builds (or reuses) their environments, with
//! the scenarios' own `requirements`; `run` prepares its interpreters the same way.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::CommonArgs;
use crate::catalogue::Scenario;
use crate::python::scenario_requirements::{self, ScenarioRequirement};
use crate::python::{self, PythonEnv};

/// `asynclab envs`.
#[derive(Debug, Args, Clone)]
pub struct EnvArgs {
    /// Shared folder options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Interpreters: versions like 3.12 or paths, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub python: Vec<String>,
    /// Folder for the environments.
    #[arg(long, default_value = ".venvs")]
    pub venvs: PathBuf,
}

/// Prepares every interpreter, with every catalogued scenario's requirements, and prints
/// where each environment is.
pub fn execute(args: &EnvArgs) -> anyhow::Result<i32> {
    let cat = args.common.catalogue()?;
    let scenarios: Vec<&Scenario> = cat.scenarios.iter().collect();
    let (envs, missing) = prepare_pythons(args, &scenarios, true)?;
    if let Some(m) = missing.first() {
        anyhow::bail!("{}", m.reason);
    }
    for env in envs {
        println!("Python {} ready: {}", env.version, env.exe.display());
    }
    Ok(0)
}

/// An interpreter asked for that could not be found.
#[derive(Debug, Clone)]
pub struct MissingPython {
    /// As given (`3.14`, a path).
    pub spec: String,
    /// One line: why, and how to get it.
    pub reason: String,
}

/// The interpreters to use when `--python` is not given: 3.12, else `python3`.
fn default_pythons() -> Vec<String> {
    if python::find_interpreter("3.12").is_ok() {
        vec!["3.12".into()]
    } else {
        vec!["python3".into()]
    }
}

/// The requirements `scenarios` name, in catalogue order.
fn requirements_of(scenarios: &[&Scenario]) -> Vec<ScenarioRequirement> {
    let mut out = Vec::new();
    for s in scenarios {
        let catalogue = match &s.catalogue {
            Some(f) => f.display().to_string(),
            None => "the built-in catalogue".into(),
        };
        for r in &s.requirements {
            out.push(ScenarioRequirement {
                scenario: s.name.clone(),
                catalogue: catalogue.clone(),
                requirement: r.clone(),
            });
        }
    }
    out
}

/// Finds each interpreter and builds or reuses its environment, then installs what
/// `scenarios` require beyond the pinned base (once: the environment records it). An
/// interpreter that cannot be found is returned as missing, for the caller to skip, or with
/// `strict` refused before any environment is built; an environment that cannot be built is an
/// error.
pub fn prepare_pythons(
    args: &EnvArgs,
    scenarios: &[&Scenario],
    strict: bool,
) -> anyhow::Result<(Vec<PythonEnv>, Vec<MissingPython>)> {
    let wanted = requirements_of(scenarios);
    let specs = if args.python.is_empty() {
        default_pythons()
    } else {
        args.python.clone()
    };
    // Every interpreter is looked for before any environment is built, so that under `strict`
    // a missing one is refused before minutes of building the others.
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for spec in specs {
        let interp = if spec == "python3" {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|d| d.join("python3"))
                .find(|p| p.is_file())
                .context("--python: no python3 on PATH; install Python 3.10+ or pass --python /path/to/python")
                .and_then(|exe| python::find_interpreter(&exe.display().to_string()))
        } else {
            python::find_interpreter_in(&spec, &args.venvs)
        };
        match interp {
            Ok(i) => found.push(i),
            Err(e) => missing.push(MissingPython {
                spec,
                reason: format!("{e:#}"),
            }),
        }
    }
    if let (true, Some(m)) = (strict, missing.first()) {
        anyhow::bail!("{}", m.reason);
    }
    let mut envs = Vec::new();
    for interp in found {
        let env = python::prepare_env(&interp, &args.common.workloads, &args.venvs)?;
        let base = python::requirements_for(&args.common.workloads, &env.version);
        scenario_requirements::install(&env, &base, &args.venvs, &wanted)?;
        if !envs.iter().any(|e: &PythonEnv| e.version == env.version) {
            envs.push(env);
        }
    }
    Ok((envs, missing))
}
