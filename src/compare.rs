//! The regression gate: `asynclab compare BASE NEW` (two runs) or `asynclab compare RUN --by
//! python|loop BASE_VALUE NEW_VALUE` (two interpreters or event loops within one run).
//!
//! Cells are matched by (scenario, variant, parameters, python) — minus the dimension being
//! compared with `--by`. For each pair the per-run values of one metric are compared by the
//! report's one comparison producer (`analysis::comparison`): within one run, where rounds
//! interleave the cells, round by round (the paired t test on per-round log ratios); between
//! runs, whose rounds share nothing, the ratio of medians with an unpaired bootstrap interval
//! and a Mann–Whitney U test. Significant means the test at α (`--alpha`, default
//! 0.05 as in the report) and the interval wholly beyond the runs' noise band. A cell
//! **regresses** when it is worse than BASE by more than the threshold in the metric's bad
//! direction *and* that verdict is significant. The gate fails (exit 1) on any regression, and
//! when a cell measured in BASE failed in NEW.
//!
//! Two runs measured on different machines or software are still compared, with one warning
//! per difference ([`env_diff`]); [`formats`] renders the report as Markdown or JSON besides
//! the text of [`render`].

pub mod env_diff;
pub mod formats;
pub mod reproduce;

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::analysis::comparison::{self, Comparison, Pairing, Rule, Verdict};
use crate::analysis::measured::{busy_machine, paired_rounds, paired_rounds_where, MeasuredRuns};
use crate::analysis::ops::{loop_of, op_names, op_ns as op_value};
use crate::error::UsageError;
use crate::results::{Cell, CellStatus, Results, RunRecord};
use crate::stats::median;

/// The per-run number compared, with the direction in which it gets better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// Operations per second of wall time (`throughput_per_s`): higher is better.
    Throughput,
    /// Wall time of the timed part (`wall_s`): lower is better.
    Wall,
    /// CPU seconds of the process tree (`cpu_s`): lower is better.
    Cpu,
    /// Peak RSS above the ready baseline (`peak_rss_delta_mib`): lower is better.
    Rss,
}

impl Metric {
    /// The results field compared.
    pub fn field(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput_per_s",
            Metric::Wall => "wall_s",
            Metric::Cpu => "cpu_s",
            Metric::Rss => "peak_rss_delta_mib",
        }
    }
    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Throughput)
    }
    /// The metric's value in one run.
    pub fn value(self, r: &RunRecord) -> f64 {
        match self {
            Metric::Throughput => r.throughput_per_s,
            Metric::Wall => r.wall_s,
            Metric::Cpu => r.cpu_s,
            Metric::Rss => r.peak_rss_delta_mib,
        }
    }
}

/// The regression gate's default threshold, a fraction of BASE (`compare --threshold`, and
/// what `run --baseline` shows).
pub const DEFAULT_THRESHOLD: f64 = 0.10;

/// What a change is judged against: the metric, the threshold and the significance level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    /// The per-run number compared.
    pub metric: Metric,
    /// A cell fails when worse by more than this many percent (and significantly).
    pub threshold_pct: f64,
    /// Significance level of the Mann–Whitney test, in (0, 1).
    pub alpha: f64,
}

/// The dimension compared within one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// Interpreter version (`3.10` matches `3.10.13`).
    Python,
    /// Event loop (the `loop` parameter).
    Loop,
}

/// What happened to one matched cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Worse beyond the threshold and significant: fails the gate.
    Regression,
    /// Measured in BASE, failed or unmeasured in NEW: fails the gate.
    NewFailed,
    /// Worse beyond the threshold, but with these rounds no test could be significant.
    TooFewRounds,
    /// Worse beyond the threshold, not significant (or within the noise band).
    WorseNotSignificant,
    /// Worse beyond the threshold, but a busy machine left rounds without a clean run.
    WorseInconclusive,
    /// Better beyond the threshold and significant.
    Improvement,
    /// Within the threshold, or not significant.
    Unchanged,
    /// BASE has no measurement to compare against.
    NoBaseline,
}

