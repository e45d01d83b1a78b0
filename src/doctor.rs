//! `asynclab doctor`: what the machine has, what is missing, and the fix for each.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::envinfo;
use crate::python::find_interpreter;

/// One finding.
pub struct Finding {
    /// What was looked for.
    pub what: String,
    /// Found (true) or missing (false).
    pub ok: bool,
    /// What was found, or the fix.
    pub detail: String,
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

/// Every check, in display order.
pub fn findings() -> Vec<Finding> {
    let mut out = Vec::new();
    for v in ["3.10", "3.11", "3.12", "3.13"] {
        out.push(match find_interpreter(v) {
            Ok(i) => Finding {
                what: format!("python {v}"),
                ok: true,
                detail: format!("{} at {}", i.version, i.exe.display()),
            },
            Err(_) => Finding {
                what: format!("python {v}"),
                ok: false,
                detail: format!("not found: `pyenv install {v}` or `uv python install {v}`"),
            },
        });
    }
    out.push(
        match on_path("uv").or_else(|| {
            Some(".venvs/.tools/bin/uv".into()).filter(|p: &std::path::PathBuf| p.is_file())
        }) {
            Some(p) => Finding {
                what: "uv".into(),
                ok: true,
                detail: p.display().to_string(),
            },
            None => Finding {
                what: "uv".into(),
                ok: false,
                detail: "not found (pip is used, slower): `make tools` installs it".into(),
            },
        },
    );
    for bin in ["initdb", "postgres"] {
        out.push(match on_path(bin) {
            Some(p) => Finding { what: bin.into(), ok: true, detail: p.display().to_string() },
            None => Finding {
                what: bin.into(),
                ok: false,
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
        Some(v) => Finding { what: "docker engine".into(), ok: true, detail: format!("server {}", v.trim()) },
        None => Finding {
            what: "docker engine".into(),
            ok: false,
            detail: "not reachable: start the daemon or set DOCKER_HOST (only needed for --pg container)".into(),
        },
    });
    if let Ok(u) = std::env::var("DATABASE_URL") {
        out.push(Finding {
            what: "DATABASE_URL".into(),
            ok: true,
            detail: format!("set ({} chars); --pg auto will use it", u.len()),
        });
    }
    let cores = envinfo::cores();
    out.push(Finding {
        what: "cores".into(),
        ok: cores >= 2,
        detail: if cores >= 2 {
            cores.to_string()
        } else {
            "1: multiprocessing cannot beat sync here".into()
        },
    });
    let load = envinfo::load_avg();
    out.push(Finding {
        what: "load average".into(),
        ok: load[0] <= 0.5 * cores as f64,
        detail: format!(
            "{:.2} {:.2} {:.2}{}",
            load[0],
            load[1],
            load[2],
            if load[0] > 0.5 * cores as f64 {
                " (busy: numbers will be noisy)"
            } else {
                ""
            }
        ),
    });
    let gov = envinfo::governor();
    out.push(Finding {
        what: "cpu governor".into(),
        ok: gov == "performance" || gov == "unavailable",
        detail: if gov == "unavailable" {
            "unavailable (a VM or no cpufreq): nothing to set".into()
        } else if gov == "performance" {
            gov
        } else {
            format!("{gov}: `cpupower frequency-set -g performance` for steadier numbers")
        },
    });
    out
}

/// Prints the findings; returns how many are missing.
pub fn print() -> usize {
    let f = findings();
    let width = f.iter().map(|x| x.what.len()).max().unwrap_or(0);
    for x in &f {
        println!(
            "{} {:width$}  {}",
            if x.ok { "ok     " } else { "MISSING" },
            x.what,
            x.detail
        );
    }
    f.iter().filter(|x| !x.ok).count()
}
