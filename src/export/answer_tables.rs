//! The answers first: each scenario's question answered by the comparisons its catalogue names
//! (its contrasts, in every setting), and the published decision framework's seven rows, each
//! citing the contrasts and service questions that answer it, or saying it was not measured.

use super::decision_section::setting_text;
use super::markup::{Cell, Section, Table};
use super::scenario_tables::{outcome, ratio_cell, NO_PAIRS};
use super::service_tables::answer_text;
use crate::analysis::contrasts::{answering, ContrastRow};
use crate::analysis::Report;
use crate::catalogue::{ContrastFigure, FrameworkRow};

/// What a contrast compares, in words.
pub fn figure_text(f: ContrastFigure) -> &'static str {
    match f {
        ContrastFigure::Throughput => "throughput /s",
        ContrastFigure::P99 => "p99 ms, lower is better",
        ContrastFigure::Memory => "peak RSS Δ, lower is better",
    }
}

/// "`asyncio` against `sync`".
fn pair(r: &ContrastRow) -> String {
    format!("`{}` against `{}`", r.contrast.new, r.contrast.base)
}

/// The scenarios' answers; None when no scenario names a contrast.
pub fn answers_section(r: &Report) -> Option<Section> {
    if r.contrasts.is_empty() {
        return None;
    }
    let mut out = Section::new("Answers", None);
    out.para("Each scenario's question, answered by the comparisons its catalogue entry names (`[[scenario.contrast]]`), in every setting both variants ran in: the first variant against the second, round by round, on the figure named; above 1 the first is better (higher throughput, or lower p99 or memory), with the 95% interval and the verdict of every other table. The decision table below ranks every variant instead.");
    let mut t = Table::new([
        "scenario",
        "setting",
        "python",
        "compared",
        "on",
        "advantage (95% CI)",
    ]);
    for row in &r.contrasts {
        t.row([
            Cell::from(row.scenario.clone()),
            setting_text(&row.group).into(),
            row.python.clone().into(),
            pair(row).into(),
            figure_text(row.contrast.figure).into(),
            match &row.comparison {
                Some(c) => ratio_cell(c),
                None => NO_PAIRS.into(),
            },
        ]);
    }
    out.table(t);
    Some(out)
}

/// The framework's rows, each from what answers it in this run; None when nothing does.
pub fn framework_section(r: &Report) -> Option<Section> {
    if r.contrasts.iter().all(|c| c.contrast.row.is_none()) && r.service_answers.is_empty() {
        return None;
    }
    let mut out = Section::new("Decision framework", None);
    out.para("The published framework's seven rows (should this be async?), each answered by the comparisons of this run that the catalogue ties to it and by the service questions, with the cells they came from; a row nothing in this run answers says so.");
    let mut t = Table::new(["row", "answer", "from"]);
    for row in FrameworkRow::ALL {
        let contrasts = answering(&r.contrasts, row);
        let services: Vec<_> = r
            .service_answers
            .iter()
            .filter(|a| a.question.row() == row)
            .collect();
        if contrasts.is_empty() && services.is_empty() {
            t.row([
                Cell::from(row.text()),
                "not measured by this run".into(),
                "–".into(),
            ]);
            continue;
        }
        for c in contrasts {
            t.row([
                Cell::from(row.text()),
                format!(
                    "{}, {}: {}",
                    pair(c),
                    figure_text(c.contrast.figure),
                    outcome(c.comparison.as_ref())
                )
                .into(),
                format!("{} and {}", c.cells.0, c.cells.1).into(),
            ]);
        }
        for a in services {
            let answer = match a.only_kind {
                Some(kind) => format!(
                    "{}: only {kind} servers qualified; {}",
                    answer_text(a),
                    a.metric
                ),
                None => format!(
                    "{}: async advantage {} on {}",
                    answer_text(a),
                    outcome(a.async_advantage.as_ref()),
                    a.metric
                ),
            };
            t.row([
                Cell::from(row.text()),
                answer.into(),
                format!(
                    "{} {} (Python {}): `{}` against `{}`",
                    a.scenario,
                    setting_text(&a.setting),
                    a.python,
                    a.best_async,
                    a.best_sync
                )
                .into(),
            ]);
        }
    }
    out.table(t);
    Some(out)
}
