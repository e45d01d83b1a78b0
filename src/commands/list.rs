//! `asynclab list`: the scenarios in the catalogue, one line each.

use super::CommonArgs;

/// `asynclab list` takes only the shared `--workloads` folder and `--catalogue` files
/// ([`CommonArgs`]); a user's scenario says which file it came from.
pub fn execute(args: &CommonArgs) -> anyhow::Result<i32> {
    let cat = args.catalogue()?;
    for s in &cat.scenarios {
        let from = s
            .catalogue
            .as_ref()
            .map(|f| format!("  (from {})", f.display()))
            .unwrap_or_default();
        println!(
            "{:<14} {}  [variants: {}]{from}",
            s.name,
            s.title,
            s.variants.join(", ")
        );
    }
    Ok(0)
}
