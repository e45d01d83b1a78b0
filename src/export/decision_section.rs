//! The decision table's section: per scenario and setting, the recommended variant, its ratio
//! against the runner-up, whether the gap beats the spread, and the verdict.

use super::markup::{Cell, Mark, Section, Table};
use super::scenario_tables::verdict_mark;
use crate::analysis::comparison::{Verdict, SETTLED};
use crate::analysis::decision::Decision;
use crate::format::num;

/// "–" for an empty setting (a scenario without matrix axes).
pub fn setting_text(group: &str) -> &str {
    if group.is_empty() {
        "–"
    } else {
        group
    }
}

/// "4.92× [4.75–4.94]": a decision's ratio with its interval, as the table writes it.
pub fn ratio_text(d: &Decision) -> String {
    if d.ratio.ratio.is_finite() {
        format!(
            "{}× [{}–{}]",
            num(d.ratio.ratio),
            num(d.ratio.ci95_low),
            num(d.ratio.ci95_high)
        )
    } else {
        "– (no clean rounds to pair)".into()
    }
}

/// The section; None when nothing can be decided.
pub fn section(rows: &[Decision]) -> Option<Section> {
    if rows.is_empty() {
        return None;
    }
    let mut out = Section::new("Decision table", None);
    out.para("Computed from this run: for each scenario and setting, the variant with the best median, how much better it is than the runner-up (the geometric mean of the per-round ratios, with its 95% t interval), whether every round of the winner beat every round of the runner-up (larger than the run-to-run spread), and the paired t test's verdict (a lead whose interval reaches within the noise threshold is *within noise*, not significant). Variants that reported errors are left out.");
    let mut t = Table::new([
        "scenario",
        "setting",
        "python",
        "ranked by",
        "recommended",
        "runner-up",
        "ratio (95% CI)",
        "larger than spread",
        "significant",
    ]);
    for d in rows {
        let significant = match &d.verdict {
            Verdict::Significant => "yes".to_string(),
            Verdict::NotSignificant => "no".into(),
            Verdict::WithinNoise => "no (within noise)".into(),
            Verdict::TooFewRounds => "no (too few rounds)".into(),
            Verdict::Inconclusive(why) => format!("no (inconclusive: {why})"),
        };
        t.row([
            Cell::from(d.scenario.clone()),
            setting_text(&d.group).into(),
            d.python.clone().into(),
            d.metric.into(),
            match &d.verdict {
                Verdict::Inconclusive(_) => Cell::marked(
                    format!("none (inconclusive; measured best: {})", d.winner),
                    Mark::Inconclusive,
                ),
                _ => d.winner.clone().into(),
            },
            d.runner_up.clone().into(),
            Cell::marked(ratio_text(d), verdict_mark(&d.verdict)),
            (if d.beyond_spread { "yes" } else { "no" }).into(),
            Cell::marked(significant, verdict_mark(&d.verdict)),
        ]);
    }
    out.table(t);
    out.para(settled_text(rows));
    Some(out)
}

/// How many rows are settled for good, and how; the rest more rounds could still change.
pub fn settled_text(rows: &[Decision]) -> String {
    let count = |how: &str| rows.iter().filter(|d| d.settled == Some(how)).count();
    let parts: Vec<String> = SETTLED
        .into_iter()
        .map(|how| (count(how), how))
        .filter(|(n, _)| *n > 0)
        .map(|(n, how)| format!("{n} {how}"))
        .collect();
    let settled = rows.iter().filter(|d| d.settled.is_some()).count();
    let open = rows.len() - settled;
    let how = if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    };
    let open = match open {
        0 => "none still open".to_string(),
        n => format!("{n} still open, which more rounds could change"),
    };
    format!("Settled: {settled} of {} rows{how}; {open}.", rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::RatioEstimate;

    fn row(settled: Option<&'static str>) -> Decision {
        Decision {
            scenario: "s".into(),
            group: String::new(),
            python: "3.12.1".into(),
            metric: "throughput /s",
            winner: "a".into(),
            runner_up: "b".into(),
            ratio: RatioEstimate {
                ratio: 1.2,
                ci95_low: 1.1,
                ci95_high: 1.3,
                paired: true,
            },
            beyond_spread: false,
            verdict: Verdict::NotSignificant,
            settled,
        }
    }

    #[test]
    fn the_count_names_each_way_a_row_settled_and_the_open_ones() {
        let rows = [
            row(Some("different")),
            row(None),
            row(Some("equal within noise")),
            row(Some("different")),
        ];
        assert_eq!(
            settled_text(&rows),
            "Settled: 3 of 4 rows (2 different, 1 equal within noise); 1 still open, which more rounds could change."
        );
        assert_eq!(
            settled_text(&[row(Some("inconclusive"))]),
            "Settled: 1 of 1 rows (1 inconclusive); none still open."
        );
        assert_eq!(
            settled_text(&[row(None)]),
            "Settled: 0 of 1 rows; 1 still open, which more rounds could change."
        );
    }
}
