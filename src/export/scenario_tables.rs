//! A scenario's section: its main table (one row per cell, the ratio to the baseline marked by
//! its verdict) and the tables its cells call for (memory per unit, further latency sets,
//! correctness rows, the core bound of process pools).

use super::markup::{Cell, Mark, Section, Table};
use crate::analysis::comparison::{Comparison, Verdict};
use crate::analysis::params_text;
use crate::analysis::scenario::{Row, ScenarioReport, VsBaseline};
use crate::format::num;
use crate::results::{CellStatus, LatencySummary};

/// How a verdict is marked.
pub fn verdict_mark(v: &Verdict) -> Mark {
    match v {
        Verdict::Significant => Mark::Significant,
        Verdict::NotSignificant | Verdict::WithinNoise | Verdict::TooFewRounds => {
            Mark::NotSignificant
        }
        Verdict::Inconclusive(_) => Mark::Inconclusive,
    }
}

/// The "vs baseline" cell: "3.1× [2.9–3.3] significant", "baseline" or "–".
fn vs_cell(v: &VsBaseline) -> Cell {
    match v {
        VsBaseline::NotCompared | VsBaseline::NoPair => "–".into(),
        VsBaseline::IsBaseline => "baseline".into(),
        VsBaseline::Ratio(c) => ratio_cell(c),
    }
}

/// A comparison as every ratio shows it: "3.1× [2.9–3.3] significant".
pub fn ratio_text(c: &Comparison) -> String {
    format!(
        "{}× [{}–{}] {}",
        num(c.ratio.ratio),
        num(c.ratio.ci95_low),
        num(c.ratio.ci95_high),
        c.verdict.text()
    )
}

/// What stands where a comparison has fewer than two paired rounds.
pub const NO_PAIRS: &str = "fewer than two paired rounds";

/// The comparison's text, or why there is none.
pub fn outcome(c: Option<&crate::analysis::comparison::Comparison>) -> String {
    c.map_or(NO_PAIRS.into(), ratio_text)
}

/// [`ratio_text`] as a table cell, marked by its verdict.
pub fn ratio_cell(c: &Comparison) -> Cell {
    Cell::marked(ratio_text(c), verdict_mark(&c.verdict))
}

/// "p50 / p95 / p99 / max".
fn percentiles(l: &LatencySummary) -> String {
    format!(
        "{} / {} / {} / {}",
        num(l.p50),
        num(l.p95),
        num(l.p99),
        num(l.max)
    )
}

fn main_row(s: &ScenarioReport, row: &Row, compared: bool) -> Vec<Cell> {
    let c = row.cell;
    let params = params_text(&c.params, &s.varying_params);
    let mut out: Vec<Cell> = Vec::new();
    match &c.summary {
        Some(sum) => {
            let t = &sum.throughput_per_s;
            let failed = c.status == CellStatus::Failed;
            out.push(if failed {
                Cell::marked(format!("{} (failed)", c.variant), Mark::Failed)
            } else {
                c.variant.clone().into()
            });
            out.push(c.python.clone().into());
            out.push(params.into());
            out.push(format!("{} ({}–{})", num(t.median), num(t.min), num(t.max)).into());
            if compared {
                out.push(vs_cell(&row.vs_baseline));
            }
            out.push(num(sum.wall_s.median).into());
            out.push(num(sum.cpu_s.median).into());
            out.push(num(sum.peak_rss_delta_mib.median).into());
            let lat = sum.latency_ms.as_ref();
            out.push(lat.map(percentiles).unwrap_or_else(|| "–".into()).into());
            out.push(
                lat.and_then(|l| l.p99_over_rounds.as_ref())
                    .map(|p| format!("{} ({}–{})", num(p.median), num(p.min), num(p.max)))
                    .unwrap_or_else(|| "–".into())
                    .into(),
            );
            out.push(sum.errors.to_string().into());
        }
        None => {
            let why = c
                .failure
                .as_deref()
                .unwrap_or("not measured")
                .lines()
                .next()
                .unwrap_or("");
            let why: String = why.chars().take(160).collect();
            let status = format!("{:?}", c.status).to_lowercase();
            let mark = if c.status == CellStatus::Failed {
                Mark::Failed
            } else {
                Mark::Plain
            };
            out.push(Cell::marked(format!("{} ({status})", c.variant), mark));
            out.push(c.python.clone().into());
            out.push(params.into());
            out.push(why.into());
            let empty = if compared { 7 } else { 6 };
            out.extend((0..empty).map(|_| Cell::from("")));
        }
    }
    out
}

