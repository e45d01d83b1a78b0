//! The asyncio runtime study's sections of summary.md: per-operation cost by interpreter (with
//! the set-up checks and pyperf's figures beside the lab's), the builds compared and the
//! event-loop comparison. Rendered from the cells' `extra`, nothing typed. (The behaviour checks'
//! rows are rendered with every correctness study's, by `study_tables`.)

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::markdown::num;
use crate::cost::{loop_of, op_order, op_stats, version_key, OpStats, OPS_SCENARIO};
use crate::results::{Cell, CellStatus, Results};
use crate::stats;

/// pyperf and the lab must agree within this fraction.
pub const PYPERF_TOLERANCE: f64 = 0.10;
/// The loop other loops are compared with.
const REFERENCE_LOOP: &str = "asyncio";

/// Writes the runtime study's sections for whichever of its scenarios the run has.
pub fn render(out: &mut String, r: &Results) {
    let of = |s: &str| -> Vec<&Cell> { r.cells.iter().filter(|c| c.scenario == s).collect() };
    let ops = of(OPS_SCENARIO);
    if !ops.is_empty() {
        ops_section(out, &ops);
        builds(out, r);
    }
    let loops = of("event_loops");
    if !loops.is_empty() {
        loop_section(out, &loops);
    }
}

/// A line under the header naming scenarios measured with their own rounds and warm-ups.
pub fn method_note(out: &mut String, r: &Results) {
    for (name, p) in &r.method.scenario_plans {
        let _ = writeln!(
            out,
            "Scenario {name}: {} rounds after {} warm-up(s) (its catalogue default).\n",
            p.rounds, p.warmups
        );
    }
    if !r.method.cpus.is_empty() {
        let cpus: Vec<String> = r.method.cpus.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(out, "Workers pinned to CPU(s) {}.\n", cpus.join(","));
    }
}

/// Readable name of an asyncio_ops operation.
pub fn op_label(op: &str) -> String {
    match op {
        "plain_call" => "plain function call".into(),
        "await_coroutine" => "await a coroutine".into(),
        "sleep0" => "await asyncio.sleep(0)".into(),
        "create_task_await" => "create_task + await".into(),
        "queue_put_get" => "Queue put/get pair".into(),
        "lock_acquire_release" => "uncontended Lock acquire/release".into(),
        "tcp_echo_round_trip" => "TCP echo round trip".into(),
        "asyncio_run_per_call" => "asyncio.run() per call (deliberately mis-timed)".into(),
        other => match other.strip_prefix("gather_") {
            Some(k) => format!("gather, per coroutine (of {k})"),
            None => other.to_string(),
        },
    }
}

fn unique_sorted_pythons(cells: &[&Cell]) -> Vec<String> {
    let mut v: Vec<String> = cells.iter().map(|c| c.python.clone()).collect();
    v.sort_by_key(|p| version_key(p));
    v.dedup();
    v
}

fn loops_in_order(cells: &[&Cell]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for c in cells {
        let l = loop_of(c);
        if !v.contains(&l) {
            v.push(l);
        }
    }
    v.sort_by_key(|l| l != REFERENCE_LOOP);
    v
}

fn first_param(cells: &[&Cell], key: &str) -> Option<String> {
    cells
        .iter()
        .flat_map(|c| c.runs.iter())
        .find_map(|r| r.extra.get(key).filter(|v| !v.is_null()))
        .map(|v| v.to_string().trim_matches('"').to_string())
}

