//! asynclab: does Python asyncio beat sync code, threads or processes for this workload shape?
//!
//! Data flows one way: options -> catalogue -> matrix of cells -> scheduler -> executor ->
//! child process -> result -> stats -> exporters. `run` is the whole program, so tests call
//! it directly; `main.rs` only parses and prints errors.

pub mod analysis;
pub mod catalogue;
pub mod chart;
pub mod cli;
pub mod compare;
pub mod cost;
pub mod doctor;
pub mod envinfo;
pub mod error;
pub mod export;
pub mod extras;
pub mod format;
pub mod interrupt;
pub mod python;
pub mod results;
pub mod runner;
pub mod services;
pub mod stats;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use catalogue::{Catalogue, Service};
pub use cli::Opts;
use cli::{Command, EnvArgs, RunArgs};
use error::UsageError;
use python::PythonEnv;
use results::{Cell, Method, Results, SCHEMA_VERSION};
use runner::process::{ProcessExecutor, ServiceAddrs};
use runner::scheduler::{new_cell, run_interleaved, Plan};

/// Runs a parsed command line; the exit code on success.
pub fn run(opts: Opts) -> anyhow::Result<i32> {
    interrupt::install();
    match opts.command {
        Command::Run(args) => run_matrix(&args),
        Command::List(common) => {
            let cat = Catalogue::load(&common.workloads)?;
            for s in &cat.scenarios {
                println!(
                    "{:<14} {}  [variants: {}]",
                    s.name,
                    s.title,
                    s.variants.join(", ")
                );
            }
            Ok(0)
        }
        Command::Envs(args) => {
            for env in prepare_pythons(&args)? {
                println!("Python {} ready: {}", env.version, env.exe.display());
            }
            Ok(0)
        }
        Command::MockServer(a) => {
            services::mock_http::run_standalone(std::net::SocketAddr::new(a.host, a.port))?;
            Ok(0)
        }
        Command::SelfCheck => {
            let report = services::selfcheck::run(services::selfcheck::SelfCheckOpts::default())?;
            println!("{report}");
            Ok(if report.is_fit() { 0 } else { 1 })
        }
        Command::Doctor => {
            let missing = doctor::print();
            Ok(if missing == 0 { 0 } else { 1 })
        }
        Command::Report(a) => {
            let results = Results::load(&a.dir.join("results.json"))?;
            export::write_reports(&results, &a.dir)?;
            println!("report regenerated in {}", a.dir.display());
            Ok(0)
        }
        Command::Compare(a) => run_compare(&a),
        Command::Cost(a) => cost::run(&a),
    }
}

/// `asynclab compare`: checks the flags, compares, prints; 1 when the gate fails.
fn run_compare(a: &cli::CompareArgs) -> anyhow::Result<i32> {
    if !(a.threshold.is_finite() && a.threshold >= 0.0) {
        return Err(UsageError::Flag {
            flag: "--threshold",
            message: format!("{} is not a percentage; give a number like 10", a.threshold),
        }
        .into());
    }
    let base = Results::load(&a.base)?;
    let report = match (&a.by, &a.new) {
        (Some(by), None) => {
            let dim = match by[0].as_str() {
                "python" => compare::By::Python,
                "loop" => compare::By::Loop,
                other => {
                    return Err(UsageError::Flag {
                        flag: "--by",
                        message: format!("'{other}' is not a dimension; use --by python 3.10 3.12 or --by loop asyncio uvloop"),
                    }
                    .into())
                }
            };
            compare::compare_within(&base, dim, &by[1], &by[2], a.metric, a.threshold)?
        }
        (None, Some(new)) => {
            let new_doc = Results::load(new)?;
            let names = (a.base.display().to_string(), new.display().to_string());
            compare::compare_runs(&base, &new_doc, a.metric, a.threshold, (&names.0, &names.1))?
        }
        (Some(_), Some(_)) => {
            return Err(UsageError::Flag {
                flag: "--by",
                message: "compares within one run; give one results folder, not two".into(),
            }
            .into())
        }
        (None, None) => {
            return Err(UsageError::Flag {
                flag: "NEW",
                message: "missing: give BASE and NEW results folders, or one folder with --by python|loop BASE_VALUE NEW_VALUE".into(),
            }
            .into())
        }
    };
    print!("{}", compare::render(&report));
    Ok(report.exit_code())
}

