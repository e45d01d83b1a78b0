//! Python interpreters and the per-interpreter environments the workloads run in.

mod discover;
pub mod roots;
pub mod scenario_requirements;
mod venv;

pub use discover::{find_interpreter, find_interpreter_in, is_free_threaded, Interpreter};
pub use venv::{prepare_env, requirements_for};

use std::path::{Path, PathBuf};

/// A ready environment: the interpreter version and the environment's `python`.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonEnv {
    /// Full version, e.g. "3.12.1".
    pub version: String,
    /// The environment's interpreter.
    pub exe: PathBuf,
}

impl PythonEnv {
    /// Whether its interpreter is a free-threaded build (its version labelled `3.14.2t`): its
    /// workers run with the GIL off (`PYTHON_GIL=0`), even where an extension would turn it on.
    pub fn free_threaded(&self) -> bool {
        is_free_threaded(&self.version)
    }

    /// An environment that points at nothing, for tests of the matrix and scheduler.
    pub fn fake(version: &str) -> PythonEnv {
        PythonEnv {
            version: version.into(),
            exe: PathBuf::from("/nonexistent/python"),
        }
    }
}

/// Whether `name` is a top-level module of Python's standard library (3.10 to 3.13).
pub fn is_stdlib_module(name: &str) -> bool {
    include_str!("stdlib_modules.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .any(|l| l == name)
}

/// `uv` on PATH, or the one `make tools` installs under the environments folder.
pub(crate) fn find_uv(venvs: &Path) -> Option<PathBuf> {
    let local = venvs.join(".tools/bin/uv");
    if local.is_file() {
        return Some(local);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("uv"))
        .find(|p| p.is_file())
}