fn why(c: &Cell) -> String {
    let text = c.failure.as_deref().unwrap_or("not measured");
    text.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

fn ops_section(out: &mut String, cells: &[&Cell]) {
    let lab: Vec<&Cell> = cells
        .iter()
        .copied()
        .filter(|c| c.variant == "ops")
        .collect();
    let _ = writeln!(out, "## asyncio per-operation cost (asyncio_ops)\n");
    let _ = writeln!(
        out,
        "µs per operation: the median over runs (fresh processes) of each run's median over {} interleaved repetitions; every timed value lasts at least {} ms (iterations calibrated in setup), the loop is made outside the timed region and cyclic GC is off while timing. Each figure includes one step of a `for` loop. Ratios are against the oldest interpreter, same loop.\n",
        first_param(&lab, "repetitions").unwrap_or_else(|| "–".into()),
        first_param(&lab, "min_time_ms").unwrap_or_else(|| "–".into()),
    );
    for l in loops_in_order(&lab) {
        let in_loop: Vec<&Cell> = lab.iter().copied().filter(|c| loop_of(c) == l).collect();
        ops_table(out, &l, &in_loop);
    }
    pyperf_table(out, cells);
    details_table(out, &lab);
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.summary.is_none()) {
        let status = if c.status == CellStatus::Skipped {
            "skipped"
        } else {
            "failed"
        };
        let key = format!("{} {status} on {}: {}", loop_of(c), c.python, why(c));
        missing.entry(key).or_default().push(c.variant.clone());
    }
    for (why, variants) in missing {
        let _ = writeln!(out, "- {why} (variants: {})", variants.join(", "));
    }
    let _ = writeln!(out);
}

/// Per-op stats of each python's cell with this loop.
fn stats_by_python(cells: &[&Cell]) -> BTreeMap<String, BTreeMap<String, OpStats>> {
    cells
        .iter()
        .filter(|c| !c.runs.is_empty())
        .map(|c| (c.python.clone(), op_stats(c)))
        .collect()
}

fn sorted_ops(by_python: &BTreeMap<String, BTreeMap<String, OpStats>>) -> Vec<String> {
    let mut names: Vec<String> = by_python.values().flat_map(|m| m.keys().cloned()).collect();
    names.sort_by_key(|n| op_order(n));
    names.dedup();
    names
}

fn ops_table(out: &mut String, event_loop: &str, cells: &[&Cell]) {
    let pythons = unique_sorted_pythons(cells);
    let by_python = stats_by_python(cells);
    let names = sorted_ops(&by_python);
    if names.is_empty() {
        return;
    }
    let base = &pythons[0];
    let _ = writeln!(out, "Loop **{event_loop}**, µs per operation (× {base}):\n");
    let head: Vec<String> = pythons.iter().map(|p| format!("{p} µs")).collect();
    let _ = writeln!(out, "| operation | {} | set-up checks |", head.join(" | "));
    let _ = writeln!(out, "|---|{}---|", "---|".repeat(pythons.len()));
    let mut notes = Vec::new();
    for name in &names {
        let base_ns = by_python
            .get(base)
            .and_then(|m| m.get(name))
            .map(|s| s.ns_median);
        let mut row = format!("| {} |", op_label(name));
        let mut flagged = Vec::new();
        for p in &pythons {
            let Some(s) = by_python.get(p).and_then(|m| m.get(name)) else {
                row.push_str(" – |");
                continue;
            };
            let mut text = num(s.ns_median / 1000.0);
            if let (Some(b), true) = (base_ns, p != base) {
                let _ = write!(text, " ({}×)", num(s.ns_median / b));
            }
            if s.flagged_runs > 0 {
                text.push_str(" ⚠");
                flagged.push(p.clone());
                notes.push(format!(
                    "⚠ {} on {p}: flagged in {} of {} runs: {}",
                    op_label(name),
                    s.flagged_runs,
                    s.runs,
                    s.flag.as_deref().unwrap_or("")
                ));
            }
            let _ = write!(row, " {text} |");
        }
        let checks = if flagged.is_empty() {
            "ok".to_string()
        } else {
            format!("flagged on {}", flagged.join(", "))
        };
        let _ = writeln!(out, "{row} {checks} |");
    }
    let _ = writeln!(out);
    for n in notes {
        let _ = writeln!(out, "- {n}");
    }
    let _ = writeln!(out, "\nSet-up checks: *doubling* — the fastest per-op value with twice the iterations must be within the run's tolerance (5% by default) of the fastest with the calibrated count, else the figure still includes per-value set-up; *same work* — an op that repeats another op's work plus set-up (the mis-timed `asyncio.run()` per call) may exceed that op by at most 25%. A per-call set-up cost grows with the iterations, so only the second check can catch it.\n");
}

/// pyperf's figures for one benchmark, each the median over the cell's runs, in ns.
struct PyperfFigure {
    median_ns: f64,
    mean_ns: f64,
    stdev_ns: f64,
}