impl Outcome {
    /// The outcome's name in JSON output (`regression`, `new_failed`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Outcome::Regression => "regression",
            Outcome::NewFailed => "new_failed",
            Outcome::TooFewRounds => "too_few_rounds",
            Outcome::WorseNotSignificant => "worse_not_significant",
            Outcome::WorseInconclusive => "worse_inconclusive",
            Outcome::Improvement => "improvement",
            Outcome::Unchanged => "unchanged",
            Outcome::NoBaseline => "no_baseline",
        }
    }
    /// Whether this outcome fails the gate.
    pub fn fails(self) -> bool {
        matches!(self, Outcome::Regression | Outcome::NewFailed)
    }
    /// The outcome in words.
    pub fn text(self) -> &'static str {
        match self {
            Outcome::Regression => "REGRESSION (significant, beyond threshold)",
            Outcome::NewFailed => "FAILED in NEW",
            Outcome::TooFewRounds => "worse, not significant (too few rounds)",
            Outcome::WorseNotSignificant => "worse, not significant",
            Outcome::WorseInconclusive => "worse, inconclusive (machine busy)",
            Outcome::Improvement => "better (significant)",
            Outcome::Unchanged => "no significant change beyond threshold",
            Outcome::NoBaseline => "no baseline measurement",
        }
    }
}

/// One matched pair of cells.
#[derive(Debug, Clone)]
pub struct CellChange {
    /// Which cell: `scenario/variant/python/params`, or with `--by`, what was compared.
    pub label: String,
    /// Median of the metric in BASE.
    pub base_median: f64,
    /// Median of the metric in NEW.
    pub new_median: f64,
    /// Rounds in BASE and in NEW.
    pub rounds: (usize, usize),
    /// NEW against BASE: the ratio with its interval, p and the verdict.
    pub comparison: Comparison,
    /// The verdict for the gate.
    pub outcome: Outcome,
}

/// The gate's whole answer.
#[derive(Debug, Clone)]
pub struct Report {
    /// The metric compared.
    pub metric: Metric,
    /// Threshold in percent.
    pub threshold_pct: f64,
    /// How each change was judged: `--alpha` and the runs' noise band.
    pub rule: Rule,
    /// What BASE and NEW are.
    pub base_name: String,
    /// What NEW is.
    pub new_name: String,
    /// Whether ratios were paired by round.
    pub paired: bool,
    /// Matched cells, in BASE's order.
    pub changes: Vec<CellChange>,
    /// Cells only in BASE.
    pub only_base: Vec<String>,
    /// Cells only in NEW.
    pub only_new: Vec<String>,
    /// One line per way the two runs' environments differ (empty within one run).
    pub env_warnings: Vec<String>,
}

impl Report {
    /// 1 when any cell fails the gate, else 0.
    pub fn exit_code(&self) -> i32 {
        i32::from(self.changes.iter().any(|c| c.outcome.fails()))
    }
}

/// Whether a version string matches a requested one component-wise (`3.10` ~ `3.10.13`).
pub fn version_matches(actual: &str, wanted: &str) -> bool {
    let a: Vec<&str> = actual.split('.').collect();
    let w: Vec<&str> = wanted.split('.').collect();
    w.len() <= a.len() && a.iter().zip(&w).all(|(x, y)| x == y)
}

/// The matching key: scenario, variant, parameters, python — without `by`'s dimension.
fn key(c: &Cell, by: Option<By>) -> String {
    let mut params: BTreeMap<&String, &serde_json::Value> = c.params.iter().collect();
    if by == Some(By::Loop) {
        params.retain(|k, _| k.as_str() != "loop");
    }
    let p: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"')))
        .collect();
    match by {
        Some(By::Python) => format!("{}/{}/{}", c.scenario, c.variant, p.join(",")),
        _ => format!("{}/{}/{}/{}", c.scenario, c.variant, c.python, p.join(",")),
    }
}

