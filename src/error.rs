//! Validation errors that name the flag or input at fault and say how to fix it.

use thiserror::Error;

/// Bad input from the command line or the catalogue: one line, naming the thing and the fix.
#[derive(Debug, Error)]
pub enum UsageError {
    /// `--scenario` names nothing in the catalogue.
    #[error(
        "--scenario: no scenario named '{name}'; known scenarios: {known} (see `asynclab list`)"
    )]
    UnknownScenario {
        /// The name given.
        name: String,
        /// Comma-separated known names.
        known: String,
    },
    /// `--param` names a parameter the scenario does not have.
    #[error("--param {key}: scenario {scenario} has no such parameter; its parameters: {known}")]
    UnknownParam {
        /// Parameter name.
        key: String,
        /// Scenario name.
        scenario: String,
        /// Comma-separated known parameters.
        known: String,
    },
    /// `--param` value does not have the parameter's type.
    #[error("--param {key}={value}: expected {expected} (like the catalogue's default {example})")]
    ParamType {
        /// Parameter name.
        key: String,
        /// The offending value.
        value: String,
        /// Expected type name.
        expected: &'static str,
        /// The default from the catalogue.
        example: String,
    },
    /// `--param` without `=`.
    #[error("--param {0}: expected KEY=VALUE[,VALUE...], e.g. --param concurrency=10,100")]
    ParamSyntax(String),
    /// A numeric flag out of range.
    #[error("{flag}: {message}")]
    Flag {
        /// The flag, e.g. `--rounds`.
        flag: &'static str,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A study file (`--study`, or the study a results.json embeds) that cannot be used: the
    /// line names the file, the key and the fix.
    #[error("{0}")]
    Study(String),
}