/// The interference cell: foreign CPU of the clean runs (max of all), repeats, busy.
fn interference_cell(row: &Row) -> Cell {
    let Some(i) = &row.interference else {
        return "–".into();
    };
    let median = if i.foreign_cpu_s_median.is_finite() {
        format!("{:.2}", i.foreign_cpu_s_median)
    } else {
        "–".to_string()
    };
    let mut text = format!("{median} ({:.2}) s", i.foreign_cpu_s_max);
    if i.steal_s > 0.0 {
        text.push_str(&format!(", steal {:.2} s", i.steal_s));
    }
    if let Some(p) = &i.probe {
        text.push_str(&format!(", probe {:.1}–{:.1} ms", p.min_ms, p.max_ms));
    }
    if i.contaminated_runs > 0 {
        text.push_str(&format!(", {} run(s) repeated", i.contaminated_runs));
    }
    match &i.busy {
        Some(why) => Cell::marked(format!("{text}; inconclusive: {why}"), Mark::Inconclusive),
        None => text.into(),
    }
}

fn main_table(s: &ScenarioReport) -> Table {
    let mut head: Vec<String> = [
        "variant",
        "python",
        "params",
        "throughput /s, median (min–max)",
    ]
    .map(String::from)
    .to_vec();
    if let Some(b) = &s.baseline {
        head.push(format!("vs {b} (95% CI)"));
    }
    head.extend(
        [
            "wall s",
            "CPU s",
            "peak RSS Δ MiB",
            "latency p50 / p95 / p99 / max ms",
            "p99 over rounds, median (min–max) ms",
            "errors",
        ]
        .map(String::from),
    );
    let measured = s.rows.iter().any(|r| r.interference.is_some());
    if measured {
        head.push("foreign CPU s, median (max)".into());
    }
    let mut t = Table::new(head);
    for row in &s.rows {
        let mut cells = main_row(s, row, s.baseline.is_some());
        if measured {
            cells.push(interference_cell(row));
        }
        t.rows.push(cells);
    }
    t
}

fn memory_per_unit(out: &mut Section, s: &ScenarioReport) {
    if s.memory_per_unit.is_empty() {
        return;
    }
    out.para("Memory per unit (peak over the process's own baseline at *ready*: RSS high-water mark for one process, PSS summed over the process tree, sampled every 20 ms, where a variant starts processes; median over rounds):");
    let mut t = Table::new([
        "units",
        "variant",
        "python",
        "peak RSS Δ MiB (min–max)",
        "per unit KiB",
    ]);
    for u in &s.memory_per_unit {
        let m = &u
            .cell
            .summary
            .as_ref()
            .expect("analysed")
            .peak_rss_delta_mib;
        t.row([
            u.units.to_string(),
            u.cell.variant.clone(),
            u.cell.python.clone(),
            format!("{} ({}–{})", num(m.median), num(m.min), num(m.max)),
            num(u.per_unit_kib),
        ]);
    }
    out.table(t);
}

/// What each latency kind measures from, as the notes under the latency tables say it.
const LATENCY_KINDS: [(&str, &str); 5] = [
    ("service", "*service*: from the moment each request was actually sent."),
    ("open-loop-corrected", "*open-loop-corrected*: from each request's intended start on the fixed schedule, so waiting behind slow requests counts (wrk2's rule)."),
    ("uncorrected", "*uncorrected*: from the actual send of an open-loop request, what a closed-loop client reports of it."),
    ("from_batch", "*from_batch*: from the moment the whole batch was asked for, so it includes waiting for a worker or a connection — a p50 that counts queueing as latency."),
    ("since-start", "*since-start*: from the start of the timed run."),
];