impl PyperfFigure {
    fn text(&self) -> String {
        format!(
            "{} ({} ± {})",
            num(self.median_ns / 1000.0),
            num(self.mean_ns / 1000.0),
            num(self.stdev_ns / 1000.0)
        )
    }
}

fn pyperf_figure(cell: &Cell, bench: &str) -> Option<PyperfFigure> {
    let get = |k: &str| -> Vec<f64> {
        cell.runs
            .iter()
            .filter_map(|r| r.extra.get("benchmarks")?.get(bench)?.get(k)?.as_f64())
            .collect()
    };
    let (medians, means, sds) = (get("median_ns"), get("mean_ns"), get("stdev_ns"));
    (!medians.is_empty()).then(|| PyperfFigure {
        median_ns: stats::median(&medians),
        mean_ns: stats::median(&means),
        stdev_ns: stats::median(&sds),
    })
}

fn pyperf_table(out: &mut String, cells: &[&Cell]) {
    let pyperf: Vec<&Cell> = cells
        .iter()
        .copied()
        .filter(|c| c.variant == "pyperf")
        .collect();
    if pyperf.is_empty() {
        return;
    }
    let _ = writeln!(out, "pyperf cross-check (`bench_async_func` in its own worker processes, same interpreter and loop, same session): the medians must agree within {:.0}%.\n", PYPERF_TOLERANCE * 100.0);
    let _ = writeln!(out, "| python | loop | operation | lab µs (median) | pyperf µs, median (mean ± sd) | pyperf vs lab | agree |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for p in &pyperf {
        let lab = cells.iter().find(|c| {
            c.variant == "ops"
                && c.python == p.python
                && loop_of(c) == loop_of(p)
                && !c.runs.is_empty()
        });
        let lab_stats = lab.map(|c| op_stats(c)).unwrap_or_default();
        for bench in ["create_task_await", "sleep0"] {
            let lab_ns = lab_stats.get(bench).map(|s| s.ns_median);
            let (pp, diff, agree) = match (pyperf_figure(p, bench), lab_ns) {
                (Some(f), Some(l)) => {
                    let d = f.median_ns / l - 1.0;
                    let ok = if d.abs() <= PYPERF_TOLERANCE {
                        "yes"
                    } else {
                        "**no**"
                    };
                    (f.text(), format!("{:+.1}%", d * 100.0), ok.to_string())
                }
                (Some(f), None) => (f.text(), "–".into(), "no lab figure".into()),
                (None, _) => (
                    format!(
                        "{} ({})",
                        if p.status == CellStatus::Skipped {
                            "skipped"
                        } else {
                            "not measured"
                        },
                        why(p)
                    ),
                    "–".into(),
                    "–".into(),
                ),
            };
            let lab_text = lab_ns
                .map(|l| num(l / 1000.0))
                .unwrap_or_else(|| "–".into());
            let _ = writeln!(
                out,
                "| {} | {} | {} | {lab_text} | {pp} | {diff} | {agree} |",
                p.python,
                loop_of(p),
                op_label(bench)
            );
        }
    }
    let _ = writeln!(out);
}

fn details_table(out: &mut String, lab: &[&Cell]) {
    let _ = writeln!(out, "Details per operation (over runs: each run's median; within a run: over its repetitions):\n");
    let _ = writeln!(out, "| operation | python | loop | µs median (min–max) | mean ± sd over runs µs | within-run sd µs | × plain call | doubling, worst run | runs |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
    let mut rows: Vec<(String, &Cell, OpStats)> = Vec::new();
    for c in lab {
        for (name, s) in op_stats(c) {
            rows.push((name, c, s));
        }
    }
    rows.sort_by(|a, b| {
        (op_order(&a.0), loop_of(a.1), version_key(&a.1.python)).cmp(&(
            op_order(&b.0),
            loop_of(b.1),
            version_key(&b.1.python),
        ))
    });
    for (name, c, s) in rows {
        let us = |ns: f64| num(ns / 1000.0);
        let ratio = s.ratio_to_plain_call.map(num).unwrap_or_else(|| "–".into());
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} ({}–{}) | {} ± {} | {} | {ratio} | {:+.1}% | {} |",
            op_label(&name),
            c.python,
            loop_of(c),
            us(s.ns_median),
            us(s.ns_min),
            us(s.ns_max),
            us(s.ns_mean),
            us(s.ns_stddev),
            us(s.within_run_stddev_ns),
            s.doubling_change_worst * 100.0,
            s.runs
        );
    }
    let _ = writeln!(out);
}

