//! `asynclab run --hosts containers`: the same run with each role in its own container. This
//! driver starts the server and database roles ([`crate::hosts::containers`]), then runs itself
//! again as the client role, in a container on the same network, with the same arguments, the
//! results folder mounted and the other roles' addresses in its environment; it copies the
//! client's output and returns its exit code. The services under test of `loadgen` scenarios
//! start in the server role's container ([`crate::hosts::exec`]); [`check`] refuses what cannot.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::plan::RunPlan;
use super::{write, RunArgs};
use crate::error::UsageError;
use crate::hosts::containers::{Deployment, RoleCpus, Spec};
use crate::services::postgres::container::{Engine, LOCAL_IMAGE};
use crate::services::postgres::PgBackend;

/// `--database-host ENGINE`: the flags with PostgreSQL in a container on that engine. The
/// container code (testcontainers) finds its engine in `DOCKER_HOST`, so this process's is set
/// to it, before any thread that reads the environment starts.
pub fn database_on(args: &RunArgs, engine: &str) -> anyhow::Result<RunArgs> {
    let refuse = |message: String| -> anyhow::Result<RunArgs> {
        Err(UsageError::Flag {
            flag: "--database-host",
            message,
        }
        .into())
    };
    if !(engine.starts_with("tcp://") || engine.starts_with("unix://")) {
        return refuse(format!(
            "{engine:?} is not an engine address: give tcp://HOST:PORT or unix:///PATH (for ssh://, forward the socket first: ssh -NL 2375:/var/run/docker.sock HOST, then tcp://127.0.0.1:2375)"
        ));
    }
    if args.hosts == Some(crate::hosts::Hosts::Containers) {
        return refuse("--hosts containers places the database role itself on the local engine; give one of the two".into());
    }
    if let Some(pg) = args
        .pg
        .filter(|p| !matches!(p, PgBackend::Container | PgBackend::Auto))
    {
        return refuse(format!(
            "the database role on an engine is a container, but --pg {} asks for another PostgreSQL; drop --pg",
            super::resolve::pg_name(pg)
        ));
    }
    std::env::set_var("DOCKER_HOST", engine);
    if let Err(e) = Engine::connect() {
        return refuse(format!(
            "{e}; start the engine there, or correct the address"
        ));
    }
    let mut mapped = args.clone();
    mapped.pg = Some(PgBackend::Container);
    Ok(mapped)
}

/// Refuses a plan `--hosts containers` cannot place: a service under test that binds a fixed
/// address (its command lacks `{host}`), so it could not answer from the server role's
/// container, and a `loadgen` cell with a delay line, which would run beside the client rather
/// than between the server and PostgreSQL (the roles' own network is the distance there).
pub fn check(plan: &RunPlan) -> anyhow::Result<()> {
    let refuse = |message: String| -> anyhow::Result<()> {
        Err(UsageError::Flag {
            flag: "--hosts",
            message,
        }
        .into())
    };
    for planned in &plan.scenarios {
        let name = &planned.scenario.name;
        for spec in &planned.specs {
            let Some(sut) = &spec.server else {
                continue;
            };
            if !sut.server.binds_host() {
                return refuse(format!(
                    "server {} (scenario {name}) binds a fixed address, so it cannot answer from the server role's container; write {{host}} where its catalogue command gives the address",
                    sut.server.name
                ));
            }
            if let Some(network) = spec.network {
                return refuse(format!(
                    "scenario {name} asks for {} between its server and PostgreSQL, but the delay line runs beside the client role; under --hosts containers the roles' network is the distance: drop rtt_ms and jitter_ms, or run without --hosts",
                    network.describe()
                ));
            }
        }
    }
    Ok(())
}

/// Where `--hosts containers` puts the roles, in one line (what `--dry-run` prints).
pub fn describe() -> String {
    let cpus = RoleCpus::split(&crate::affinity::allowed_cpus());
    let f = crate::affinity::format_cpus;
    format!(
        "each role in its own container from {LOCAL_IMAGE} on a private network of the local Docker engine: the client (this driver and its workers) on CPU(s) {}, the server (mock HTTP and echo, services under test) on {}, the database on {}",
        f(&cpus.client),
        f(&cpus.server),
        f(&cpus.database)
    )
}