/// The gate's outcome for a comparison of NEW with BASE on `metric`: worse or better by more
/// than `threshold_pct`, as the comparison's verdict decides.
pub fn classify(metric: Metric, c: &Comparison, threshold_pct: f64) -> Outcome {
    let t = threshold_pct / 100.0;
    let r = c.ratio.ratio;
    let (worse, better) = if metric.higher_is_better() {
        (r < 1.0 - t, r > 1.0 + t)
    } else {
        (r > 1.0 + t, r < 1.0 - t)
    };
    match (&c.verdict, worse, better) {
        (Verdict::Significant, true, _) => Outcome::Regression,
        (Verdict::TooFewRounds, true, _) => Outcome::TooFewRounds,
        (Verdict::Inconclusive(_), true, _) => Outcome::WorseInconclusive,
        (_, true, _) => Outcome::WorseNotSignificant,
        (Verdict::Significant, _, true) => Outcome::Improvement,
        _ => Outcome::Unchanged,
    }
}

/// The rule two runs are compared under: `alpha`, and the wider of their noise bands.
fn rule(alpha: f64, runs: &[&Results]) -> Rule {
    Rule {
        alpha,
        noise_threshold: runs
            .iter()
            .map(|r| r.method.noise_threshold())
            .fold(0.0, f64::max),
        looks: None,
        floor: 0.0,
    }
}

/// Judges BASE values `b` against NEW values `n` of one metric with the report's comparison.
fn judge(
    label: String,
    (base, new): (&Cell, &Cell),
    (b, n): (Vec<f64>, Vec<f64>),
    (gate, rule): (Gate, Rule),
    paired: bool,
) -> CellChange {
    let new_failed = new.status == CellStatus::Failed || n.is_empty();
    let pairing = if paired {
        Pairing::ByRound
    } else {
        Pairing::Independent
    };
    // Rounds of one run were stopped by that run's own looks; two runs' samples share none.
    let rule = if paired {
        rule.for_cells(&[new, base])
    } else {
        rule
    };
    let mut comparison = comparison::compare(&n, &b, pairing, rule);
    if let Some(why) = busy_machine(new).or_else(|| busy_machine(base)) {
        comparison.verdict = Verdict::Inconclusive(why);
    }
    let mut outcome = classify(gate.metric, &comparison, gate.threshold_pct);
    if base.runs.is_empty() {
        outcome = Outcome::NoBaseline;
    } else if new_failed && base.status != CellStatus::Failed {
        outcome = Outcome::NewFailed;
    }
    CellChange {
        label,
        base_median: median(&b),
        new_median: median(&n),
        rounds: (b.len(), n.len()),
        comparison,
        outcome,
    }
}

/// The changes of one matched pair: per operation (ns per op, lower is better) where the cells
/// carry per-operation figures — a cell's own throughput means nothing there — else the metric.
fn changes_of(
    label: &str,
    (base, new): (&Cell, &Cell),
    (gate, rule): (Gate, Rule),
    paired: bool,
) -> Vec<CellChange> {
    let values = |c: &Cell, f: &dyn Fn(&RunRecord) -> Option<f64>| -> Vec<f64> {
        MeasuredRuns::of(c).iter().filter_map(|r| f(r)).collect()
    };
    let ops = op_names(base);
    if ops.is_empty() {
        let m = gate.metric;
        let v = if paired {
            let (n, b) = paired_rounds(new, base, |r| m.value(r));
            (b, n)
        } else {
            let f = |r: &RunRecord| Some(m.value(r));
            (values(base, &f), values(new, &f))
        };
        return vec![judge(
            label.to_string(),
            (base, new),
            v,
            (gate, rule),
            paired,
        )];
    }
    ops.iter()
        .map(|op| {
            let f = |r: &RunRecord| op_value(r, op);
            let v = if paired {
                paired_rounds_where(base, new, f)
            } else {
                (values(base, &f), values(new, &f))
            };
            let per_op = Gate {
                metric: Metric::Wall,
                ..gate
            };
            let label = format!("{label} · {op} (ns/op)");
            judge(label, (base, new), v, (per_op, rule), paired)
        })
        .collect()
}