/// The interpreters to use when `--python` is not given: 3.12, else `python3`.
fn default_pythons() -> Vec<String> {
    if python::find_interpreter("3.12").is_ok() {
        vec!["3.12".into()]
    } else {
        vec!["python3".into()]
    }
}

/// Finds each interpreter and builds or reuses its environment.
pub fn prepare_pythons(args: &EnvArgs) -> anyhow::Result<Vec<PythonEnv>> {
    let specs = if args.python.is_empty() {
        default_pythons()
    } else {
        args.python.clone()
    };
    let mut envs = Vec::new();
    for spec in specs {
        let interp = if spec == "python3" {
            let exe = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|d| d.join("python3"))
                .find(|p| p.is_file())
                .context("--python: no python3 on PATH; install Python 3.10+ or pass --python /path/to/python")?;
            python::find_interpreter(&exe.display().to_string())?
        } else {
            python::find_interpreter(&spec)?
        };
        let env = python::prepare_env(&interp, &args.common.workloads, &args.venvs)?;
        if !envs.iter().any(|e: &PythonEnv| e.version == env.version) {
            envs.push(env);
        }
    }
    Ok(envs)
}

/// The results folder: `--out`, or `results/<timestamp>`; refuses to overwrite results.
fn out_dir(args: &RunArgs) -> anyhow::Result<PathBuf> {
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => {
            PathBuf::from("results").join(chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string())
        }
    };
    if dir.join("results.json").exists() {
        return Err(UsageError::Flag {
            flag: "--out",
            message: format!("{} already holds results.json; choose a new folder so no measurement is overwritten", dir.display()),
        }
        .into());
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("--out: cannot create {}", dir.display()))?;
    Ok(dir)
}

/// Event loops `--loop` accepts (the harness knows how to make each, or says how to get it).
pub const EVENT_LOOPS: &[&str] = &["asyncio", "uvloop", "rsloop", "zuvloop"];

/// `--param` overrides plus `--loop L1,L2` as the `loop` parameter's matrix axis.
fn with_loop_axis(
    params: &[runner::matrix::ParamOverride],
    loops: &[String],
) -> Result<Vec<runner::matrix::ParamOverride>, UsageError> {
    let mut out = params.to_vec();
    if loops.is_empty() {
        return Ok(out);
    }
    let flag = "--loop";
    if let Some(bad) = loops.iter().find(|l| !EVENT_LOOPS.contains(&l.as_str())) {
        let message = format!(
            "unknown event loop '{bad}'; known: {}",
            EVENT_LOOPS.join(", ")
        );
        return Err(UsageError::Flag { flag, message });
    }
    if params.iter().any(|p| p.key == "loop") {
        let message = "given together with --param loop=...; use one of them".into();
        return Err(UsageError::Flag { flag, message });
    }
    out.push(runner::matrix::ParamOverride {
        key: "loop".into(),
        values: loops.to_vec(),
    });
    Ok(out)
}

/// Checks `--cpus` against the CPUs this machine has.
fn check_cpus(cpus: &[usize]) -> Result<(), UsageError> {
    // SAFETY: sysconf has no preconditions.
    let configured = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
    match cpus.iter().find(|&&c| c >= configured) {
        Some(c) => Err(UsageError::Flag {
            flag: "--cpus",
            message: format!(
                "CPU {c} does not exist; this machine has CPUs 0..={} (e.g. --cpus 0 or --cpus 0,1)",
                configured - 1
            ),
        }),
        None => Ok(()),
    }
}

