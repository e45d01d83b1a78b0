//! `asynclab doctor`: what the machine has and what is missing, with the fix for each.

/// Prints the findings; 1 when anything is missing.
pub fn execute() -> anyhow::Result<i32> {
    let missing = crate::doctor::print();
    Ok(if missing == 0 { 0 } else { 1 })
}
