//! `asynclab doctor`: what the machine has, what is missing, and the fix for each.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::envinfo;
use crate::python::find_interpreter;

/// How a finding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Found, fine.
    Ok,
    /// Present but a reason for caution (a busy machine now, a governor that scales).
    Warn,
    /// Missing: something the lab needs for some runs is not there.
    Missing,
}

/// One finding.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// What was looked for.
    pub what: String,
    /// How it stands.
    pub level: Level,
    /// What was found, or the fix.
    pub detail: String,
}

impl Finding {
    fn new(what: impl Into<String>, level: Level, detail: impl Into<String>) -> Self {
        Finding {
            what: what.into(),
            level,
            detail: detail.into(),
        }
    }
}

fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Runs a command with a time limit; Some(stdout) when it succeeded.
fn run_with_timeout(cmd: &mut Command, limit: Duration) -> Option<String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut s = String::new();
                use std::io::Read;
                child.stdout.take()?.read_to_string(&mut s).ok()?;
                return status.success().then_some(s);
            }
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// A free-threaded CPython (3.14t, 3.13t): optional; where none is found, how to get one.
fn free_threaded() -> Finding {
    let what = "python free-threaded";
    for v in ["3.14t", "3.13t"] {
        if let Ok(i) = find_interpreter(v) {
            return Finding::new(
                what,
                Level::Ok,
                format!(
                    "{} at {}: `--python {v}` runs its workers with the GIL off",
                    i.version,
                    i.exe.display()
                ),
            );
        }
    }
    Finding::new(
        what,
        Level::Ok,
        "optional, none found (python3.14t, python3.13t): `uv python install 3.14t` where uv can download; Debian's suites package none, so `pythons add` cannot make one",
    )
}

