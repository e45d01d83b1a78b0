//! The comparisons that answer each scenario's question (its catalogue's contrasts, recorded
//! in the results document) in every setting both variants ran in, under the lab's one
//! comparison rule; and which of them answer which row of the published decision framework.

use super::comparison::{self, Comparison, Rule};
use super::resolution::Floors;
use crate::catalogue::{Contrast, ContrastFigure, FrameworkRow};
use crate::results::{Cell, CellStatus, Results, RunRecord};

/// One contrast in one setting.
#[derive(Debug, Clone)]
pub struct ContrastRow {
    /// The scenario.
    pub scenario: String,
    /// The setting (matrix-axis values), may be empty.
    pub group: String,
    /// Interpreter version.
    pub python: String,
    /// What is compared.
    pub contrast: Contrast,
    /// The `new` variant's cell id, and the `base` one's, as cited.
    pub cells: (String, String),
    /// The comparison, oriented so that above 1 `new` is better; None with fewer than two
    /// paired rounds.
    pub comparison: Option<Comparison>,
}

/// One round's latency p99, ms (NaN without latencies).
fn p99(r: &RunRecord) -> f64 {
    crate::stats::percentile(&r.latencies_ms, 99.0)
}

/// `new` against `base` on `figure`, above 1 when `new` is better.
pub(crate) fn compare(
    new: &Cell,
    base: &Cell,
    figure: ContrastFigure,
    rule: Rule,
) -> Option<Comparison> {
    match figure {
        ContrastFigure::Throughput => comparison::throughput_vs(new, base, rule),
        ContrastFigure::P99 => comparison::cells(base, new, p99, rule),
        ContrastFigure::Memory => comparison::cells(base, new, |r| r.peak_rss_delta_mib, rule),
    }
}

/// Each contrast's cells among `cells` (one scenario's): every `new` cell with the `base` cell of
/// the same interpreter and setting, in the contrasts' order, then the cells'.
pub(crate) fn pairs<'a, 'c>(
    contrasts: &'c [Contrast],
    cells: &[&'a Cell],
) -> Vec<(&'c Contrast, &'a Cell, &'a Cell)> {
    let mut out = Vec::new();
    for contrast in contrasts {
        for &new in cells.iter().filter(|c| c.variant == contrast.new) {
            if let Some(&base) = cells.iter().find(|c| {
                c.variant == contrast.base && c.python == new.python && c.group == new.group
            }) {
                out.push((contrast, new, base));
            }
        }
    }
    out
}

/// Every recorded contrast in every setting, in the document's scenario order, then the
/// contrasts' order, then the cells' order. Failed cells and cells with errors answer nothing.
pub fn rows(results: &Results, rule: Rule) -> Vec<ContrastRow> {
    let floors = Floors::of(&super::resolution::twins(results, rule));
    let usable =
        |c: &&Cell| c.status == CellStatus::Ok && c.summary.as_ref().is_some_and(|s| s.errors == 0);
    let mut out = Vec::new();
    for name in super::scenario_names(results) {
        let Some(info) = results.scenarios.get(&name) else {
            continue;
        };
        let cells: Vec<&Cell> = results
            .cells
            .iter()
            .filter(|c| c.scenario == name)
            .filter(usable)
            .collect();
        for (contrast, new, base) in pairs(&info.contrasts, &cells) {
            out.push(ContrastRow {
                scenario: name.clone(),
                group: new.group.clone(),
                python: new.python.clone(),
                contrast: contrast.clone(),
                cells: (new.id.clone(), base.id.clone()),
                comparison: compare(new, base, contrast.figure, floors.rule(rule, &name)),
            });
        }
    }
    out
}

/// The contrasts that answer `row`.
pub fn answering(rows: &[ContrastRow], row: FrameworkRow) -> Vec<&ContrastRow> {
    rows.iter()
        .filter(|r| r.contrast.row == Some(row))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contrast_reads_every_setting_both_variants_ran_in() {
        let mut r = crate::results::quick_fixture();
        crate::analysis::summary::derive(&mut r);
        let info = r
            .scenarios
            .entry("io_http".into())
            .or_insert(crate::results::ScenarioInfo {
                title: "io".into(),
                question: String::new(),
                baseline: None,
                contrasts: Vec::new(),
            });
        info.contrasts = vec![Contrast {
            new: "asyncio".into(),
            base: "sync".into(),
            figure: ContrastFigure::Throughput,
            row: Some(FrameworkRow::HighConcurrencyIo),
        }];
        let rule = Rule::of(&r.method);
        let rows = rows(&r, rule);
        let settings = r
            .cells
            .iter()
            .filter(|c| c.scenario == "io_http" && c.variant == "asyncio")
            .count();
        assert_eq!(rows.len(), settings);
        for row in &rows {
            let c = row.comparison.as_ref().unwrap();
            assert!(c.ratio.ratio > 1.0, "asyncio beats sync on a wait: {c:?}");
        }
        assert_eq!(
            answering(&rows, FrameworkRow::HighConcurrencyIo).len(),
            rows.len()
        );
        assert!(answering(&rows, FrameworkRow::CpuHeavy).is_empty());
    }
}
