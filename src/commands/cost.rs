//! `asynclab cost`: its flags, checked here; the table itself is [`crate::cost`].

use std::path::PathBuf;

use clap::Args;

use crate::cost::{self, RequestMix};
use crate::error::UsageError;

/// `asynclab cost`.
#[derive(Debug, Args, Clone)]
pub struct CostArgs {
    /// A results folder (or results.json) with asyncio_ops cells.
    #[arg(default_value = "results/latest")]
    pub dir: PathBuf,
    /// Tasks created and awaited per request.
    #[arg(long, default_value_t = 20)]
    pub tasks: u32,
    /// Queue put/get pairs per request.
    #[arg(long, default_value_t = 40)]
    pub queue_ops: u32,
    /// TCP round trips per request.
    #[arg(long, default_value_t = 3)]
    pub round_trips: u32,
    /// The request's total time in milliseconds, for the share an upgrade saves.
    #[arg(long, default_value_t = 20.0)]
    pub request_ms: f64,
    /// The interpreter upgrades are measured from (default: the oldest in the run).
    #[arg(long)]
    pub base: Option<String>,
}

/// Checks `--request-ms`, then prints the per-request table.
pub fn execute(a: &CostArgs) -> anyhow::Result<i32> {
    if !(a.request_ms.is_finite() && a.request_ms > 0.0) {
        return Err(UsageError::Flag {
            flag: "--request-ms",
            message: format!(
                "{} is not a request time; give milliseconds > 0, e.g. --request-ms 20",
                a.request_ms
            ),
        }
        .into());
    }
    let mix = RequestMix {
        tasks: a.tasks,
        queue_ops: a.queue_ops,
        round_trips: a.round_trips,
    };
    cost::run(&a.dir, mix, a.request_ms, a.base.as_deref())
}
