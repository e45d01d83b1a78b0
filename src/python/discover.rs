//! Finds interpreters by version (`3.12`, or `3.14t` for a free-threaded build) on PATH and in
//! pyenv's and uv's folders, or by path.
//!
//! A free-threaded build (sysconfig `Py_GIL_DISABLED`) is labelled with CPython's own suffix,
//! `3.14.2t`, wherever the lab names an interpreter (its environment, cells, reports), so it
//! never shares a name with the same version's GIL build; `3.14` finds only GIL builds and
//! `3.14t` only free-threaded ones.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

/// A base interpreter found on the machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpreter {
    /// Full version, e.g. "3.12.1", with a `t` for a free-threaded build ("3.14.2t").
    pub version: String,
    /// Path to the interpreter (for one in a Debian root, its path on the host, which only
    /// runs through the root's launcher).
    pub exe: PathBuf,
    /// The minor version of the Debian root it lives in (`asynclab pythons add`), if it does.
    pub root: Option<String>,
}

/// The suffix CPython gives a free-threaded build's names (`python3.14t`).
const FREE_THREADED: char = 't';

/// Whether a version label is a free-threaded build's ([`label`]).
pub fn is_free_threaded(version: &str) -> bool {
    version.ends_with(FREE_THREADED)
}

/// An interpreter's label: its version, with `t` when the build is free-threaded.
fn label(version: &str, gil_disabled: bool) -> String {
    if gil_disabled {
        format!("{version}{FREE_THREADED}")
    } else {
        version.to_string()
    }
}

/// A `--python` version request: `3.12`, `3.12.1`, `python3.14t`; the version's parts and
/// whether a free-threaded build is asked for. None when it is not a version.
fn parse_request(spec: &str) -> Option<(String, bool)> {
    let want = spec.trim().trim_start_matches("python");
    let (want, free) = match want.strip_suffix(FREE_THREADED) {
        Some(w) => (w, true),
        None => (want, false),
    };
    let parts: Vec<&str> = want.split('.').collect();
    (parts.len() >= 2 && parts.iter().all(|p| p.parse::<u32>().is_ok()))
        .then(|| (want.to_string(), free))
}

/// Asks an interpreter for its label ([`label`]) and real executable (a pyenv shim resolves to
/// the interpreter behind it); None when it does not run.
fn probe(exe: &Path) -> Option<(String, PathBuf)> {
    let out = Command::new(exe)
        .args([
            "-c",
            "import sys, sysconfig; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable); print(bool(sysconfig.get_config_var('Py_GIL_DISABLED')))",
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
    let gil_disabled = lines.next().is_some_and(|l| l.trim() == "True");
    Some((label(&version, gil_disabled), real))
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
}

/// Candidate paths for a `major.minor` request, best first: `python3.14` on PATH, in pyenv's
/// `versions/3.14.*` and uv's `cpython-3.14.*` folders; for a free-threaded one `python3.14t`,
/// in pyenv's `3.14t*`/`3.14.*t` and uv's `cpython-3.14.*+freethreaded*` folders too.
fn candidates(want: &str, free_threaded: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let suffix = if free_threaded { "t" } else { "" };
    let name = format!("python{want}{suffix}");
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
                        || n.starts_with(&format!("{prefix}t"))
                        || n == prefix
                })
                .collect();
            dirs.sort();
            dirs.reverse();
            for d in dirs {
                out.push(d.join("bin").join(&name));
                if free_threaded {
                    // uv's and pyenv's free-threaded folders name their plain `python3.14`
                    // the same build.
                    out.push(d.join("bin").join(format!("python{want}")));
                }
            }
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
    let Some((want, free_threaded)) = parse_request(spec) else {
        anyhow::bail!("--python {spec}: expected a version like 3.12 (3.14t for a free-threaded build) or a path to an interpreter");
    };
    let minor: String = want.split('.').take(2).collect::<Vec<_>>().join(".");
    for exe in candidates(&minor, free_threaded) {
        if !exe.is_file() {
            continue;
        }
        if let Some((version, real)) = probe(&exe) {
            let bare = version.trim_end_matches(FREE_THREADED);
            let same_build = is_free_threaded(&version) == free_threaded;
            if same_build && (bare == want || bare.starts_with(&format!("{want}."))) {
                return Ok(Interpreter {
                    version,
                    exe: real,
                    root: None,
                });
            }
        }
    }
    if free_threaded {
        anyhow::bail!(
            "--python {spec}: no free-threaded CPython {minor} on PATH (python{minor}t), in pyenv's or uv's folders; install one with `uv python install {minor}t` (or `pyenv install {minor}t-dev`), or pass its path with --python /path/to/python{minor}t"
        );
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

    #[test]
    fn a_t_asks_for_a_free_threaded_build_and_labels_it() {
        assert_eq!(parse_request("3.14"), Some(("3.14".into(), false)));
        assert_eq!(parse_request("python3.14t"), Some(("3.14".into(), true)));
        assert_eq!(parse_request("3.13.1t"), Some(("3.13.1".into(), true)));
        assert_eq!(parse_request("3t"), None);
        assert_eq!(parse_request("3.x"), None);
        assert_eq!(label("3.14.2", true), "3.14.2t");
        assert_eq!(label("3.14.2", false), "3.14.2");
        assert!(is_free_threaded("3.14.2t") && !is_free_threaded("3.14.2"));
        let names: Vec<String> = candidates("3.14", true)
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        assert!(
            names.first().is_some_and(|n| n == "python3.14t"),
            "{names:?}"
        );
    }

    #[test]
    fn a_missing_free_threaded_build_says_how_to_get_one() {
        let err = find_interpreter("3.99t").unwrap_err().to_string();
        assert!(err.contains("uv python install 3.99t"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