fn builds(out: &mut String, r: &Results) {
    let _ = writeln!(out, "Interpreters compared (builds, not language versions: interpreters built with different compilers or configure flags differ for that reason too):\n");
    let _ = writeln!(
        out,
        "| python | implementation | compiler | configure flags |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for p in &r.env.pythons {
        let flags = if p.config_args.trim().is_empty() {
            "–"
        } else {
            p.config_args.trim()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | `{}` |",
            p.version,
            p.implementation,
            p.compiler,
            flags.replace('|', "\\|")
        );
    }
    let _ = writeln!(out);
}

/// Elapsed ms of each run of an event_loops cell (the worker's own timing of the batch).
fn elapsed_ms(c: &Cell) -> Vec<f64> {
    c.runs
        .iter()
        .map(|r| {
            r.extra
                .get("elapsed_ms")
                .and_then(Value::as_f64)
                .unwrap_or(r.inside_wall_s * 1000.0)
        })
        .collect()
}

fn loop_section(out: &mut String, cells: &[&Cell]) {
    let loops = loops_in_order(cells);
    let pythons = unique_sorted_pythons(cells);
    let mut variants: Vec<&str> = Vec::new();
    for c in cells {
        if !variants.contains(&c.variant.as_str()) {
            variants.push(&c.variant);
        }
    }
    let _ = writeln!(out, "## Event loops (event_loops)\n");
    let _ = writeln!(out, "ms per batch, median (min–max) over runs, each a fresh process with cyclic GC off during the batch; × = time relative to {REFERENCE_LOOP} on the same interpreter (below 1: faster). Peak RSS Δ is the process's peak over its baseline at *ready*, median over runs.\n");
    let head: Vec<String> = loops.iter().map(|l| format!("{l} ms")).collect();
    let _ = writeln!(
        out,
        "| workload | python | {} | peak RSS Δ MiB ({}) |",
        head.join(" | "),
        loops.join(" / ")
    );
    let _ = writeln!(out, "|---|---|{}---|", "---|".repeat(loops.len()));
    let mut skipped: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for v in &variants {
        for p in &pythons {
            let cell_for = |l: &str| {
                cells
                    .iter()
                    .find(|c| c.variant == *v && &c.python == p && loop_of(c) == l)
            };
            let reference = cell_for(REFERENCE_LOOP)
                .map(|c| stats::median(&elapsed_ms(c)))
                .filter(|m| m.is_finite());
            let mut row = format!("| {v} | {p} |");
            let mut rss = Vec::new();
            for l in &loops {
                match cell_for(l) {
                    Some(c) if !c.runs.is_empty() => {
                        let ms = elapsed_ms(c);
                        let med = stats::median(&ms);
                        let lo = ms.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = ms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        let mut text = format!("{} ({}–{})", num(med), num(lo), num(hi));
                        if let (Some(r), true) = (reference, l != REFERENCE_LOOP) {
                            let _ = write!(text, " {}×", num(med / r));
                        }
                        let _ = write!(row, " {text} |");
                        rss.push(
                            c.summary
                                .as_ref()
                                .map(|s| num(s.peak_rss_delta_mib.median))
                                .unwrap_or_else(|| "–".into()),
                        );
                    }
                    Some(c) => {
                        let status = if c.status == CellStatus::Skipped {
                            "skipped"
                        } else {
                            "failed"
                        };
                        let _ = write!(row, " {status} |");
                        let key = format!("{l} {status} on {p}: {}", why(c));
                        skipped.entry(key).or_default().push(c.variant.clone());
                        rss.push("–".into());
                    }
                    None => {
                        row.push_str(" – |");
                        rss.push("–".into());
                    }
                }
            }
            let _ = writeln!(out, "{row} {} |", rss.join(" / "));
        }
    }
    let _ = writeln!(out);
    for (why, workloads) in skipped {
        let _ = writeln!(out, "- {why} (workloads: {})", workloads.join(", "));
    }
    let _ = writeln!(out);
}
