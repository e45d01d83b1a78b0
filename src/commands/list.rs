//! `asynclab list`: the scenarios in the catalogue, one line each.

use super::CommonArgs;
use crate::catalogue::Catalogue;

/// `asynclab list` takes only the shared `--workloads` folder ([`CommonArgs`]).
pub fn execute(args: &CommonArgs) -> anyhow::Result<i32> {
    let cat = Catalogue::load(&args.workloads)?;
    for s in &cat.scenarios {
        println!(
            "{:<14} {}  [variants: {}]",
            s.name,
            s.title,
            s.variants.join(", ")
        );
    }
    Ok(0)
}
