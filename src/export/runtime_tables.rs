//! The runtime study's sections: per-operation cost by interpreter (with the set-up checks and
//! pyperf's figures beside the lab's), the builds compared, and the event-loop comparison.

use super::markup::{Cell, Mark, Section, Table};
use crate::analysis::ops::{loop_of, op_label};
use crate::analysis::runtime::{
    LoopEntry, LoopReport, OpsReport, OpsTable, PYPERF_TOLERANCE, REFERENCE_LOOP,
};
use crate::format::num;
use crate::results::Results;

fn us(ns: f64) -> String {
    num(ns / 1000.0)
}

fn ops_table(out: &mut Section, t: &OpsTable) {
    let base = &t.pythons[0];
    out.para(format!(
        "Loop **{}**, µs per operation (× {base}):",
        t.event_loop
    ));
    let mut head = vec!["operation".to_string()];
    head.extend(t.pythons.iter().map(|p| format!("{p} µs")));
    head.push("set-up checks".into());
    let mut table = Table::new(head);
    let mut notes = Vec::new();
    for row in &t.rows {
        let mut cells = vec![Cell::from(op_label(&row.op))];
        let mut flagged = Vec::new();
        for (p, e) in t.pythons.iter().zip(&row.entries) {
            let Some(e) = e else {
                cells.push("–".into());
                continue;
            };
            let mut text = us(e.stats.ns_median);
            if let Some(r) = e.vs_base {
                text.push_str(&format!(" ({}×)", num(r)));
            }
            if e.stats.flagged_runs > 0 {
                text.push_str(" ⚠");
                flagged.push(p.clone());
                notes.push(format!(
                    "⚠ {} on {p}: flagged in {} of {} runs: {}",
                    op_label(&row.op),
                    e.stats.flagged_runs,
                    e.stats.runs,
                    e.stats.flag.as_deref().unwrap_or("")
                ));
            }
            cells.push(text.into());
        }
        cells.push(if flagged.is_empty() {
            "ok".into()
        } else {
            Cell::marked(format!("flagged on {}", flagged.join(", ")), Mark::Failed)
        });
        table.rows.push(cells);
    }
    out.table(table);
    out.list(notes);
    out.para("Set-up checks: *doubling* — the fastest per-op value with twice the iterations must be within the run's tolerance (5% by default) of the fastest with the calibrated count, else the figure still includes per-value set-up; *same work* — an op that repeats another op's work plus set-up (the mis-timed `asyncio.run()` per call) may exceed that op by at most 25%. A per-call set-up cost grows with the iterations, so only the second check can catch it.");
}

fn pyperf_table(out: &mut Section, ops: &OpsReport) {
    if ops.pyperf.is_empty() {
        return;
    }
    out.para(format!("pyperf cross-check (`bench_async_func` in its own worker processes, same interpreter and loop, same session): the medians must agree within {:.0}%.", PYPERF_TOLERANCE * 100.0));
    let mut t = Table::new([
        "python",
        "loop",
        "operation",
        "lab µs (median)",
        "pyperf µs, median (mean ± sd)",
        "pyperf vs lab",
        "agree",
    ]);
    for r in &ops.pyperf {
        let pp = r
            .pyperf
            .as_ref()
            .map(|f| {
                format!(
                    "{} ({} ± {})",
                    us(f.median_ns),
                    us(f.mean_ns),
                    us(f.stdev_ns)
                )
            })
            .unwrap_or_else(|| "–".into());
        let agree = match (r.agree, r.lab_ns) {
            (Some(true), _) => "yes".into(),
            (Some(false), _) => Cell::marked("**no**", Mark::Failed),
            (None, None) => "no lab figure".into(),
            (None, Some(_)) => "–".into(),
        };
        t.row([
            Cell::from(r.cell.python.clone()),
            loop_of(r.cell).into(),
            op_label(&r.op).into(),
            r.lab_ns.map(us).unwrap_or_else(|| "–".into()).into(),
            pp.into(),
            r.difference
                .map(|d| format!("{:+.1}%", d * 100.0))
                .unwrap_or_else(|| "–".into())
                .into(),
            agree,
        ]);
    }
    out.table(t);
}

