//! The decision table's section: per scenario and setting, the recommended variant, its ratio
//! against the runner-up, whether the gap beats the spread, and the verdict.

use super::markup::{Cell, Mark, Section, Table};
use super::scenario_tables::verdict_mark;
use crate::analysis::comparison::Verdict;
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
    out.para("Computed from this run: for each scenario and setting, the variant with the best median, how much better it is than the runner-up (paired bootstrap 95% interval), whether every round of the winner beat every round of the runner-up (larger than the run-to-run spread), and the Mann–Whitney verdict (a lead whose interval reaches within the noise threshold is *within noise*, not significant). Variants that reported errors are left out.");
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
    let parts: Vec<String> = ["different", "equal within noise", "inconclusive"]
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
