//! Python interpreters and the per-interpreter environments the workloads run in.

mod discover;
pub mod roots;
pub mod scenario_requirements;
mod venv;

pub use discover::{find_interpreter, find_interpreter_in, Interpreter};
pub use venv::{prepare_env, requirements_for};

use std::path::PathBuf;

/// A ready environment: the interpreter version and the environment's `python`.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonEnv {
    /// Full version, e.g. "3.12.1".
    pub version: String,
    /// The environment's interpreter.
    pub exe: PathBuf,
}

impl PythonEnv {
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
