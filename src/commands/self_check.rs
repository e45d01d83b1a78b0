//! `asynclab self-check`: the mock server's delay accuracy and throughput on this machine.

use crate::services::selfcheck;

/// Measures and prints the report; 1 when the machine is not fit for measuring.
pub fn execute() -> anyhow::Result<i32> {
    let report = selfcheck::run(selfcheck::SelfCheckOpts::default())?;
    println!("{report}");
    Ok(if report.is_fit() { 0 } else { 1 })
}
