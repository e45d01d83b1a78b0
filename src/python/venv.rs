//! Builds one environment per interpreter from pinned requirements, with uv or venv + pip.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use sha2::{Digest, Sha256};

use super::{Interpreter, PythonEnv};

/// The pinned requirements file for an interpreter version.
pub fn requirements_for(workloads: &Path, version: &str) -> PathBuf {
    let file = if version.starts_with("3.10.") {
        "py310.txt"
    } else {
        "py311plus.txt"
    };
    workloads.join("requirements").join(file)
}

/// `uv` on PATH, or the one `make tools` installs under the environments folder.
pub(super) fn find_uv(venvs: &Path) -> Option<PathBuf> {
    let local = venvs.join(".tools/bin/uv");
    if local.is_file() {
        return Some(local);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("uv"))
        .find(|p| p.is_file())
}

fn run(cmd: &mut Command, what: &str) -> anyhow::Result<()> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start {what}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(8).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        anyhow::bail!("{what} failed: {}", tail.join(" | "));
    }
    Ok(())
}

/// Makes (or reuses) `VENVS/cpython-X.Y.Z` for an interpreter; rebuilt only when the
/// requirements or the interpreter change.
pub fn prepare_env(
    interp: &Interpreter,
    workloads: &Path,
    venvs: &Path,
) -> anyhow::Result<PythonEnv> {
    let req = requirements_for(workloads, &interp.version);
    let req_text = std::fs::read(&req).with_context(|| format!("cannot read {}", req.display()))?;
    let mut hash = Sha256::new();
    hash.update(&req_text);
    hash.update(interp.exe.to_string_lossy().as_bytes());
    hash.update(interp.version.as_bytes());
    // How environments are built; change it to force a rebuild (bytecode is compiled at install
    // time because workers run with PYTHONDONTWRITEBYTECODE=1).
    hash.update(b"recipe-2: compile-bytecode");
    let stamp_value = format!("{:x}", hash.finalize());

    let dir = venvs.join(format!("cpython-{}", interp.version));
    let stamp = dir.join(".asynclab-stamp");
    let exe = dir.join("bin/python");
    if std::fs::read_to_string(&stamp)
        .map(|s| s.trim() == stamp_value)
        .unwrap_or(false)
        && exe.is_file()
    {
        return Ok(PythonEnv {
            version: interp.version.clone(),
            exe: std::path::absolute(&exe)?,
        });
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot remove stale {}", dir.display()))?;
    }
    std::fs::create_dir_all(venvs).with_context(|| format!("cannot create {}", venvs.display()))?;
    eprintln!(
        "asynclab: building the Python {} environment in {} ...",
        interp.version,
        dir.display()
    );
    match find_uv(venvs) {
        Some(uv) => {
            run(
                Command::new(&uv)
                    .arg("venv")
                    .arg("--quiet")
                    .arg("--python")
                    .arg(&interp.exe)
                    .arg(&dir),
                "uv venv",
            )?;
            run(
                Command::new(&uv)
                    .args([
                        "pip",
                        "install",
                        "--quiet",
                        "--compile-bytecode",
                        "--python",
                    ])
                    .arg(&exe)
                    .arg("-r")
                    .arg(&req),
                "uv pip install",
            )?;
        }
        None => {
            run(
                Command::new(&interp.exe).args(["-m", "venv"]).arg(&dir),
                "python -m venv",
            )?;
            run(
                Command::new(&exe)
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                        "-r",
                    ])
                    .arg(&req),
                "pip install",
            )?;
        }
    }
    std::fs::write(&stamp, stamp_value)
        .with_context(|| format!("cannot write {}", stamp.display()))?;
    Ok(PythonEnv {
        version: interp.version.clone(),
        exe: std::path::absolute(&exe)?,
    })
}