fn details_table(out: &mut Section, ops: &OpsReport) {
    out.para(
        "Details per operation (over runs: each run's median; within a run: over its repetitions):",
    );
    let mut t = Table::new([
        "operation",
        "python",
        "loop",
        "µs median (min–max)",
        "mean ± sd over runs µs",
        "within-run sd µs",
        "× plain call",
        "doubling, worst run",
        "runs",
    ]);
    for (name, c, s) in &ops.details {
        t.row([
            op_label(name),
            c.python.clone(),
            loop_of(c),
            format!("{} ({}–{})", us(s.ns_median), us(s.ns_min), us(s.ns_max)),
            format!("{} ± {}", us(s.ns_mean), us(s.ns_stddev)),
            us(s.within_run_stddev_ns),
            s.ratio_to_plain_call.map(num).unwrap_or_else(|| "–".into()),
            format!("{:+.1}%", s.doubling_change_worst * 100.0),
            s.runs.to_string(),
        ]);
    }
    out.table(t);
}

fn builds_table(out: &mut Section, r: &Results) {
    out.para("Interpreters compared (builds, not language versions: interpreters built with different compilers or configure flags differ for that reason too):");
    let mut t = Table::new(["python", "implementation", "compiler", "configure flags"]);
    for p in &r.env.pythons {
        let flags = if p.config_args.trim().is_empty() {
            "–"
        } else {
            p.config_args.trim()
        };
        t.row([
            p.version.clone(),
            p.implementation.clone(),
            p.compiler.clone(),
            format!("`{}`", flags.replace('|', "\\|")),
        ]);
    }
    out.table(t);
}

/// The first figure of a parameter the runs reported (repetitions, min_time_ms).
fn first_extra(ops: &OpsReport, key: &str) -> String {
    ops.lab
        .iter()
        .flat_map(|c| c.runs.iter())
        .find_map(|r| r.extra.text(key))
        .unwrap_or_else(|| "–".into())
}

/// The per-operation section of one scenario, with the builds compared.
pub fn ops_section(ops: &OpsReport, results: &Results) -> Section {
    let mut out = Section::new(
        format!("Per-operation cost ({})", ops.scenario),
        Some(&ops.scenario),
    );
    out.para(format!(
        "µs per operation: the median over runs (fresh processes) of each run's median over {} interleaved repetitions; every timed value lasts at least {} ms (iterations calibrated in setup), the loop is made outside the timed region and cyclic GC is off while timing. Each figure includes one step of a `for` loop. Ratios are against the oldest interpreter, same loop.",
        first_extra(ops, "repetitions"),
        first_extra(ops, "min_time_ms"),
    ));
    for t in &ops.tables {
        ops_table(&mut out, t);
    }
    pyperf_table(&mut out, ops);
    details_table(&mut out, ops);
    out.list(
        ops.missing
            .iter()
            .map(|(why, variants)| format!("{why} (variants: {})", variants.join(", ")))
            .collect(),
    );
    builds_table(&mut out, results);
    out
}

/// The event-loop comparison of one scenario.
pub fn loop_section(l: &LoopReport) -> Section {
    let mut out = Section::new(format!("Event loops ({})", l.scenario), Some(&l.scenario));
    out.para(format!("ms per batch, median (min–max) over runs, each a fresh process with cyclic GC off during the batch; × = time relative to {REFERENCE_LOOP} on the same interpreter (below 1: faster). Peak RSS Δ is the process's peak over its baseline at *ready*, median over runs."));
    let mut head = vec!["workload".to_string(), "python".into()];
    head.extend(l.loops.iter().map(|x| format!("{x} ms")));
    head.push(format!("peak RSS Δ MiB ({})", l.loops.join(" / ")));
    let mut t = Table::new(head);
    for row in &l.rows {
        let mut cells = vec![Cell::from(row.variant.clone()), row.python.clone().into()];
        let mut rss = Vec::new();
        for e in &row.entries {
            match e {
                LoopEntry::Measured {
                    ms,
                    vs_reference,
                    peak_rss_delta_mib,
                    ..
                } => {
                    let mut text = format!("{} ({}–{})", num(ms.median), num(ms.min), num(ms.max));
                    if let Some(r) = vs_reference {
                        text.push_str(&format!(" {}×", num(*r)));
                    }
                    cells.push(text.into());
                    rss.push(peak_rss_delta_mib.map(num).unwrap_or_else(|| "–".into()));
                }
                LoopEntry::NotMeasured(status) => {
                    let mark = if *status == "failed" {
                        Mark::Failed
                    } else {
                        Mark::Plain
                    };
                    cells.push(Cell::marked(*status, mark));
                    rss.push("–".into());
                }
                LoopEntry::Absent => {
                    cells.push("–".into());
                    rss.push("–".into());
                }
            }
        }
        cells.push(rss.join(" / ").into());
        t.rows.push(cells);
    }
    out.table(t);
    out.list(
        l.missing
            .iter()
            .map(|(why, w)| format!("{why} (workloads: {})", w.join(", ")))
            .collect(),
    );
    out
}
