//! A scenario's own requirements (`requirements = [...]` in a catalogue), installed into an
//! environment on top of its pinned base (which constrains them), and recorded in the
//! environment so that a rerun installs nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

use super::find_uv;
use super::PythonEnv;

/// The file in an environment listing the scenario requirements installed into it, one a line.
pub const RECORD_FILE: &str = ".asynclab-scenario-requirements";

/// One requirement a scenario asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioRequirement {
    /// The scenario that names it.
    pub scenario: String,
    /// Where it is written: the catalogue file, for the fix.
    pub catalogue: String,
    /// The requirement as written, e.g. `pkg==1.2`.
    pub requirement: String,
}

/// The package a requirement names, normalised as PyPI does (`Foo_Bar` → `foo-bar`).
pub fn package_name(requirement: &str) -> String {
    requirement
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .map(|c| match c {
            '_' | '.' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Installs every requirement in `wanted` that the environment's record does not list yet,
/// one at a time, with the base requirements `base` as constraints; a failure names the
/// scenario, the requirement and the fix.
pub fn install(
    env: &PythonEnv,
    base: &Path,
    venvs: &Path,
    wanted: &[ScenarioRequirement],
) -> anyhow::Result<()> {
    let dir = env_dir(env);
    let record = dir.join(RECORD_FILE);
    let mut installed: Vec<String> = std::fs::read_to_string(&record)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    for w in wanted {
        if installed.contains(&w.requirement) {
            continue;
        }
        eprintln!(
            "asynclab: installing {} (scenario {}) into {} ...",
            w.requirement,
            w.scenario,
            dir.display()
        );
        install_one(env, base, venvs, &w.requirement).map_err(|why| {
            anyhow::anyhow!(
                "scenario {}: requirement '{}' did not install into the Python {} environment ({why}); fix it in the `requirements` of {} (a package and version that exist for Python {})",
                w.scenario,
                w.requirement,
                env.version,
                w.catalogue,
                env.version
            )
        })?;
        let name = package_name(&w.requirement);
        installed.retain(|r| package_name(r) != name);
        installed.push(w.requirement.clone());
        let mut text = installed.join("\n");
        text.push('\n');
        std::fs::write(&record, text)
            .with_context(|| format!("cannot write {}", record.display()))?;
    }
    Ok(())
}

/// The environment's folder: `VENVS/cpython-X.Y.Z` above `bin/python`.
fn env_dir(env: &PythonEnv) -> PathBuf {
    env.exe
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// One `uv pip install` (or `pip install`); the error is the installer's last lines, joined.
fn install_one(
    env: &PythonEnv,
    base: &Path,
    venvs: &Path,
    requirement: &str,
) -> Result<(), String> {
    let mut cmd = match find_uv(venvs) {
        Some(uv) => {
            let mut c = Command::new(uv);
            c.args([
                "pip",
                "install",
                "--quiet",
                "--compile-bytecode",
                "--python",
            ])
            .arg(&env.exe);
            c
        }
        None => {
            let mut c = Command::new(&env.exe);
            c.args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ]);
            c
        }
    };
    cmd.arg("--constraint").arg(base).arg(requirement);
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start the installer: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    Err(if tail.is_empty() {
        format!("installer exited with {}", out.status)
    } else {
        tail.join(" | ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_are_normalised_and_stop_at_the_version() {
        assert_eq!(package_name("Foo_Bar.baz==1.2"), "foo-bar-baz");
        assert_eq!(package_name("idna>=3"), "idna");
        assert_eq!(
            package_name("requests[socks] ; python_version>'3'"),
            "requests"
        );
    }
}
