//! One file per subcommand: each owns its clap arguments, checks its own flags (with
//! [`UsageError`](crate::error::UsageError) lines naming the flag and the fix) and returns
//! the process exit code from `execute`.
//!
//! | file            | subcommand               |
//! |-----------------|--------------------------|
//! | `run/`          | `asynclab run`: plan → start services → measure → write |
//! | `rerun.rs`      | `asynclab rerun`: a results.json's study, run again |
//! | `fanout_cell.rs` | a `loadgen` cell whose server is a WebSocket chat room (`clients`) |
//! | `loadgen.rs`    | `asynclab loadgen` (hidden): the worker of a `loadgen` cell |
//! | `loadgen_cell.rs` | what both forms of a `loadgen` cell use: parameters, control pipe, readings |
//! | `list.rs`       | `asynclab list`          |
//! | `envs.rs`       | `asynclab envs` (and the interpreters `run` uses) |
//! | `pythons.rs`    | `asynclab pythons add/list` (Debian roots for 3.14, 3.15) |
//! | `mock_server.rs`| `asynclab mock-server`   |
//! | `room_server.rs`| `asynclab room-server` (hidden): the fan-out scenario's Rust reference room |
//! | `self_check.rs` | `asynclab self-check`    |
//! | `doctor.rs`     | `asynclab doctor`        |
//! | `cost.rs`       | `asynclab cost`          |
//! | `report.rs`     | `asynclab report`        |
//! | `compare.rs`    | `asynclab compare`       |
//! | `adr.rs`        | `asynclab adr`           |
//! | `export.rs`     | `asynclab export pyperf` |
//! | `new_scenario.rs`| `asynclab new-scenario` |

use std::path::PathBuf;

use clap::Args;

use crate::catalogue::Catalogue;

pub mod adr;
pub mod compare;
pub mod cost;
pub mod delay_proxy;
pub mod doctor;
pub mod envs;
pub mod export;
pub mod fanout_cell;
pub mod list;
pub mod load;
pub mod loadgen;
pub mod loadgen_cell;
pub mod mock_server;
pub mod new_scenario;
pub mod pythons;
pub mod report;
pub mod rerun;
pub mod room_server;
pub mod run;
pub mod self_check;

/// Where the workloads and environments live.
#[derive(Debug, Args, Clone)]
pub struct CommonArgs {
    /// Folder with catalogue.toml, harness.py and the scripts.
    #[arg(long, default_value = "workloads")]
    pub workloads: PathBuf,
    /// A catalogue of your own scenarios to add to the built-in one (scripts relative to that
    /// file's folder); repeat for several. `asynclab new-scenario` writes one to start from.
    #[arg(long = "catalogue", value_name = "FILE")]
    pub catalogues: Vec<PathBuf>,
}

impl CommonArgs {
    /// The built-in catalogue plus every `--catalogue FILE`.
    pub fn catalogue(&self) -> anyhow::Result<Catalogue> {
        Catalogue::load_with(&self.workloads, &self.catalogues)
    }
}
