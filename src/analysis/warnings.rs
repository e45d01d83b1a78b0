//! The report's warnings grouped by cause: each of the machine's once, then each cause of the
//! cells' round warnings once, with every sample it touched, so a cause that touched twenty
//! cells is one line and not twenty.

use crate::results::Results;
use crate::stats::{Cause, RoundWarning};

/// One cause and what it touched.
#[derive(Debug, Clone, PartialEq)]
pub struct WarningGroup {
    /// The cause and its fix, one line.
    pub headline: String,
    /// The samples it touched (`cell throughput: figures`); empty for a machine-wide cause.
    pub items: Vec<String>,
}

impl WarningGroup {
    /// How many warnings it stands for.
    pub fn count(&self) -> usize {
        self.items.len().max(1)
    }
}

/// The machine's warnings (`machine`, one group each), then the cells' round warnings by cause.
pub fn group(results: &Results, machine: impl IntoIterator<Item = String>) -> Vec<WarningGroup> {
    let mut out: Vec<WarningGroup> = machine
        .into_iter()
        .map(|headline| WarningGroup {
            headline,
            items: Vec::new(),
        })
        .collect();
    let all: Vec<RoundWarning> = results
        .cells
        .iter()
        .flat_map(super::summary::round_warnings)
        .collect();
    for cause in [Cause::Spread, Cause::Outliers, Cause::TooFewRounds] {
        let items: Vec<String> = all
            .iter()
            .filter(|w| w.cause == cause)
            .map(|w| format!("{}: {}", w.label, w.detail))
            .collect();
        if !items.is_empty() {
            out.push(WarningGroup {
                headline: cause.headline(),
                items,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_group_per_cause_with_every_cell_it_touched() {
        let mut r = crate::results::quick_fixture();
        crate::analysis::summary::derive(&mut r);
        let stored: usize = r.cells.iter().map(|c| c.warnings.len()).sum();
        let groups = group(&r, ["the machine is busy".to_string()]);
        assert_eq!(groups[0].headline, "the machine is busy");
        assert_eq!(groups[0].count(), 1);
        let grouped: usize = groups[1..].iter().map(|g| g.items.len()).sum();
        assert_eq!(grouped, stored, "every cell warning lands in one group");
        let mut heads: Vec<&str> = groups.iter().map(|g| g.headline.as_str()).collect();
        heads.dedup();
        assert_eq!(heads.len(), groups.len(), "no cause twice");
    }
}
