//! `summary.md`: one table per scenario plus the environment, for pasting into a decision record.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::{params_text, Exporter};
use crate::results::{Cell, CellStatus, Results};
use crate::runner::sweep::{self, Knee, Sweep};
use crate::stats;

/// The Markdown exporter.
pub struct MarkdownExporter;

/// Formats a measured number with precision that follows its size (no value is altered
/// beyond display precision).
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// Per-round throughputs of two cells, paired by round index.
fn paired(a: &Cell, b: &Cell) -> (Vec<f64>, Vec<f64>) {
    let mut xa = Vec::new();
    let mut xb = Vec::new();
    for ra in &a.runs {
        if let Some(rb) = b.runs.iter().find(|r| r.round == ra.round) {
            xa.push(ra.throughput_per_s);
            xb.push(rb.throughput_per_s);
        }
    }
    (xa, xb)
}

/// The baseline cell for `cell`: the first variant of its scenario on the same interpreter,
/// sharing the most parameter values.
pub fn baseline_for<'a>(
    cell: &Cell,
    cells: &'a [Cell],
    baseline_variant: &str,
) -> Option<&'a Cell> {
    cells
        .iter()
        .filter(|c| {
            c.scenario == cell.scenario
                && c.python == cell.python
                && c.variant == baseline_variant
                && c.summary.is_some()
        })
        .max_by_key(|c| {
            c.params
                .iter()
                .filter(|(k, v)| cell.params.get(*k) == Some(v))
                .count()
        })
}

/// "3.1× [2.9–3.3] ✓" or "1.02× [0.97–1.06] ~ (not significant)".
pub fn ratio_text(cell: &Cell, base: &Cell) -> String {
    if std::ptr::eq(cell, base) || cell.id == base.id {
        return "baseline".into();
    }
    let (a, b) = paired(cell, base);
    if a.len() < 2 {
        return "–".into();
    }
    let c = stats::compare(&a, &b);
    let mark = if c.significant {
        "significant".to_string()
    } else if stats::min_possible_p(a.len(), b.len()) > c.verdict.alpha {
        "not significant (too few rounds)".to_string()
    } else {
        "not significant".to_string()
    };
    format!(
        "{}× [{}–{}] {mark}",
        num(c.ratio.ratio),
        num(c.ratio.ci95_low),
        num(c.ratio.ci95_high)
    )
}

fn scenario_table(
    out: &mut String,
    name: &str,
    cells: &[&Cell],
    all: &[Cell],
    env: &crate::results::Environment,
) {
    let _ = writeln!(out, "## {name}\n");
    // Parameters that vary between cells go in the table; constant ones above it.
    let keys: BTreeSet<String> = cells
        .iter()
        .flat_map(|c| c.params.keys().cloned())
        .collect();
    let (varying, constant): (Vec<String>, Vec<String>) = keys.into_iter().partition(|k| {
        cells
            .iter()
            .any(|c| c.params.get(k) != cells[0].params.get(k))
    });
    if !constant.is_empty() {
        let _ = writeln!(
            out,
            "Parameters: {}\n",
            params_text(&cells[0].params, &constant)
        );
    }
    let base_variant = cells[0].variant.clone();
    // Scenarios whose variants are not alternatives to each other (decide_by = none: the
    // runtime study's ops and pyperf, the event-loop workloads) get no ratio column.
    let compared = cells[0].decide_by != "none";
    let vs_head = if compared {
        format!(" vs {base_variant} (95% CI) |")
    } else {
        String::new()
    };
    let _ = writeln!(out, "| variant | python | params | throughput /s, median (min–max) |{vs_head} wall s | CPU s | peak RSS Δ MiB | latency p50 / p95 / p99 / max ms | p99 over rounds, median (min–max) ms | errors |");
    let _ = writeln!(
        out,
        "|---|---|---|---|{}---|---|---|---|---|---|",
        if compared { "---|" } else { "" }
    );
    for c in cells {
        let params = params_text(&c.params, &varying);
        match (&c.summary, c.status) {
            (Some(s), status) => {
                let t = &s.throughput_per_s;
                let vs = if compared {
                    let text = baseline_for(c, all, &base_variant)
                        .map(|b| ratio_text(c, b))
                        .unwrap_or_else(|| "–".into());
                    format!(" {text} |")
                } else {
                    String::new()
                };
                let p99_rounds = s
                    .latency_ms
                    .as_ref()
                    .and_then(|l| l.p99_over_rounds.as_ref())
                    .map(|p| format!("{} ({}–{})", num(p.median), num(p.min), num(p.max)))
                    .unwrap_or_else(|| "–".into());
                let lat = s
                    .latency_ms
                    .as_ref()
                    .map(|l| {
                        format!(
                            "{} / {} / {} / {}",
                            num(l.p50),
                            num(l.p95),
                            num(l.p99),
                            num(l.max)
                        )
                    })
                    .unwrap_or_else(|| "–".into());
                let failed = if status == CellStatus::Failed {
                    " (failed)"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "| {}{failed} | {} | {params} | {} ({}–{}) |{vs} {} | {} | {} | {lat} | {p99_rounds} | {} |",
                    c.variant,
                    c.python,
                    num(t.median),
                    num(t.min),
                    num(t.max),
                    num(s.wall_s.median),
                    num(s.cpu_s.median),
                    num(s.peak_rss_delta_mib.median),
                    s.errors
                );
            }
            (None, _) => {
                let why = c
                    .failure
                    .as_deref()
                    .unwrap_or("not measured")
                    .lines()
                    .next()
                    .unwrap_or("");
                let why: String = why.chars().take(160).collect();
                let _ = writeln!(
                    out,
                    "| {} ({}) | {} | {params} | {why} |{} | | | | | |",
                    c.variant,
                    format!("{:?}", c.status).to_lowercase(),
                    c.python,
                    if compared { " |" } else { "" }
                );
            }
        }
    }
    let kinds: BTreeSet<&str> = cells
        .iter()
        .filter_map(|c| c.summary.as_ref()?.latency_ms.as_ref())
        .map(|l| l.kind.as_str())
        .collect();
    if kinds.contains("service") {
        let _ = writeln!(
            out,
            "\nLatency is per operation, closed loop, from the moment each operation was actually sent (service time), pooled over rounds."
        );
    }
    if kinds.contains("open-loop-corrected") {
        let _ = writeln!(
            out,
            "\nOpen-loop cells (`rate_per_s` > 0): latency is from each request's intended start on a fixed schedule (corrected: waiting behind slow requests included), pooled over rounds; the rate sweep below also gives it from the actual send."
        );
    }
    let _ = writeln!(out);
    super::study_tables::append(out, cells, env);
}

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_else(|| "–".into())
}