fn latency_sets(out: &mut Section, s: &ScenarioReport) {
    let (names, cells) = &s.latency_sets;
    if cells.is_empty() {
        return;
    }
    // The main column's kind: the cells' own (`service` closed loop, `open-loop-corrected`
    // open loop), named as it is, never assumed.
    let mut kinds: Vec<String> = cells
        .iter()
        .filter_map(|c| {
            c.summary
                .as_ref()?
                .latency_ms
                .as_ref()
                .map(|l| l.kind.clone())
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    let main = if kinds.len() == 1 {
        kinds[0].clone()
    } else {
        "main (the cell's own kind)".to_string()
    };
    let mut head = vec![
        "variant".to_string(),
        "setting".into(),
        format!("{main} p50 / p95 / p99 / max ms"),
    ];
    head.extend(
        names
            .iter()
            .map(|n| format!("{n} p50 / p95 / p99 / max ms")),
    );
    let mut t = Table::new(head);
    for c in cells {
        let sum = c.summary.as_ref().expect("analysed");
        let mut row = vec![
            c.variant.clone(),
            if c.group.is_empty() {
                "–".into()
            } else {
                c.group.clone()
            },
            sum.latency_ms
                .as_ref()
                .map(percentiles)
                .unwrap_or_else(|| "–".into()),
        ];
        row.extend(names.iter().map(|n| {
            sum.latency_sets_ms
                .get(n)
                .map(percentiles)
                .unwrap_or_else(|| "–".into())
        }));
        t.row(row);
    }
    out.table(t);
    let shown: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .chain(names.iter().map(String::as_str))
        .collect();
    let notes: Vec<&str> = LATENCY_KINDS
        .iter()
        .filter(|(k, _)| shown.contains(k))
        .map(|(_, text)| *text)
        .collect();
    out.para(notes.join(" "));
}

fn correctness(out: &mut Section, s: &ScenarioReport) {
    let text = |v: &serde_json::Value| {
        v.as_str()
            .map(String::from)
            .unwrap_or_else(|| {
                if v.is_null() {
                    String::new()
                } else {
                    v.to_string()
                }
            })
            .replace('|', "\\|")
            .replace('\n', " ")
    };
    for (c, rows) in &s.correctness {
        out.para(format!(
            "Correctness rows ({} on Python {}):",
            c.variant, c.python
        ));
        let mut t = Table::new(["case", "expected", "observed", "matches"]);
        for r in rows.iter() {
            t.row([
                Cell::from(text(&r.case)),
                text(&r.expected).into(),
                text(&r.observed).into(),
                if r.ok {
                    "yes".into()
                } else {
                    Cell::marked("**NO**", Mark::Failed)
                },
            ]);
        }
        out.table(t);
    }
}

/// The efficiency as a percentage; one above the physical bound is never shown bare.
fn efficiency_text(r: &crate::analysis::scenario::CpuRow) -> String {
    match r.efficiency {
        None => "–".into(),
        Some(x) if r.above_physical_bound() => format!(
            "{:.0}%: over the physical 100%, so not a real gain (the speed-up is {})",
            x * 100.0,
            r.speedup_verdict
                .as_ref()
                .map_or("not compared".into(), |v| v.text())
        ),
        Some(x) => format!("{:.0}%", x * 100.0),
    }
}

fn cpu_table(out: &mut Section, s: &ScenarioReport) {
    if s.cpu_rows.is_empty() {
        return;
    }
    let base = s.baseline.as_deref().unwrap_or("the baseline");
    // The model's own costs, where a model reports them (subinterpreters).
    let costs = s
        .cpu_rows
        .iter()
        .any(|r| r.worker_start_ms.is_some() || r.call_overhead_us.is_some());
    let mut head = vec![
        "variant".to_string(),
        "python".into(),
        "params".into(),
        "workers".into(),
        "CPU ms per op".into(),
        format!("speed-up vs {base}"),
        "parallel efficiency".into(),
    ];
    if costs {
        head.extend(["worker set-up ms".into(), "call round trip µs".into()]);
    }
    let mut t = Table::new(head);
    let opt = |v: Option<f64>| v.map_or_else(|| "–".into(), num);
    for r in &s.cpu_rows {
        let mut row = vec![
            r.cell.variant.clone(),
            r.cell.python.clone(),
            params_text(&r.cell.params, &s.varying_params),
            r.workers.to_string(),
            num(r.cpu_s_per_op * 1000.0),
            r.speedup
                .map(|x| format!("{}×", num(x)))
                .unwrap_or_else(|| "–".into()),
            efficiency_text(r),
        ];
        if costs {
            row.extend([opt(r.worker_start_ms), opt(r.call_overhead_us)]);
        }
        t.row(row);
    }
    out.para(format!("CPU cost and parallel efficiency: *CPU ms per op* is the worker tree's CPU time per operation (median over clean runs); *parallel efficiency* is the speed-up over {base} divided by the workers that can run at once (the workers, at most this machine's {} cores). Pure-Python work holds the GIL, so threads and asyncio cannot beat 1×; processes and subinterpreters (a GIL each) cannot beat the cores.", s.cores));
    if costs {
        out.para("*Worker set-up ms* is how long making one worker ready took (a subinterpreter: created, its imports and the scenario's set-up), outside the timed run; *call round trip µs* is a call that does nothing sent to a worker and its result back, the cost each operation pays on top of its work.".to_string());
    }
    out.table(t);
}

/// One section per scenario. A note that explains a column or a bound is the same for every
/// scenario, so it is written once, under the first table that needs it.
pub fn sections(scenarios: &[ScenarioReport]) -> Vec<Section> {
    let mut noted = std::collections::BTreeSet::new();
    scenarios.iter().map(|s| section(s, &mut noted)).collect()
}

/// The section of one scenario, with the notes not yet in `noted`.
fn section(s: &ScenarioReport, noted: &mut std::collections::BTreeSet<String>) -> Section {
    let mut note = |out: &mut Section, text: String| {
        if noted.insert(text.clone()) {
            out.para(text);
        }
    };
    let mut out = Section::new(s.name.clone(), Some(&s.name));
    if let Some(info) = s.info {
        if !info.question.is_empty() {
            out.para(format!("*Question:* {}", info.question));
        }
    }
    if !s.constant_params.is_empty() {
        out.para(format!(
            "Parameters: {}",
            params_text(&s.cells[0].params, &s.constant_params)
        ));
    }
    out.table(main_table(s));
    if s.rows.iter().any(|r| r.interference.is_some()) {
        note(&mut out, "*Foreign CPU*: CPU time used on the machine by other programs (not the worker, the lab's services or the driver) while a run was timed, in CPU seconds; median over the clean runs (max over all). A run over the limit (more than the run's `method.interference.max_foreign_cores` in cores' worth, and more than its floor, `method.interference.floor_s`) is *contaminated*: kept in results.json, repeated in its round and left out of the numbers; a cell with a round that never ran clean is *inconclusive* and decides nothing. *Probe*: the fastest and slowest machine-speed probe around the cell's runs (a fixed work timed before and after each run; the run's warnings say when the machine's speed moved).".into());
    }
    if s.latency_kinds.contains("service") {
        note(&mut out, "Latency is per operation, closed loop, from the moment each operation was actually sent (service time), pooled over rounds.".into());
    }
    if s.latency_kinds.contains("open-loop-corrected") {
        note(&mut out, "Open-loop cells (`rate_per_s` > 0): latency is from each request's intended start on a fixed schedule (corrected: waiting behind slow requests included), pooled over rounds; the rate sweep below also gives it from the actual send.".into());
    }
    cpu_table(&mut out, s);
    memory_per_unit(&mut out, s);
    latency_sets(&mut out, s);
    correctness(&mut out, s);
    if let Some(cores) = s.process_tree_cores {
        note(&mut out, format!("This machine has {cores} cores: a process pool can be at most about {cores}× faster than one process on CPU-bound work."));
    }
    out
}
