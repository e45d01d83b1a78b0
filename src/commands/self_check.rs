//! `asynclab self-check` (`make bench`): the mock server's delay accuracy and throughput, its
//! timer at a thousand requests in flight, and the delay line's overshoot, on this machine.

use crate::services::{delay_check, selfcheck};

/// Measures and prints each report; 1 when any is not fit for measuring.
pub fn execute() -> anyhow::Result<i32> {
    let mut fit = true;
    let report = selfcheck::run(selfcheck::SelfCheckOpts::default())?;
    println!("{report}");
    fit &= report.is_fit();
    let many = selfcheck::SelfCheckOpts {
        requests: 5 * selfcheck::MANY_CONCURRENT,
        concurrency: selfcheck::MANY_CONCURRENT,
        max_delay_error_p99_ms: selfcheck::MAX_TIMER_ERROR_P99_MS,
        ..selfcheck::SelfCheckOpts::default()
    };
    let report = selfcheck::run(many)?;
    println!("{report}");
    fit &= report.is_fit();
    for check in delay_check::run()? {
        println!("{check}");
        fit &= check.is_fit();
    }
    Ok(if fit { 0 } else { 1 })
}