/// A request rate: whole rates without decimals, others like any number.
fn rate_num(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        num(x)
    }
}

/// What a sweep's knee is, in words with the rates.
pub fn knee_text(s: &Sweep) -> String {
    let rate = |r: Option<f64>| r.map(rate_num).unwrap_or_else(|| "–".into());
    match s.knee {
        Knee::Reached => format!(
            "knee at {}/s (saturated at {}/s)",
            rate(s.knee_rate_per_s),
            rate(s.saturated_rate_per_s)
        ),
        Knee::NotReached => format!(
            "knee not reached: kept up at every rate up to {}/s",
            rate(s.points.last().map(|p| p.offered_rate_per_s))
        ),
        Knee::BelowLowestRate => format!(
            "saturated already at the lowest rate, {}/s",
            rate(s.saturated_rate_per_s)
        ),
    }
}

/// Open-loop sweeps: per scenario, one table per variant (offered and achieved rate,
/// corrected and uncorrected p50/p99) with the knee marked.
pub fn sweep_tables(out: &mut String, sweeps: &[Sweep]) {
    let mut scenarios: Vec<&str> = Vec::new();
    for s in sweeps {
        if !scenarios.contains(&s.scenario.as_str()) {
            scenarios.push(&s.scenario);
        }
    }
    for name in scenarios {
        let group: Vec<&Sweep> = sweeps.iter().filter(|s| s.scenario == name).collect();
        let keys: BTreeSet<String> = group
            .iter()
            .flat_map(|s| s.params.keys().cloned())
            .collect();
        let varying: Vec<String> = keys
            .into_iter()
            .filter(|k| {
                group
                    .iter()
                    .any(|s| s.params.get(k) != group[0].params.get(k))
            })
            .collect();
        let _ = writeln!(out, "## {name}: open-loop rate sweep\n");
        let _ = writeln!(
            out,
            "Requests on a fixed schedule at each offered rate (wrk2's rule). *Corrected* latency is from each request's intended start, so waiting behind slow requests counts; *uncorrected* is from its actual send, what a closed-loop client reports. *Achieved* is requests actually sent per second (median over rounds). A rate is saturated when achieved is under {:.0}% of offered, or the corrected p99 is over {} × the reference latency (the server delay `delay_ms`, else the lowest rate's uncorrected p50), or the cell failed; the knee is the highest rate sustained before the first saturated one. A run stops sending at twice its duration: requests not sent by then are counted, not timed, so a saturated row's corrected latencies are a lower bound.\n",
            sweep::ACHIEVED_MIN_FRACTION * 100.0,
            sweep::P99_MAX_FACTOR
        );
        for s in group.iter().copied() {
            let params = params_text(&s.params, &varying);
            let params = if params.is_empty() {
                String::new()
            } else {
                format!("{params}, ")
            };
            let _ = writeln!(
                out,
                "**{}** ({params}Python {}): {}\n",
                s.variant,
                s.python,
                knee_text(s)
            );
            let _ = writeln!(out, "| offered /s | achieved /s | corrected p50 / p99 ms | uncorrected p50 / p99 ms | |");
            let _ = writeln!(out, "|---|---|---|---|---|");
            for p in &s.points {
                let mut mark = if p.saturated {
                    format!("saturated: {}", p.reason.as_deref().unwrap_or(""))
                } else if Some(p.offered_rate_per_s) == s.knee_rate_per_s {
                    "**knee**".to_string()
                } else {
                    "kept up".to_string()
                };
                if p.abandoned > 0 {
                    let _ = write!(
                        mark,
                        "; {} request(s) not sent by 2 × the duration",
                        p.abandoned
                    );
                }
                let _ = writeln!(
                    out,
                    "| {} | {} | {} / {} | {} / {} | {mark} |",
                    rate_num(p.offered_rate_per_s),
                    opt(p.achieved_rate_per_s),
                    opt(p.corrected_p50_ms),
                    opt(p.corrected_p99_ms),
                    opt(p.uncorrected_p50_ms),
                    opt(p.uncorrected_p99_ms)
                );
            }
            let _ = writeln!(out);
        }
    }
}