/// Compares two runs cell by cell.
pub fn compare_runs(
    base: &Results,
    new: &Results,
    gate: Gate,
    names: (&str, &str),
) -> anyhow::Result<Report> {
    let rule = rule(gate.alpha, &[base, new]);
    let new_by_key: BTreeMap<String, &Cell> = new.cells.iter().map(|c| (key(c, None), c)).collect();
    let base_keys: Vec<String> = base.cells.iter().map(|c| key(c, None)).collect();
    let changes: Vec<CellChange> = base
        .cells
        .iter()
        .filter_map(|b| {
            let n = new_by_key.get(&key(b, None))?;
            Some(changes_of(&b.id, (b, n), (gate, rule), false))
        })
        .flatten()
        .collect();
    let only_base = base
        .cells
        .iter()
        .filter(|c| !new_by_key.contains_key(&key(c, None)))
        .map(|c| c.id.clone())
        .collect();
    let only_new = new
        .cells
        .iter()
        .filter(|c| !base_keys.contains(&key(c, None)))
        .map(|c| c.id.clone())
        .collect();
    finish(Report {
        metric: gate.metric,
        threshold_pct: gate.threshold_pct,
        rule,
        base_name: names.0.to_string(),
        new_name: names.1.to_string(),
        paired: false,
        changes,
        only_base,
        only_new,
        env_warnings: env_diff::differences(base, new),
    })
}

impl Report {
    /// How the report's ratios were paired.
    pub fn pairing(&self) -> Pairing {
        if self.paired {
            Pairing::ByRound
        } else {
            Pairing::Independent
        }
    }
}

/// Compares two interpreters or event loops within one run, paired by round.
pub fn compare_within(
    run: &Results,
    by: By,
    base_value: &str,
    new_value: &str,
    gate: Gate,
) -> anyhow::Result<Report> {
    let dim = |c: &Cell| match by {
        By::Python => c.python.clone(),
        By::Loop => loop_of(c),
    };
    let matches = |c: &Cell, wanted: &str| match by {
        By::Python => version_matches(&c.python, wanted),
        By::Loop => loop_of(c) == wanted,
    };
    let flag = match by {
        By::Python => "--by python",
        By::Loop => "--by loop",
    };
    let mut present: Vec<String> = run.cells.iter().map(dim).collect();
    crate::chart::sort_versions(&mut present);
    present.dedup();
    for wanted in [base_value, new_value] {
        let hits: Vec<&String> = present
            .iter()
            .filter(|p| match by {
                By::Python => version_matches(p, wanted),
                By::Loop => p.as_str() == wanted,
            })
            .collect();
        if hits.len() != 1 {
            return Err(UsageError::Flag {
                flag,
                message: format!(
                    "'{wanted}' matches {} of the run's values ({}); name exactly one",
                    hits.len(),
                    present.join(", ")
                ),
            }
            .into());
        }
    }
    let rule = rule(gate.alpha, &[run]);
    let base_cells: Vec<&Cell> = run
        .cells
        .iter()
        .filter(|c| matches(c, base_value))
        .collect();
    let new_cells: Vec<&Cell> = run.cells.iter().filter(|c| matches(c, new_value)).collect();
    let new_by_key: BTreeMap<String, &Cell> =
        new_cells.iter().map(|c| (key(c, Some(by)), *c)).collect();
    let base_keys: Vec<String> = base_cells.iter().map(|c| key(c, Some(by))).collect();
    let changes = base_cells
        .iter()
        .filter_map(|b| {
            let n = new_by_key.get(&key(b, Some(by)))?;
            let label = format!("{} ({} → {})", key(b, Some(by)), dim(b), dim(n));
            Some(changes_of(&label, (b, n), (gate, rule), true))
        })
        .flatten()
        .collect();
    let only_base = base_cells
        .iter()
        .filter(|c| !new_by_key.contains_key(&key(c, Some(by))))
        .map(|c| c.id.clone())
        .collect();
    let only_new = new_cells
        .iter()
        .filter(|c| !base_keys.contains(&key(c, Some(by))))
        .map(|c| c.id.clone())
        .collect();
    let name = |v: &str| match by {
        By::Python => format!("Python {v}"),
        By::Loop => format!("loop {v}"),
    };
    finish(Report {
        metric: gate.metric,
        threshold_pct: gate.threshold_pct,
        rule,
        base_name: name(base_value),
        new_name: name(new_value),
        paired: true,
        changes,
        only_base,
        only_new,
        env_warnings: Vec::new(),
    })
}

