//! The run's resolution in words and as a table: each A/A twin against the cell it repeats and
//! the smallest difference its rounds could call (`analysis::resolution`), for the method
//! paragraph of every report and the terminal summary's line per scenario.

use super::markup::{Block, Table};
use super::scenario_tables::{outcome, ratio_cell};
use crate::analysis::resolution::Twin;
use crate::analysis::Report;

/// A resolution as shown: "±4.2%".
pub fn pct(resolution: f64) -> String {
    format!("±{}%", crate::format::num(resolution * 100.0))
}

/// One twin in a line: "sync against its A/A twin (Python 3.12.1): 1.01× [0.97–1.05] not
/// significant; resolution ±4.2%".
pub fn line(t: &Twin) -> String {
    let at = if t.setting.is_empty() {
        format!("Python {}", t.python)
    } else {
        format!("{}, Python {}", t.setting, t.python)
    };
    format!(
        "{} against its A/A twin ({at}), {}: {}; resolution {}",
        t.variant,
        t.figure,
        outcome(t.aa.as_ref()),
        t.resolution
            .map_or("unknown (fewer than 3 rounds)".into(), pct)
    )
}

/// The method paragraph's resolution: what the twins say, a table of them, and the false
/// positives among them.
pub fn blocks(r: &Report) -> Vec<Block> {
    let unjudged = verdictless(r);
    let unjudged_note = (!unjudged.is_empty()).then(|| {
        format!(
            "{} compare{} no variants by a verdict (their tables give measurements with intervals): no A/A twin runs for {} and no resolution applies.",
            unjudged.join(", "),
            if unjudged.len() == 1 { "s" } else { "" },
            if unjudged.len() == 1 { "it" } else { "them" },
        )
    });
    if r.twins.is_empty() {
        if unjudged.len() == r.scenarios.len() {
            return unjudged_note.into_iter().map(Block::Para).collect();
        }
        let mut out = vec![Block::Para(
            "No A/A twin ran (`--no-twins`, fewer than 3 rounds, or a document from before twins): this run states no resolution, and only each comparison's own interval says how small a difference it could tell.".into(),
        )];
        out.extend(unjudged_note.map(Block::Para));
        return out;
    }
    let mut out = vec![Block::Para(
        "**Resolution.** Each scenario's baseline cell ran a second time in every round as its A/A twin: two copies of one program, so their ratio shows what this run can tell apart. A scenario's resolution is the largest of its twins' (the half-width of the interval such rounds give): differences under it cannot be told apart in this run, and no ratio of that scenario nearer 1 than it is called significant.".into(),
    )];
    let mut t = Table::new([
        "scenario",
        "A/A twin of",
        "setting",
        "Python",
        "figure",
        "twin vs original",
        "resolution",
    ]);
    for w in &r.twins {
        t.row([
            w.scenario.clone().into(),
            w.variant.clone().into(),
            w.setting.clone().into(),
            w.python.clone().into(),
            w.figure.to_string().into(),
            w.aa.as_ref().map_or(outcome(None).into(), ratio_cell),
            w.resolution
                .map_or("unknown (fewer than 3 rounds)".into(), pct)
                .into(),
        ]);
    }
    out.push(Block::Table(t));
    out.extend(unjudged_note.map(Block::Para));
    let wrong: Vec<&Twin> = r.twins.iter().filter(|t| t.called_different()).collect();
    if !wrong.is_empty() {
        out.push(Block::Para(format!(
            "⚠ {} of {} A/A twins were called *different* from the cell they repeat: a false positive of this run ({}). Read its verdicts near that size with doubt, and check them with a second run (`asynclab compare A B --reproduce`).",
            wrong.len(),
            r.twins.len(),
            wrong.iter().map(|t| format!("{} {}", t.scenario, t.variant)).collect::<Vec<_>>().join(", ")
        )));
    }
    out
}

/// The run's scenarios whose variants no verdict compares (`decide_by = "none"`), which have
/// no twin by design.
fn verdictless(r: &Report) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &r.results.cells {
        let name = format!("`{}`", c.scenario);
        if c.decide_by == crate::catalogue::DecideBy::None && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}