/// Builds the roles' image from Debian's packages with `compose/build-image.sh` (found beside
/// the lab's binary, `<checkout>/target/release/`, or in the working folder), which does nothing
/// while the image is up to date; without the script, the image must already be there.
fn build_image() -> anyhow::Result<()> {
    let beside_exe = std::env::current_exe().ok().and_then(|e| {
        Some(
            e.parent()?
                .parent()?
                .parent()?
                .join("compose/build-image.sh"),
        )
    });
    let script = beside_exe
        .into_iter()
        .chain(
            std::env::current_dir()
                .ok()
                .map(|d| d.join("compose/build-image.sh")),
        )
        .find(|p| p.is_file());
    let Some(script) = script else {
        return Ok(());
    };
    // Its progress goes to stderr, with ours.
    let status = std::process::Command::new(&script)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| anyhow::anyhow!("--hosts containers: running {}: {e}", script.display()))?;
    anyhow::ensure!(
        status.success(),
        "--hosts containers: {} could not build {LOCAL_IMAGE} (its log is above); fix that, or build the image with `make docker-image`",
        script.display()
    );
    Ok(())
}

/// Starts the roles and runs the client role; its exit code.
pub fn execute(args: &RunArgs) -> anyhow::Result<i32> {
    crate::hosts::sweep::sweep_reachable();
    let engine = Engine::connect().map_err(|e| {
        anyhow::anyhow!("--hosts containers: {e}; start the Docker engine, or run without --hosts")
    })?;
    build_image()?;
    crate::interrupt::check()?;
    let cwd = std::env::current_dir()?;
    let out = std::fs::canonicalize(write::out_dir(args)?)?;
    let venvs = std::fs::canonicalize(&args.env.venvs).unwrap_or(cwd.join(&args.env.venvs));
    // The folders the run reads and writes: every folder its command line names (its
    // catalogues', study file's and workloads', a rerun's), the results and the environments.
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut rw = vec![cwd.clone()];
    for p in named_folders(&argv, &cwd)
        .into_iter()
        .chain([out.clone(), venvs.clone()])
    {
        if !rw.iter().any(|m| p.starts_with(m)) {
            rw.retain(|m| !m.starts_with(&p));
            rw.push(p);
        }
    }
    let spec = Spec {
        image: LOCAL_IMAGE.into(),
        cpus: RoleCpus::split(&crate::affinity::allowed_cpus()),
        exe: std::env::current_exe()?,
        rw,
        ro: interpreter_prefixes(&venvs, &cwd),
    };
    eprintln!(
        "asynclab: --hosts containers: starting the server and database roles on the Docker engine at {}",
        engine.host()
    );
    let mut deployment = Deployment::start(engine, &spec)?;
    let deployed = deployment.deployed();
    for r in &deployed.record.roles {
        eprintln!(
            "asynclab: {} role in {} at {} on CPU(s) {}",
            r.role,
            r.container,
            r.address,
            crate::affinity::format_cpus(&r.cpus)
        );
    }
    let argv = client_args(argv, &out);
    let mut env = vec![format!(
        "{}={}",
        crate::services::postgres::DATABASE_URL_ENV,
        deployed.database_url
    )];
    for key in ["PATH", "HOME", "LANG", "PYENV_ROOT"] {
        if let Ok(v) = std::env::var(key) {
            env.push(format!("{key}={v}"));
        }
    }
    let code = deployment.run_client(&spec, argv, env, &cwd)?;
    drop(deployment);
    crate::interrupt::check()?;
    Ok(i32::try_from(code).unwrap_or(1))
}

/// The client role's arguments: this command line without `--out` and `--pg` (and their
/// values), with the results folder made here and PostgreSQL at the database role. `--hosts`
/// stays, so the run records it (a client role never deploys again: it has
/// [`crate::hosts::DEPLOYED_ENV`]), and so does the rest, a `rerun` or `--study` included.
fn client_args(argv: Vec<OsString>, out: &Path) -> Vec<String> {
    let mut kept = Vec::new();
    let mut it = argv.into_iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        let flag = a.split('=').next().unwrap_or_default().to_string();
        if ["--out", "--pg", "--database-host"].contains(&flag.as_str()) {
            if !a.contains('=') {
                it.next();
            }
            continue;
        }
        kept.push(a);
    }
    kept.extend([
        "--out".into(),
        out.display().to_string(),
        "--pg".into(),
        "external".into(),
    ]);
    kept
}

