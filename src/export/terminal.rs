//! The terminal summary a run (and `asynclab report`) ends with: per scenario its question and
//! the answer, from the same analysis as summary.md (hyperfine's "A ran N× faster than B" for
//! each variant against the baseline, each open-loop sweep's knee, then the best variant
//! against the runner-up and the framework's service questions), and a count of warnings. Plain text: no colour, no width.

use std::fmt::Write;

use super::decision_section::ratio_text as decision_ratio;
use super::scenario_tables::ratio_text;
use crate::analysis::comparison::Verdict;
use crate::analysis::scenario::{ScenarioReport, VsBaseline};
use crate::analysis::Report;

/// "endpoint=db, Python 3.12.1", or "Python 3.12.1" for a scenario without matrix axes.
fn at(setting: &str, python: &str) -> String {
    if setting.is_empty() {
        format!("Python {python}")
    } else {
        format!("{setting}, Python {python}")
    }
}

/// Each setting's variants against the baseline, one line each.
fn against_baseline(sc: &ScenarioReport, base: &str, out: &mut String) {
    let mut settings: Vec<(&str, &str)> = Vec::new();
    for row in &sc.rows {
        let key = (row.cell.python.as_str(), row.cell.group.as_str());
        if !settings.contains(&key) {
            settings.push(key);
        }
    }
    for (python, group) in settings {
        let lines: Vec<String> = sc
            .rows
            .iter()
            .filter(|row| row.cell.python == python && row.cell.group == group)
            // Open-loop throughput follows the offered rate: those cells answer with knees.
            .filter(|row| crate::catalogue::offered_rate(&row.cell.params).is_none())
            .filter_map(|row| match &row.vs_baseline {
                VsBaseline::Ratio(c) => Some(format!("{} {}", row.cell.variant, ratio_text(c))),
                _ => None,
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {}: throughput against {base}", at(group, python));
        for l in lines {
            let _ = writeln!(out, "    {l}");
        }
    }
}

/// The summary as text, one block per scenario.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    for sc in &r.scenarios {
        let question = sc.info.map_or("", |i| i.question.as_str());
        let _ = if question.is_empty() {
            writeln!(out, "{}", sc.name)
        } else {
            writeln!(out, "{}: {question}", sc.name)
        };
        for t in r.twins.iter().filter(|t| t.scenario == sc.name) {
            let _ = writeln!(out, "  {}", super::resolution_section::line(t));
        }
        for c in r.contrasts.iter().filter(|c| c.scenario == sc.name) {
            let ratio = super::scenario_tables::outcome(c.comparison.as_ref());
            let _ = writeln!(
                out,
                "  {} against {} ({}), {}: {ratio}",
                c.contrast.new,
                c.contrast.base,
                at(&c.group, &c.python),
                super::answer_tables::figure_text(c.contrast.figure)
            );
        }
        if let Some(base) = &sc.baseline {
            against_baseline(sc, base, &mut out);
        }
        let sweeps: Vec<&crate::results::Sweep> =
            r.sweeps.iter().filter(|s| s.scenario == sc.name).collect();
        let varying = crate::analysis::sweep::varying_params(&sweeps);
        for s in &sweeps {
            let setting = crate::analysis::params_text(&s.params, &varying);
            let _ = writeln!(
                out,
                "  {} ({}), open loop: {}",
                s.variant,
                at(&setting, &s.python),
                super::sweep_tables::knee_text(s)
            );
        }
        for d in r.decisions.iter().filter(|d| d.scenario == sc.name) {
            let chosen = match &d.verdict {
                Verdict::Inconclusive(_) => format!("no choice (measured best {})", d.winner),
                _ => d.winner.clone(),
            };
            let _ = writeln!(
                out,
                "  best ({}): {chosen}, {} over {} by {}, {}",
                at(&d.group, &d.python),
                decision_ratio(d),
                d.runner_up,
                d.metric,
                d.verdict.text()
            );
        }
        for a in r.service_answers.iter().filter(|a| a.scenario == sc.name) {
            let answer = match a.leader() {
                Some(kind) => kind.to_string(),
                None => "neither kind".into(),
            };
            let ratio = super::service_tables::advantage_text(a);
            let _ = writeln!(
                out,
                "  {} ({}): {answer} (async advantage {ratio}; {} against {}, {})",
                a.question.text(),
                at(&a.setting, &a.python),
                a.best_async,
                a.best_sync,
                a.metric
            );
        }
        for s in r.slow_consumers.iter().filter(|s| s.scenario == sc.name) {
            let _ = writeln!(
                out,
                "  {} ({}, Python {}): {}",
                s.variant,
                s.kind,
                s.python,
                super::slow_tables::what_happened(s)
            );
        }
    }
    let failed: Vec<_> = r.thresholds.iter().filter(|c| !c.passed).collect();
    if !r.thresholds.is_empty() {
        let _ = writeln!(
            out,
            "thresholds: {} of {} check(s) failed",
            failed.len(),
            r.thresholds.len()
        );
        for c in failed {
            let value = c.value.map_or("no figure".into(), crate::format::num);
            let _ = writeln!(
                out,
                "  FAILED {}: {} ({}: {value})",
                c.scenario, c.threshold, c.at
            );
        }
    }
    for s in &r.results.skipped {
        let _ = writeln!(
            out,
            "{}: not run: it needs {}, which could not be had: {}",
            s.scenario, s.service, s.reason
        );
    }
    for p in &r.results.skipped_pythons {
        let _ = writeln!(out, "Python {}: not run: {}", p.python, p.reason);
    }
    if !r.warnings.is_empty() {
        let count: usize = r.warnings.iter().map(|g| g.count()).sum();
        let _ = writeln!(
            out,
            "{count} warning(s) of {} cause(s): the Warnings section of summary.md lists them",
            r.warnings.len()
        );
    }
    out
}