impl Exporter for MarkdownExporter {
    fn file_name(&self) -> &'static str {
        "summary.md"
    }
    fn render(&self, r: &Results) -> anyhow::Result<Vec<u8>> {
        let mut out = String::new();
        let _ = writeln!(out, "# asynclab results\n");
        let _ = writeln!(
            out,
            "{} rounds after {} warm-up(s), cells interleaved in rotating order, each run a fresh process; medians with min–max over rounds. Ratios are of median throughput with a bootstrap 95% interval paired by round; significance by a two-sided Mann–Whitney U test at α = 0.05.\n",
            r.method.rounds, r.method.warmups
        );
        super::runtime_tables::method_note(&mut out, r);
        let mut scenarios: Vec<&str> = Vec::new();
        for c in &r.cells {
            if !scenarios.contains(&c.scenario.as_str()) {
                scenarios.push(&c.scenario);
            }
        }
        for s in scenarios {
            let cells: Vec<&Cell> = r.cells.iter().filter(|c| c.scenario == s).collect();
            scenario_table(&mut out, s, &cells, &r.cells, &r.env);
        }
        super::runtime_tables::render(&mut out, r);
        sweep_tables(&mut out, &r.sweeps);
        let warnings: Vec<&String> = r
            .env
            .warnings
            .iter()
            .chain(r.cells.iter().flat_map(|c| c.warnings.iter()))
            .collect();
        if !warnings.is_empty() {
            let _ = writeln!(out, "## Warnings\n");
            for w in warnings {
                let _ = writeln!(out, "- {w}");
            }
            let _ = writeln!(out);
        }
        let e = &r.env;
        let _ = writeln!(out, "## Environment\n");
        let _ = writeln!(
            out,
            "- CPU: {} ({} cores), governor: {}",
            e.cpu_model, e.cores, e.governor
        );
        let _ = writeln!(
            out,
            "- Memory: {} MiB; kernel {}",
            e.memory_total_mib, e.kernel
        );
        let la = |l: [f64; 3]| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]);
        let _ = writeln!(
            out,
            "- Load average before: {}; after: {}",
            la(e.load_avg_before),
            e.load_avg_after.map(la).unwrap_or_else(|| "–".into())
        );
        for p in &e.pythons {
            let pk: Vec<String> = p.packages.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let _ = writeln!(
                out,
                "- Python {} ({}, {}): {}",
                p.version,
                p.implementation,
                p.compiler,
                pk.join(", ")
            );
        }
        if let Some(pg) = &e.postgres {
            let _ = writeln!(out, "- PostgreSQL: {pg}");
        }
        if let Some(m) = &e.mock_http {
            let _ = writeln!(out, "- Mock HTTP server: {m}");
        }
        let _ = writeln!(
            out,
            "- asynclab {} at commit {}; started {}",
            r.generated_by, e.git_commit, r.started_at
        );
        let decision = super::decision::markdown(r);
        if !decision.is_empty() {
            let _ = writeln!(out);
            out.push_str(&decision);
        }
        Ok(out.into_bytes())
    }
}
