//! `asynclab doctor`: what the machine has and what is missing, with the fix for each.

use clap::Args;

/// `asynclab doctor`.
#[derive(Debug, Args, Clone)]
pub struct DoctorArgs {
    /// Print the findings as JSON (what, level: ok|warn|missing, detail).
    #[arg(long)]
    pub json: bool,
}

/// Prints the findings; 1 when anything is missing (warnings do not fail).
pub fn execute(args: &DoctorArgs) -> anyhow::Result<i32> {
    let missing = crate::doctor::print(args.json);
    Ok(if missing == 0 { 0 } else { 1 })
}
