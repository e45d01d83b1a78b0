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
    } else if version.starts_with("3.14.") || version.starts_with("3.15.") {
        "py314plus.txt"
    } else {
        "py311plus.txt"
    };
    workloads.join("requirements").join(file)
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
/// requirements or the interpreter change. Two commands preparing the same environment at once
/// take turns on `VENVS/.locks/cpython-X.Y.Z` (an advisory lock the kernel drops when a
/// process dies), so the second finds the first's environment made instead of removing it
/// half-built.
pub fn prepare_env(
    interp: &Interpreter,
    workloads: &Path,
    venvs: &Path,
) -> anyhow::Result<PythonEnv> {
    let req = requirements_for(workloads, &interp.version);
    let req_text = std::fs::read(&req).with_context(|| format!("cannot read {}", req.display()))?;
    let mut hash = Sha256::new();
    hash.update(&req_text);
    // A file that includes another (`-r py311plus.txt`) changes when that one does.
    for included in String::from_utf8_lossy(&req_text)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("-r "))
    {
        hash.update(std::fs::read(req.with_file_name(included.trim())).unwrap_or_default());
    }
    hash.update(interp.exe.to_string_lossy().as_bytes());
    hash.update(interp.version.as_bytes());
    // How environments are built; change it to force a rebuild (bytecode is compiled at install
    // time because workers run with PYTHONDONTWRITEBYTECODE=1).
    hash.update(b"recipe-2: compile-bytecode");
    let stamp_value = format!("{:x}", hash.finalize());

    let dir = venvs.join(format!("cpython-{}", interp.version));
    let locks = venvs.join(".locks");
    std::fs::create_dir_all(&locks)
        .with_context(|| format!("cannot create {}", locks.display()))?;
    let lock_path = locks.join(format!("cpython-{}", interp.version));
    let lock = std::fs::File::create(&lock_path)
        .with_context(|| format!("cannot create {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("cannot lock {}", lock_path.display()))?;
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
    eprintln!(
        "asynclab: building the Python {} environment in {} ...",
        interp.version,
        dir.display()
    );
    if let Some(minor) = &interp.root {
        build_in_root(minor, &dir, &req, venvs)?;
        std::fs::write(&stamp, stamp_value)
            .with_context(|| format!("cannot write {}", stamp.display()))?;
        return Ok(PythonEnv {
            version: interp.version.clone(),
            exe: std::path::absolute(&exe)?,
        });
    }
    match super::find_uv(venvs) {
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
                &mut pip_install(Command::new(&uv), &exe, &req),
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

/// `uv` made to install requirements file `req` into the interpreter `python` (quietly, with
/// bytecode compiled), the same on the host and inside a Debian root.
fn pip_install(mut uv: Command, python: &Path, req: &Path) -> Command {
    uv.args([
        "pip",
        "install",
        "--quiet",
        "--compile-bytecode",
        "--python",
    ])
    .arg(python)
    .arg("-r")
    .arg(req);
    uv
}

/// Builds the environment `dir` inside the Debian root of `minor` with the uv copied there
/// (the root's interpreter does not run on the host), then makes `dir/bin/python` the host's
/// way in: a launcher for `dir/bin/pythonX.Y` inside the root. `dir` must be in a folder the
/// root shares with the host ([`super::roots::shared`]).
fn build_in_root(minor: &str, dir: &Path, req: &Path, venvs: &Path) -> anyhow::Result<()> {
    let dir = std::path::absolute(dir)?;
    let req = std::path::absolute(req)?;
    if !(super::roots::shared(&dir) && super::roots::shared(&req)) {
        anyhow::bail!(
            "the environment {} and {} must be outside the system folders (/{}) to be built inside the Debian root; pass --venvs and --workloads elsewhere",
            dir.display(),
            req.display(),
            super::roots::SYSTEM_DIRS.join(", /")
        );
    }
    let inside = |program: &str| super::roots::command_inside(venvs, minor, program);
    run(
        inside("/usr/local/bin/uv")?
            .args([
                "venv",
                "--quiet",
                "--python",
                &super::roots::python_inside(minor),
            ])
            .arg(&dir),
        "uv venv (in the Debian root)",
    )?;
    let real = dir.join(format!("bin/python{minor}"));
    run(
        &mut pip_install(inside("/usr/local/bin/uv")?, &real, &req),
        "uv pip install (in the Debian root)",
    )?;
    let launch = std::path::absolute(super::roots::launcher(venvs, minor))?;
    // uv links python3 and pythonX.Y to `python`, which becomes the host's launcher: point
    // them at the root's interpreter instead, so that inside the root they stay interpreters.
    for name in [format!("python{minor}"), "python3".into()] {
        let link = dir.join("bin").join(&name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(super::roots::python_inside(minor), &link)
            .with_context(|| format!("cannot link {}", link.display()))?;
    }
    let python = dir.join("bin/python");
    std::fs::remove_file(&python)
        .with_context(|| format!("cannot replace {}", python.display()))?;
    std::fs::write(&python, super::roots::env_launcher_text(&launch, &real))
        .with_context(|| format!("cannot write {}", python.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}
