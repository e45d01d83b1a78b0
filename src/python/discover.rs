//! Finds interpreters by version (`3.12`) on PATH and in pyenv's and uv's folders, or by path.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

/// A base interpreter found on the machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpreter {
    /// Full version, e.g. "3.12.1".
    pub version: String,
    /// Path to the interpreter (for one in a Debian root, its path on the host, which only
    /// runs through the root's launcher).
    pub exe: PathBuf,
    /// The minor version of the Debian root it lives in (`asynclab pythons add`), if it does.
    pub root: Option<String>,
}

/// Asks an interpreter for its version and real executable (a pyenv shim resolves to the
/// interpreter behind it); None when it does not run.
fn probe(exe: &Path) -> Option<(String, PathBuf)> {
    let out = Command::new(exe)
        .args([
            "-c",
            "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut lines = text.lines();
    let version = lines.next()?.trim().to_string();
    let real = lines
        .next()
        .map(|l| PathBuf::from(l.trim()))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| exe.to_path_buf());
    Some((version, real))
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
}

/// Candidate paths for a `major.minor` request, best first.
fn candidates(want: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let name = format!("python{want}");
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            out.push(dir.join(&name));
        }
    }
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".pyenv"));
    let uv_root = std::env::var_os("UV_PYTHON_INSTALL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".local/share/uv/python"));
    for (root, prefix) in [
        (pyenv_root.join("versions"), want.to_string()),
        (uv_root, format!("cpython-{want}")),
    ] {
        if let Ok(entries) = std::fs::read_dir(&root) {
            let mut dirs: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    n.starts_with(&format!("{prefix}."))
                        || n.starts_with(&format!("{prefix}+"))
                        || n == prefix
                })
                .collect();
            dirs.sort();
            dirs.reverse();
            out.extend(dirs.into_iter().map(|d| d.join("bin").join(&name)));
        }
    }
    out
}

/// Resolves `--python` input: a version like `3.12` or a path to an interpreter.
pub fn find_interpreter(spec: &str) -> anyhow::Result<Interpreter> {
    let spec = spec.trim();
    if spec.contains('/') {
        let (version, exe) = probe(Path::new(spec)).with_context(|| {
            format!("--python {spec}: not a working Python interpreter; give a path to a python executable or a version like 3.12")
        })?;
        return Ok(Interpreter {
            version,
            exe,
            root: None,
        });
    }
    let want = spec.trim_start_matches("python");
    let parts: Vec<&str> = want.split('.').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.parse::<u32>().is_err()) {
        anyhow::bail!("--python {spec}: expected a version like 3.12 or a path to an interpreter");
    }
    let minor = format!("{}.{}", parts[0], parts[1]);
    for exe in candidates(&minor) {
        if !exe.is_file() {
            continue;
        }
        if let Some((version, real)) = probe(&exe) {
            if version == want || version.starts_with(&format!("{want}.")) {
                return Ok(Interpreter {
                    version,
                    exe: real,
                    root: None,
                });
            }
        }
    }
    if super::roots::provides(&minor) {
        anyhow::bail!(
            "--python {spec}: interpreter not found on PATH, in pyenv's or uv's folders, or in a Debian root; make one with `asynclab pythons add {minor}` (debootstrap of Debian's unstable suite), or `uv python install {minor}` where uv can download"
        );
    }
    anyhow::bail!(
        "--python {spec}: interpreter not found on PATH, in pyenv's or uv's folders; install it (`pyenv install {minor}` or `uv python install {minor}`) or pass a path with --python /path/to/python"
    )
}

/// [`find_interpreter`], and for a version Debian's unstable suite packages, the root made by
/// `asynclab pythons add` in `venvs` when nothing else has it.
pub fn find_interpreter_in(spec: &str, venvs: &Path) -> anyhow::Result<Interpreter> {
    let err = match find_interpreter(spec) {
        Ok(i) => return Ok(i),
        Err(e) => e,
    };
    let want = spec.trim().trim_start_matches("python");
    let minor: String = want.split('.').take(2).collect::<Vec<_>>().join(".");
    if !super::roots::provides(&minor) || !super::roots::launcher(venvs, &minor).is_file() {
        return Err(err);
    }
    let out = super::roots::command_inside(venvs, &minor, &super::roots::python_inside(&minor))?
        .args(["-c", "import platform; print(platform.python_version())"])
        .stdin(std::process::Stdio::null())
        .output()
        .context("cannot start the Debian root's launcher")?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !(version == want || version.starts_with(&format!("{want}."))) {
        anyhow::bail!(
            "--python {spec}: the Debian root {} does not run python{minor} ({}); remake it with `asynclab pythons add {minor} --rebuild`",
            super::roots::dir(venvs, &minor).display(),
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("no output").trim()
        );
    }
    Ok(Interpreter {
        version,
        exe: super::roots::tree(venvs, &minor)
            .join(super::roots::python_inside(&minor).trim_start_matches('/')),
        root: Some(minor),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_specs_name_the_flag() {
        let err = find_interpreter("three").unwrap_err().to_string();
        assert!(err.starts_with("--python three"), "{err}");
        let err = find_interpreter("2.1").unwrap_err().to_string();
        assert!(
            err.contains("not found") && err.contains("pyenv install 2.1"),
            "{err}"
        );
        let err = find_interpreter("/nonexistent/python")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a working Python"), "{err}");
    }
}
