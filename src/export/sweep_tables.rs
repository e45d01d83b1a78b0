//! The open-loop sweeps' sections: per scenario, one table per variant (offered and achieved
//! rate, corrected and uncorrected p50/p99) with the knee marked; and per setting, every
//! variant's corrected latency at the rates they all carried.

use super::markup::{Cell, Mark, Section, Table};
use crate::analysis::like_for_like::LikeForLike;
use crate::analysis::params_text;
use crate::analysis::sweep::{ACHIEVED_MIN_FRACTION, P99_MAX_FACTOR};
use crate::format::{opt, rate};
use crate::results::{Knee, Sweep};

/// What a sweep's knee is, in words with the rates.
pub fn knee_text(s: &Sweep) -> String {
    let r = |x: Option<f64>| x.map(rate).unwrap_or_else(|| "–".into());
    match s.knee {
        Knee::Reached => format!(
            "knee at {}/s (saturated at {}/s)",
            r(s.knee_rate_per_s),
            r(s.saturated_rate_per_s)
        ),
        Knee::NotReached => format!(
            "knee not reached: kept up at every rate up to {}/s",
            r(s.points.last().map(|p| p.offered_rate_per_s))
        ),
        Knee::BelowLowestRate => format!(
            "saturated already at the lowest rate, {}/s",
            r(s.saturated_rate_per_s)
        ),
    }
}

fn sweep_table(s: &Sweep) -> Table {
    let mut t = Table::new([
        "offered /s",
        "achieved /s",
        "corrected p50 / p99 ms",
        "uncorrected p50 / p99 ms",
        "",
    ]);
    for p in &s.points {
        let mut mark = if p.saturated {
            Cell::marked(
                format!("saturated: {}", p.reason.as_deref().unwrap_or("")),
                Mark::Failed,
            )
        } else if Some(p.offered_rate_per_s) == s.knee_rate_per_s {
            "**knee**".into()
        } else {
            "kept up".into()
        };
        if p.abandoned > 0 {
            mark.text.push_str(&format!(
                "; {} request(s) not sent by 2 × the duration",
                p.abandoned
            ));
        }
        t.row([
            Cell::from(rate(p.offered_rate_per_s)),
            opt(p.achieved_rate_per_s).into(),
            format!("{} / {}", opt(p.corrected_p50_ms), opt(p.corrected_p99_ms)).into(),
            format!(
                "{} / {}",
                opt(p.uncorrected_p50_ms),
                opt(p.uncorrected_p99_ms)
            )
            .into(),
            mark,
        ]);
    }
    t
}

/// One section per scenario with sweeps.
pub fn sections(sweeps: &[Sweep]) -> Vec<Section> {
    let mut scenarios: Vec<&str> = Vec::new();
    for s in sweeps {
        if !scenarios.contains(&s.scenario.as_str()) {
            scenarios.push(&s.scenario);
        }
    }
    scenarios
        .into_iter()
        .map(|name| {
            let group: Vec<&Sweep> = sweeps.iter().filter(|s| s.scenario == name).collect();
            let varying = crate::analysis::sweep::varying_params(&group);
            let mut out = Section::new(format!("{name}: open-loop rate sweep"), Some(name));
            out.para(format!(
                "Requests on a fixed schedule at each offered rate (wrk2's rule). *Corrected* latency is from each request's intended start, so waiting behind slow requests counts; *uncorrected* is from its actual send, what a closed-loop client reports. *Achieved* is requests actually sent per second (median over rounds). A rate is saturated when achieved is under {:.0}% of offered, or the corrected p99 is over {} × the reference latency (the server delay `delay_ms`, else the lowest rate's uncorrected p50), or the cell failed; the knee is the highest rate sustained before the first saturated one. A run stops sending at twice its duration: requests not sent by then are counted, not timed, so a saturated row's corrected latencies are a lower bound.",
                ACHIEVED_MIN_FRACTION * 100.0,
                P99_MAX_FACTOR
            ));
            for s in group {
                let params = params_text(&s.params, &varying);
                let params = if params.is_empty() {
                    String::new()
                } else {
                    format!("{params}, ")
                };
                out.para(format!(
                    "**{}** ({params}Python {}): {}",
                    s.variant,
                    s.python,
                    knee_text(s)
                ));
                out.table(sweep_table(s));
            }
            out
        })
        .collect()
}

/// One section per setting with two or more variants: corrected p50 / p99 / p99.9 of each at
/// the offered rates every one of them carried, up to the slowest variant's knee.
pub fn like_for_like_sections(settings: &[LikeForLike]) -> Vec<Section> {
    settings
        .iter()
        .map(|l| {
            let mut out = Section::new(
                format!("{}: latency at the same offered load", l.scenario),
                Some(&l.scenario),
            );
            out.para(format!(
                "Python {}. Every variant at the offered rates all of them were measured at, up to the slowest variant's knee ({}, {}/s), so each tail is read at a load every variant carried. Latency is corrected (from each request's intended start, wrk2's rule), pooled over the rounds; p99.9 needs 1,000 requests or more to mean anything.",
                l.python,
                l.slowest,
                rate(l.slowest_knee_per_s)
            ));
            let mut head = vec!["offered /s".to_string(), "of slowest knee".to_string()];
            head.extend(
                l.variants
                    .iter()
                    .map(|v| format!("{v} p50 / p99 / p99.9 ms")),
            );
            let mut t = Table::new(head);
            for (r, points) in &l.rows {
                let mut row = vec![
                    Cell::from(rate(*r)),
                    format!("{:.2}", r / l.slowest_knee_per_s).into(),
                ];
                row.extend(points.iter().map(|p| {
                    Cell::from(format!(
                        "{} / {} / {}",
                        opt(p.corrected_p50_ms),
                        opt(p.corrected_p99_ms),
                        opt(p.corrected_p99_9_ms)
                    ))
                }));
                t.row(row);
            }
            out.table(t);
            out
        })
        .collect()
}