/// Whether `p` is `/`, or `/usr` or under it but `/usr/local`: a folder of the image itself,
/// never mounted over it (the container could not start).
fn system_folder(p: &Path) -> bool {
    p == Path::new("/") || (p.starts_with("/usr") && !p.starts_with("/usr/local"))
}

/// The folders of the paths `argv` names that exist here (a file's folder), as a value or as a
/// `--flag=value`, resolved against `cwd`; system folders left out.
fn named_folders(argv: &[OsString], cwd: &Path) -> Vec<PathBuf> {
    argv.iter()
        .map(|a| {
            let a = a.to_string_lossy();
            match a.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => value.to_string(),
                _ => a.into_owned(),
            }
        })
        .filter(|a| !a.is_empty() && !a.starts_with('-'))
        .filter_map(|a| std::fs::canonicalize(cwd.join(a)).ok())
        .filter_map(|p| {
            if p.is_dir() {
                Some(p)
            } else {
                p.parent().map(Path::to_path_buf)
            }
        })
        .filter(|p| !system_folder(p))
        .collect()
}

/// The installation prefixes of the environments' interpreters (each venv's `home` without its
/// `bin`), outside `cwd`: mounted read-only so the environments work in the client and server
/// roles. A system prefix (`/`, `/usr` and what is under it but `/usr/local`) is never mounted:
/// it would hide the image's own, and the container could not start. Such environments (a
/// Debian root's, whose `home` names the root's /usr, or the system Python's) do not run in
/// a container.
fn interpreter_prefixes(venvs: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let Ok(dirs) = std::fs::read_dir(venvs) else {
        return out;
    };
    for d in dirs.flatten() {
        let Ok(cfg) = std::fs::read_to_string(d.path().join("pyvenv.cfg")) else {
            continue;
        };
        let home = cfg.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "home").then(|| PathBuf::from(v.trim()))
        });
        let Some(prefix) = home.and_then(|h| h.parent().map(Path::to_path_buf)) else {
            continue;
        };
        let prefix = std::fs::canonicalize(&prefix).unwrap_or(prefix);
        if system_folder(&prefix) {
            continue;
        }
        if !prefix.starts_with(cwd) && !out.iter().any(|p| prefix.starts_with(p)) {
            out.retain(|p| !p.starts_with(&prefix));
            out.push(prefix);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folders_a_command_line_names_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        let cat = tmp.path().join("cat.toml");
        std::fs::write(&cat, "").unwrap();
        let run = tmp.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let argv = [
            "rerun".to_string(),
            run.display().to_string(),
            format!("--catalogue={}", cat.display()),
            "--python".into(),
            "3.12".into(),
            "/".into(),
            "/usr/bin".into(),
        ]
        .map(OsString::from);
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        assert_eq!(
            named_folders(&argv, Path::new("/")),
            [dir.join("run"), dir.clone()]
        );
    }

    #[test]
    fn system_prefixes_are_never_mounted() {
        let tmp = tempfile::tempdir().unwrap();
        let own = tmp.path().join("py");
        std::fs::create_dir_all(own.join("bin")).unwrap();
        for (name, home) in [
            ("root", PathBuf::from("/usr/bin")),
            ("own", own.join("bin")),
        ] {
            let venv = tmp.path().join("venvs").join(name);
            std::fs::create_dir_all(&venv).unwrap();
            let cfg = format!("home = {}\n", home.display());
            std::fs::write(venv.join("pyvenv.cfg"), cfg).unwrap();
        }
        let got = interpreter_prefixes(&tmp.path().join("venvs"), Path::new("/elsewhere"));
        assert_eq!(got, [std::fs::canonicalize(&own).unwrap()]);
    }

    #[test]
    fn the_client_runs_the_same_command_without_out_and_pg() {
        let argv = [
            "run",
            "--scenario",
            "io_http,db",
            "--hosts",
            "containers",
            "--out=x",
            "--pg",
            "local",
            "--quick",
        ]
        .map(OsString::from)
        .to_vec();
        let args = client_args(argv, Path::new("/r/out"));
        assert_eq!(
            args,
            [
                "run",
                "--scenario",
                "io_http,db",
                "--hosts",
                "containers",
                "--quick",
                "--out",
                "/r/out",
                "--pg",
                "external"
            ]
        );
    }
}