/// Points `results/latest` at the newest run (best effort).
fn mark_latest(dir: &Path) {
    if let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) {
        let link = parent.join("latest");
        let _ = std::fs::remove_file(&link);
        let _ = std::os::unix::fs::symlink(name, &link);
    }
}

fn run_matrix(args: &RunArgs) -> anyhow::Result<i32> {
    let workloads = &args.env.common.workloads;
    let cat = Catalogue::load(workloads)?;
    let names: Vec<String> = if args.scenario.iter().any(|s| s == "all") {
        cat.names()
    } else {
        args.scenario.clone()
    };
    let scenarios = names
        .iter()
        .map(|n| cat.get(n))
        .collect::<Result<Vec<_>, _>>()?;
    let overrides = with_loop_axis(&args.params, &args.event_loops)?;
    let overrides = runner::sweep::with_rates(&overrides, args.rates.as_ref(), &scenarios)?;
    runner::matrix::check_overrides(&scenarios, &overrides)?;
    if args.rounds == Some(0) {
        return Err(UsageError::Flag {
            flag: "--rounds",
            message: "must be at least 1 (3 or more to get an interval)".into(),
        }
        .into());
    }
    check_cpus(&args.cpus)?;
    let plans: Vec<Plan> = scenarios
        .iter()
        .map(|s| {
            let (rounds, warmups) = s.plan(args.rounds, args.warmups, args.quick);
            Plan {
                rounds,
                warmups,
                repeats: runner::interference::DEFAULT_REPEATS,
            }
        })
        .collect();
    let harness = std::path::absolute(workloads.join("harness.py"))?;
    if !harness.is_file() {
        anyhow::bail!(
            "{} not found: pass --workloads DIR pointing at the asynclab workloads folder",
            harness.display()
        );
    }
    let pythons = prepare_pythons(&args.env)?;
    let mut specs_by_scenario = Vec::new();
    for s in &scenarios {
        let specs = runner::matrix::expand(
            s,
            &std::path::absolute(&cat.dir)?,
            &pythons,
            &overrides,
            args.quick,
        )?;
        specs_by_scenario.push(specs);
    }
    let needs = |f: Service| scenarios.iter().any(|s| s.services.contains(&f));

    // Services: guards that stop them on return, error or Ctrl-C.
    let http = if needs(Service::Http) {
        Some(
            services::mock_http::MockHttp::start("127.0.0.1:0".parse()?)
                .context("starting the mock HTTP server")?,
        )
    } else {
        None
    };
    let echo = if needs(Service::Echo) {
        Some(
            services::echo::EchoServer::start("127.0.0.1:0".parse()?)
                .context("starting the TCP echo server")?,
        )
    } else {
        None
    };
    let pg = if needs(Service::Postgres) {
        Some(services::postgres::Postgres::provide_with(
            args.pg,
            &args.pg_image,
        )?)
    } else {
        None
    };
    interrupt::check()?;

    let dir = out_dir(args)?;
    let mut env = envinfo::collect(&pythons, &harness);
    env.mock_http = http.as_ref().map(|h| h.url());
    env.postgres = pg.as_ref().map(|p| p.describe());
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        generated_by: format!("asynclab {}", env!("CARGO_PKG_VERSION")),
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        env,
        method: Method {
            rounds: plans[0].rounds,
            warmups: plans[0].warmups,
            order: "interleaved: every cell once per round, order rotated by one each round".into(),
            quick: args.quick,
            cpus: args.cpus.clone(),
            scenario_plans: scenarios
                .iter()
                .zip(&plans)
                .filter(|(_, p)| (p.rounds, p.warmups) != (plans[0].rounds, plans[0].warmups))
                .map(|(s, p)| {
                    let plan = results::ScenarioPlan {
                        rounds: p.rounds,
                        warmups: p.warmups,
                    };
                    (s.name.clone(), plan)
                })
                .collect(),
        },
        scenarios: scenarios
            .iter()
            .map(|s| (s.name.clone(), s.info()))
            .collect(),
        cells: Vec::new(),
        sweeps: Vec::new(),
    };
    let counter: Option<Arc<dyn Fn() -> u64 + Send + Sync>> = http.as_ref().map(|h| {
        let stats = h.stats();
        Arc::new(move || stats.requests()) as Arc<dyn Fn() -> u64 + Send + Sync>
    });
    let mut exec = ProcessExecutor {
        harness,
        services: ServiceAddrs {
            http_url: http.as_ref().map(|h| h.url()),
            database_url: pg.as_ref().map(|p| p.url().to_string()),
            echo_addr: echo.as_ref().map(|e| e.addr().to_string()),
        },
        http_requests: counter,
        cpus: args.cpus.clone(),
        service_pids: pg.as_ref().map(|p| p.pids()).unwrap_or_default(),
        limits: runner::interference::Limits {
            max_foreign_cores: runner::interference::DEFAULT_MAX_FOREIGN_CORES,
        },
    };
    let json_path = dir.join("results.json");
    eprintln!("asynclab: writing results to {}", dir.display());
    mark_latest(&dir);
    let mut measured: Vec<Cell> = Vec::new();
    let outcome = (|| -> anyhow::Result<()> {
        let auto = args.rates == Some(runner::sweep::Rates::Auto);
        for (specs, &plan) in specs_by_scenario.iter().zip(&plans) {
            // One batch (the matrix), or one per rate for `--rates auto`.
            let mut batches = runner::sweep::Batches::new(specs.clone(), auto);
            while let Some(specs) = batches.next_batch(&measured) {
                let mut cells: Vec<Cell> = specs.iter().map(new_cell).collect();
                let mut save = |current: &[Cell]| -> anyhow::Result<()> {
                    let mut doc = results.clone();
                    doc.cells = measured.iter().chain(current.iter()).cloned().collect();
                    doc.sweeps = analysis::sweep::analyze(&doc.cells);
                    export::write_atomic(&json_path, &export::JsonExporter.render(&doc)?)
                };
                let mut progress = |line: &str| eprintln!("asynclab: {line}");
                let r = run_interleaved(
                    &specs,
                    plan,
                    &mut exec,
                    &mut cells,
                    &mut save,
                    &mut progress,
                );
                measured.extend(cells);
                r?;
            }
        }
        Ok(())
    })();
    results.cells = measured;
    results.sweeps = analysis::sweep::analyze(&results.cells);
    results.env.load_avg_after = Some(envinfo::load_avg());
    let disagreements = runner::checks::disagreements(&results.cells, &scenarios);
    results.env.warnings.extend(disagreements.iter().cloned());
    export::write_all(&results, &dir)?;
    outcome?;
    let failed: Vec<&str> = results
        .cells
        .iter()
        .filter(|c| c.status == results::CellStatus::Failed)
        .map(|c| c.id.as_str())
        .collect();
    println!("asynclab: report in {}", dir.join("summary.md").display());
    for c in results
        .cells
        .iter()
        .filter(|c| c.status == results::CellStatus::Skipped)
    {
        let why = c.failure.as_deref().unwrap_or("");
        eprintln!("asynclab: skipped {}: {why}", c.id);
    }
    if !failed.is_empty() {
        eprintln!(
            "asynclab: {} cell(s) failed ({}); see the failure column of {}",
            failed.len(),
            failed.join(", "),
            dir.join("summary.md").display()
        );
        return Ok(1);
    }
    if args.strict {
        let with_errors: Vec<String> = results
            .cells
            .iter()
            .filter_map(|c| {
                c.summary
                    .as_ref()
                    .filter(|s| s.errors > 0)
                    .map(|s| format!("{} ({} errors)", c.id, s.errors))
            })
            .collect();
        for line in with_errors.iter().chain(disagreements.iter()) {
            eprintln!("asynclab: --strict: {line}");
        }
        if !with_errors.is_empty() || !disagreements.is_empty() {
            return Ok(1);
        }
    }
    Ok(0)
}
