//! The gate's report as Markdown (one table, for a pull request) or JSON (for scripts).
//!
//! JSON layout (`asynclab compare --format json`), numbers as in the text output, a missing
//! or non-finite number as `null`:
//!
//! ```text
//! { "metric": "throughput_per_s", "higher_is_better": true, "threshold_pct": 10.0,
//!   "alpha": 0.05, "noise_threshold": 0.03, "base": "...", "new": "...", "paired": false,
//!   "environment_warnings": ["core count differs: BASE 2, NEW 4 (...)"],
//!   "cells": [ { "label": "io_http/asyncio/3.12.1/...", "base_median": 470.1,
//!                "new_median": 468.0, "base_rounds": 5, "new_rounds": 5,
//!                "ratio": 0.996, "ci95_low": 0.98, "ci95_high": 1.01,
//!                "p_value": 0.69, "verdict": "not significant", "significant": false,
//!                "outcome": "unchanged" } ],
//!   "only_base": [], "only_new": [], "gate": "pass", "exit_code": 0 }
//! ```
//!
//! `ratio` is NEW / BASE of the medians with its bootstrap 95 % interval; `verdict` is the
//! report's (`analysis::comparison::Verdict::text`); `outcome` is one of `regression`,
//! `new_failed`, `too_few_rounds`, `worse_not_significant`, `worse_inconclusive`, `improvement`,
//! `unchanged`, `no_baseline`; `gate` is `fail` (exit 1) when any cell is a regression or
//! `new_failed`.

use serde_json::{json, Value};

use super::{pct, Report};
use crate::export::markup::{Block, Markdown, Table};
use crate::format::num;

/// The report as one JSON document (layout in the module docs).
pub fn json(r: &Report) -> Value {
    let cells: Vec<Value> = r
        .changes
        .iter()
        .map(|c| {
            json!({
                "label": c.label,
                "base_median": c.base_median,
                "new_median": c.new_median,
                "base_rounds": c.rounds.0,
                "new_rounds": c.rounds.1,
                "ratio": c.comparison.ratio.ratio,
                "ci95_low": c.comparison.ratio.ci95_low,
                "ci95_high": c.comparison.ratio.ci95_high,
                "p_value": c.comparison.p_value,
                "verdict": c.comparison.verdict.text(),
                "significant": c.comparison.verdict.is_significant(),
                "outcome": c.outcome.key(),
            })
        })
        .collect();
    json!({
        "metric": r.metric.field(),
        "higher_is_better": r.metric.higher_is_better(),
        "threshold_pct": r.threshold_pct,
        "alpha": r.rule.alpha,
        "noise_threshold": r.rule.noise_threshold,
        "base": r.base_name,
        "new": r.new_name,
        "paired": r.paired,
        "environment_warnings": r.env_warnings,
        "cells": cells,
        "only_base": r.only_base,
        "only_new": r.only_new,
        "gate": if r.exit_code() == 0 { "pass" } else { "fail" },
        "exit_code": r.exit_code(),
    })
}

/// The report as Markdown: a header line, the environment warnings, one table, the gate.
pub fn markdown(r: &Report) -> String {
    let mut blocks = vec![Block::Para(format!(
        "Metric `{}` ({}), median over rounds; BASE: {}; NEW: {}; threshold {}%; change = NEW/BASE − 1; {}; significant = p ≤ {} {}.",
        r.metric.field(),
        if r.metric.higher_is_better() { "higher is better" } else { "lower is better" },
        r.base_name,
        r.new_name,
        r.threshold_pct,
        crate::analysis::comparison::method_text(r.pairing()),
        r.rule.alpha,
        r.rule.band_text("the interval")
    ))];
    if !r.env_warnings.is_empty() {
        blocks.push(Block::List(
            r.env_warnings
                .iter()
                .map(|w| format!("**warning:** {w}"))
                .collect(),
        ));
    }
    let mut t = Table::new([
        "cell",
        "base",
        "new",
        "change (95% CI)",
        "p",
        "rounds",
        "outcome",
    ]);
    for c in &r.changes {
        t.row([
            format!("`{}`", c.label),
            num(c.base_median),
            num(c.new_median),
            format!(
                "{} [{} .. {}]",
                pct(c.comparison.ratio.ratio),
                pct(c.comparison.ratio.ci95_low),
                pct(c.comparison.ratio.ci95_high)
            ),
            format!("{:.3}", c.comparison.p_value),
            format!("{} vs {}", c.rounds.0, c.rounds.1),
            c.outcome.text().to_string(),
        ]);
    }
    blocks.push(Block::Table(t));
    let mut only: Vec<String> = r
        .only_base
        .iter()
        .map(|id| format!("only in BASE (not compared): `{id}`"))
        .collect();
    only.extend(
        r.only_new
            .iter()
            .map(|id| format!("only in NEW (not compared): `{id}`")),
    );
    if !only.is_empty() {
        blocks.push(Block::List(only));
    }
    let failing = r.changes.iter().filter(|c| c.outcome.fails()).count();
    blocks.push(Block::Para(if failing == 0 {
        format!("**gate: PASS** ({} cell(s) compared)", r.changes.len())
    } else {
        format!("**gate: FAIL** ({failing} of {} cell(s))", r.changes.len())
    }));
    let mut out = String::new();
    for b in &blocks {
        Markdown::block(&mut out, b);
    }
    out
}