/// Every check, in display order.
pub fn findings() -> Vec<Finding> {
    let mut out = Vec::new();
    for v in ["3.10", "3.11", "3.12", "3.13"] {
        out.push(match find_interpreter(v) {
            Ok(i) => Finding {
                what: format!("python {v}"),
                level: Level::Ok,
                detail: format!("{} at {}", i.version, i.exe.display()),
            },
            Err(_) => Finding {
                what: format!("python {v}"),
                level: Level::Missing,
                detail: format!("not found: `pyenv install {v}` or `uv python install {v}`"),
            },
        });
    }
    // 3.14 and 3.15 from Debian's unstable suite, as roots in the default environments folder.
    let venvs = std::path::Path::new(".venvs");
    for v in crate::python::roots::VERSIONS {
        let made = crate::python::roots::launcher(venvs, v).is_file();
        out.push(match crate::python::find_interpreter_in(v, venvs) {
            Ok(i) => Finding {
                what: format!("python {v}"),
                level: Level::Ok,
                detail: match &i.root {
                    Some(_) => format!(
                        "{} in the Debian root {}",
                        i.version,
                        crate::python::roots::dir(venvs, v).display()
                    ),
                    None => format!("{} at {}", i.version, i.exe.display()),
                },
            },
            Err(e) if made => Finding {
                what: format!("python {v}"),
                level: Level::Warn,
                detail: format!("{e:#}"),
            },
            Err(_) => Finding {
                what: format!("python {v}"),
                level: Level::Ok,
                detail: format!(
                    "optional, not made: `asynclab pythons add {v}` (a Debian sid root)"
                ),
            },
        });
    }
    out.push(free_threaded());
    out.push(
        match on_path("uv").or_else(|| {
            Some(".venvs/.tools/bin/uv".into()).filter(|p: &std::path::PathBuf| p.is_file())
        }) {
            Some(p) => Finding {
                what: "uv".into(),
                level: Level::Ok,
                detail: p.display().to_string(),
            },
            None => Finding {
                what: "uv".into(),
                level: Level::Missing,
                detail: "not found (pip is used, slower): `make tools` installs it".into(),
            },
        },
    );
    for bin in ["initdb", "postgres"] {
        out.push(match on_path(bin) {
            Some(p) => Finding { what: bin.into(), level: Level::Ok, detail: p.display().to_string() },
            None => Finding {
                what: bin.into(),
                level: Level::Missing,
                detail: "not found: `apt-get install postgresql` for --pg local, or set DATABASE_URL / use --pg container".into(),
            },
        });
    }
    let docker = on_path("docker").and_then(|_| {
        run_with_timeout(
            Command::new("docker").args(["info", "--format", "{{.ServerVersion}}"]),
            Duration::from_secs(3),
        )
    });
    out.push(match docker {
        Some(v) => Finding { what: "docker engine".into(), level: Level::Ok, detail: format!("server {}", v.trim()) },
        None => Finding {
            what: "docker engine".into(),
            level: Level::Missing,
            detail: "not reachable: start the daemon or set DOCKER_HOST (only needed for --pg container)".into(),
        },
    });
    if let Ok(u) = std::env::var("DATABASE_URL") {
        out.push(Finding {
            what: "DATABASE_URL".into(),
            level: Level::Ok,
            detail: format!("set ({} chars); --pg auto will use it", u.len()),
        });
    }
    let cores = envinfo::cores();
    out.push(if cores >= 2 {
        Finding::new("cores", Level::Ok, cores.to_string())
    } else {
        Finding::new(
            "cores",
            Level::Warn,
            "1: multiprocessing cannot beat sync here",
        )
    });
    let load = envinfo::load_avg();
    let busy_load = load[0] > 0.5 * cores as f64;
    out.push(Finding::new(
        "load average",
        if busy_load { Level::Warn } else { Level::Ok },
        format!(
            "{:.2} {:.2} {:.2}{}",
            load[0],
            load[1],
            load[2],
            if busy_load {
                " (busy: numbers will be noisy)"
            } else {
                ""
            }
        ),
    ));
    let idle = crate::runner::interference::idle_window(IDLE_WINDOW, &[]);
    let limit = crate::runner::interference::DEFAULT_MAX_FOREIGN_CORES;
    let busy_now = idle.foreign_cores > limit || idle.steal_cores > limit;
    out.push(Finding::new(
        "foreign CPU now",
        if busy_now { Level::Warn } else { Level::Ok },
        format!(
            "{:.2} cores used by other programs, steal {:.2} cores, over {:.1} s{}",
            idle.foreign_cores,
            idle.steal_cores,
            IDLE_WINDOW.as_secs_f64(),
            if busy_now {
                format!(" (over the {limit} cores a run tolerates: runs would be repeated or inconclusive; stop other work)")
            } else {
                String::new()
            }
        ),
    ));
    if let Some(p) = crate::analysis::speed::ProbeRange::of(&idle.probes_ms) {
        out.push(Finding::new(
            "machine speed",
            if p.unsteady() { Level::Warn } else { Level::Ok },
            format!(
                "machine-speed probe {:.2} ms median, {:.2}–{:.2} over {} probes in {:.1} s ({:.0}% apart{})",
                p.median_ms,
                p.min_ms,
                p.max_ms,
                p.probes,
                IDLE_WINDOW.as_secs_f64(),
                p.spread() * 100.0,
                if p.unsteady() {
                    format!(", over {:.0}%: the host's speed moves; runs are judged round by round and state their resolution, and a second run checked with `asynclab compare A B --reproduce` shows what holds", crate::analysis::speed::UNSTEADY_SPREAD * 100.0)
                } else {
                    String::new()
                }
            ),
        ));
    }
    let gov = envinfo::governor();
    out.push(if gov == "unavailable" {
        Finding::new(
            "cpu governor",
            Level::Ok,
            "unavailable (a VM or no cpufreq): nothing to set",
        )
    } else if gov == "performance" {
        Finding::new("cpu governor", Level::Ok, gov)
    } else {
        Finding::new(
            "cpu governor",
            Level::Warn,
            format!("{gov}: `cpupower frequency-set -g performance` for steadier numbers"),
        )
    });
    out
}

/// How long `doctor` watches the machine for other programs' CPU use.
const IDLE_WINDOW: Duration = Duration::from_secs(1);

/// Prints the findings (as JSON with `json`); returns how many are missing.
pub fn print(json: bool) -> usize {
    let f = findings();
    if json {
        println!("{}", serde_json::to_string_pretty(&f).unwrap_or_default());
    } else {
        let width = f.iter().map(|x| x.what.len()).max().unwrap_or(0);
        for x in &f {
            let level = match x.level {
                Level::Ok => "ok     ",
                Level::Warn => "WARN   ",
                Level::Missing => "MISSING",
            };
            println!("{level} {:width$}  {}", x.what, x.detail);
        }
    }
    f.iter().filter(|x| x.level == Level::Missing).count()
}