fn finish(r: Report) -> anyhow::Result<Report> {
    if r.changes.is_empty() {
        anyhow::bail!(
            "no cell of {} matches one of {} (cells are matched by scenario, variant, parameters and python); nothing to compare",
            r.base_name,
            r.new_name
        );
    }
    Ok(r)
}

/// A percentage change with sign, one decimal.
pub fn pct(ratio: f64) -> String {
    if ratio.is_finite() {
        let s = format!("{:+.1}%", (ratio - 1.0) * 100.0);
        if s == "-0.0%" {
            "+0.0%".into()
        } else {
            s
        }
    } else {
        "–".into()
    }
}

/// The text the command prints.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let dir = if r.metric.higher_is_better() {
        "higher is better"
    } else {
        "lower is better"
    };
    let _ = writeln!(
        out,
        "metric: {} (median over rounds, {dir}); BASE: {}; NEW: {}; threshold {}%",
        r.metric.field(),
        r.base_name,
        r.new_name,
        r.threshold_pct
    );
    let _ = writeln!(
        out,
        "change = NEW/BASE − 1; {}; significant = p ≤ {} {}\n",
        comparison::method_text(r.pairing()),
        r.rule.alpha,
        r.rule.band_text("the ratio's interval")
    );
    for w in &r.env_warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if !r.env_warnings.is_empty() {
        out.push('\n');
    }
    if r.changes.iter().any(|c| c.label.ends_with("(ns/op)")) {
        let _ = writeln!(
            out,
            "cells with per-operation figures (asyncio_ops, pyperf) are compared per operation: each run's median ns per op, lower is better\n"
        );
    }
    for c in &r.changes {
        let _ = writeln!(out, "{}", c.label);
        let _ = writeln!(
            out,
            "    base {} → new {}  change {} [{} .. {}]  p = {:.3} ({} vs {} rounds)  {}",
            crate::format::num(c.base_median),
            crate::format::num(c.new_median),
            pct(c.comparison.ratio.ratio),
            pct(c.comparison.ratio.ci95_low),
            pct(c.comparison.ratio.ci95_high),
            c.comparison.p_value,
            c.rounds.0,
            c.rounds.1,
            c.outcome.text()
        );
    }
    for id in &r.only_base {
        let _ = writeln!(out, "only in BASE (not compared): {id}");
    }
    for id in &r.only_new {
        let _ = writeln!(out, "only in NEW (not compared): {id}");
    }
    let worse: Vec<&CellChange> = r
        .changes
        .iter()
        .filter(|c| {
            matches!(
                c.outcome,
                Outcome::Regression
                    | Outcome::TooFewRounds
                    | Outcome::WorseNotSignificant
                    | Outcome::WorseInconclusive
            )
        })
        .collect();
    if !worse.is_empty() {
        let _ = writeln!(
            out,
            "\nworse than BASE by more than {}%, significant or not ({} of {}):",
            r.threshold_pct,
            worse.len(),
            r.changes.len()
        );
        for c in &worse {
            let _ = writeln!(
                out,
                "  {}: {} [{} .. {}] {}",
                c.label,
                pct(c.comparison.ratio.ratio),
                pct(c.comparison.ratio.ci95_low),
                pct(c.comparison.ratio.ci95_high),
                c.outcome.text()
            );
        }
    }
    let failing: Vec<&CellChange> = r.changes.iter().filter(|c| c.outcome.fails()).collect();
    let few = r
        .changes
        .iter()
        .filter(|c| c.outcome == Outcome::TooFewRounds)
        .count();
    if few > 0 {
        let _ = writeln!(
            out,
            "\nnote: {few} cell(s) are worse beyond the threshold but have too few rounds for any test to be significant (3 vs 3 rounds: smallest possible p = 0.1); the gate cannot fail on them — measure with --rounds 5 or more"
        );
    }
    if failing.is_empty() {
        let _ = writeln!(
            out,
            "\ngate: PASS ({} cell(s) compared, none worse than {}% with a significant difference)",
            r.changes.len(),
            r.threshold_pct
        );
    } else {
        let _ = writeln!(out, "\ngate: FAIL — {} cell(s):", failing.len());
        for c in failing {
            let _ = writeln!(
                out,
                "  {}: {} {}",
                c.label,
                c.outcome.text(),
                pct(c.comparison.ratio.ratio)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(r: f64, lo: f64, hi: f64, verdict: Verdict) -> Comparison {
        Comparison {
            ratio: crate::stats::RatioEstimate {
                ratio: r,
                ci95_low: lo,
                ci95_high: hi,
                paired: false,
            },
            p_value: 0.5,
            test: crate::stats::significance::MANN_WHITNEY,
            n: (5, 5),
            verdict,
        }
    }

    #[test]
    fn direction_follows_the_metric() {
        // Throughput halved: worse. Wall time halved: better. Wall time doubled: worse.
        let half = cmp(0.5, 0.45, 0.55, Verdict::Significant);
        assert_eq!(
            classify(Metric::Throughput, &half, 10.0),
            Outcome::Regression
        );
        assert_eq!(classify(Metric::Wall, &half, 10.0), Outcome::Improvement);
        let double = cmp(2.0, 1.9, 2.1, Verdict::Significant);
        assert_eq!(classify(Metric::Wall, &double, 10.0), Outcome::Regression);
        assert_eq!(
            classify(Metric::Throughput, &double, 10.0),
            Outcome::Improvement
        );
        assert!(Metric::Throughput.higher_is_better() && !Metric::Wall.higher_is_better());
    }

    #[test]
    fn threshold_and_verdict_are_both_needed() {
        let small = cmp(0.95, 0.93, 0.97, Verdict::Significant);
        assert_eq!(
            classify(Metric::Throughput, &small, 10.0),
            Outcome::Unchanged
        );
        let worse = |v| classify(Metric::Throughput, &cmp(0.7, 0.6, 0.8, v), 10.0);
        assert_eq!(worse(Verdict::NotSignificant), Outcome::WorseNotSignificant);
        assert_eq!(worse(Verdict::WithinNoise), Outcome::WorseNotSignificant);
        assert_eq!(worse(Verdict::TooFewRounds), Outcome::TooFewRounds);
        assert_eq!(
            worse(Verdict::Inconclusive("busy".into())),
            Outcome::WorseInconclusive
        );
        assert!(!worse(Verdict::Inconclusive("busy".into())).fails());
    }

    /// The gate and the report judge a pair of cells alike: every "vs baseline" verdict of the
    /// report is the one `compare` gives the same two cells, paired by round, at the report's α.
    #[test]
    fn compare_and_the_report_give_one_verdict() {
        use crate::analysis::scenario::VsBaseline;
        let doc = crate::results::snapshot_fixture();
        let report = crate::analysis::analyze(&doc);
        let gate = Gate {
            metric: Metric::Throughput,
            threshold_pct: 10.0,
            alpha: report.rule.alpha,
        };
        let mut checked = 0;
        for s in &report.scenarios {
            for row in &s.rows {
                let VsBaseline::Ratio(want) = &row.vs_baseline else {
                    continue;
                };
                let base = s
                    .cells
                    .iter()
                    .find(|c| {
                        Some(&c.variant) == s.baseline.as_ref() && c.python == row.cell.python
                    })
                    .unwrap();
                let got = changes_of("pair", (base, row.cell), (gate, report.rule), true);
                if got.len() == 1 {
                    assert_eq!(got[0].comparison.verdict, want.verdict, "{}", row.cell.id);
                    assert_eq!(got[0].comparison.ratio, want.ratio, "{}", row.cell.id);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 3, "pairs compared: {checked}");
    }

    // Snapshots of the gate's outputs, on the snapshot tests' document (docs/testing.md).

    /// `asynclab compare run new`: the document against a copy in which threads took 25% longer
    /// on io_http (a regression) and create_task_await 20% longer per operation (too few rounds to
    /// tell), on a later commit.
    fn compared() -> Report {
        let base = crate::results::snapshot_fixture();
        let mut new = base.clone();
        new.env.git_commit = "89abcdef0123456789abcdef0123456789abcdef".into();
        for c in &mut new.cells {
            for r in &mut c.runs {
                if c.scenario == "io_http" && c.variant == "threads" {
                    r.wall_s *= 1.25;
                    r.throughput_per_s = r.ops as f64 / r.wall_s;
                }
                let op = r
                    .extra
                    .ops
                    .as_mut()
                    .and_then(|o| o.get_mut("create_task_await"));
                if let Some(ns) = op.and_then(|f| f.ns_per_op_median.as_mut()) {
                    *ns *= 1.2;
                }
            }
        }
        crate::analysis::summary::derive(&mut new);
        let gate = Gate {
            metric: Metric::Throughput,
            threshold_pct: 10.0,
            alpha: 0.05,
        };
        compare_runs(&base, &new, gate, ("run", "new")).unwrap()
    }

    #[test]
    fn compare_text() {
        insta::assert_snapshot!(render(&compared()));
    }

    #[test]
    fn compare_markdown() {
        insta::assert_snapshot!(formats::markdown(&compared()));
    }

    #[test]
    fn compare_json() {
        let json = formats::json(&compared());
        insta::assert_snapshot!(serde_json::to_string_pretty(&json).unwrap());
    }

    #[test]
    fn versions_match_by_components() {
        assert!(version_matches("3.10.13", "3.10"));
        assert!(version_matches("3.12.1", "3.12.1"));
        assert!(!version_matches("3.10.13", "3.1"));
        assert!(!version_matches("3.1", "3.1.2"));
    }

    #[test]
    fn keys_ignore_the_compared_dimension() {
        let json = r#"{"id":"s/v/3.12.1/loop=uvloop,n=1","scenario":"s","variant":"v","python":"3.12.1","loop":"uvloop",
            "params":{"n":1,"loop":"uvloop"},"status":"ok","failure":null,"runs":[],"summary":null,"warnings":[]}"#;
        let a: Cell = serde_json::from_str(json).unwrap();
        let mut b = a.clone();
        b.python = "3.10.13".into();
        b.params.insert("loop".into(), serde_json::json!("asyncio"));
        b.event_loop = Some("asyncio".into());
        assert_ne!(key(&a, None), key(&b, None));
        let mut c = a.clone();
        c.python = "3.10.13".into();
        assert_eq!(key(&a, Some(By::Python)), key(&c, Some(By::Python)));
        let mut d = a.clone();
        d.params.insert("loop".into(), serde_json::json!("asyncio"));
        d.event_loop = Some("asyncio".into());
        assert_eq!(key(&a, Some(By::Loop)), key(&d, Some(By::Loop)));
        assert_ne!(key(&a, Some(By::Loop)), key(&b, Some(By::Loop)));
        assert_eq!(loop_of(&d), "asyncio");
    }

    #[test]
    fn unpaired_interval_contains_the_ratio() {
        let a = [10.0, 11.0, 9.5, 10.2, 10.4];
        let b = [20.0, 19.0, 21.0, 20.5, 19.7];
        let r = crate::stats::independent_ratio(&a, &b);
        assert!(!r.paired && r.ci95_low <= r.ratio && r.ratio <= r.ci95_high);
        assert!(r.ci95_low > 0.4 && r.ci95_high < 0.6, "{r:?}");
        assert_eq!(r, crate::stats::independent_ratio(&a, &b));
    }
}
