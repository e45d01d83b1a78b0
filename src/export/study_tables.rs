//! Extra Markdown tables some scenarios need beside the main one: memory per unit, a second
//! latency set (queueing included), correctness rows, and the core count beside speed-ups.

use std::fmt::Write;

use super::markdown::num;
use crate::results::{Cell, Environment};

/// Appends whatever extra tables the scenario's cells call for.
pub fn append(out: &mut String, cells: &[&Cell], env: &Environment) {
    per_unit_memory(out, cells);
    latency_sets(out, cells);
    correctness_rows(out, cells);
    if cells
        .iter()
        .any(|c| c.variant == "multiprocessing" || c.variant == "processes")
    {
        let _ = writeln!(
            out,
            "This machine has {} cores: a process pool can be at most about {}× faster than one process on CPU-bound work.\n",
            env.cores, env.cores
        );
    }
}

/// Peak RSS delta per unit for cells with a `units` parameter.
fn per_unit_memory(out: &mut String, cells: &[&Cell]) {
    let rows: Vec<(&Cell, u64, f64)> = cells
        .iter()
        .filter_map(|c| {
            let units = c.params.get("units")?.as_u64()?;
            let s = c.summary.as_ref()?;
            Some((*c, units, s.peak_rss_delta_mib.median))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "Memory per unit (peak over the process's own baseline at *ready*: RSS high-water mark for one process, PSS summed over the process tree, sampled every 20 ms, where a variant starts processes; median over rounds):\n");
    let _ = writeln!(out, "| units | variant | python | peak RSS Δ MiB (min–max) | per unit KiB |\n|---|---|---|---|---|");
    for (c, units, median) in rows {
        let s = &c.summary.as_ref().expect("filtered").peak_rss_delta_mib;
        let _ = writeln!(
            out,
            "| {units} | {} | {} | {} ({}–{}) | {} |",
            c.variant,
            c.python,
            num(median),
            num(s.min),
            num(s.max),
            num(median * 1024.0 / units as f64)
        );
    }
    let _ = writeln!(out);
}

/// Service time beside the other recorded latency sets (e.g. from the batch start).
fn latency_sets(out: &mut String, cells: &[&Cell]) {
    let with_sets: Vec<&&Cell> = cells
        .iter()
        .filter(|c| {
            c.summary
                .as_ref()
                .is_some_and(|s| !s.latency_sets_ms.is_empty())
        })
        .collect();
    if with_sets.is_empty() {
        return;
    }
    let mut names: Vec<&String> = with_sets
        .iter()
        .flat_map(|c| c.summary.as_ref().expect("filtered").latency_sets_ms.keys())
        .collect();
    names.sort();
    names.dedup();
    let _ = write!(
        out,
        "| variant | setting | service p50 / p95 / p99 / max ms |"
    );
    for n in &names {
        let _ = write!(out, " {n} p50 / p95 / p99 / max ms |");
    }
    let _ = writeln!(out, "\n|---|---|---|{}", "---|".repeat(names.len()));
    let fmt = |l: &crate::results::LatencySummary| {
        format!(
            "{} / {} / {} / {}",
            num(l.p50),
            num(l.p95),
            num(l.p99),
            num(l.max)
        )
    };
    for c in with_sets {
        let s = c.summary.as_ref().expect("filtered");
        let service = s.latency_ms.as_ref().map(fmt).unwrap_or_else(|| "–".into());
        let _ = write!(
            out,
            "| {} | {} | {service} |",
            c.variant,
            if c.group.is_empty() { "–" } else { &c.group }
        );
        for n in &names {
            let _ = write!(
                out,
                " {} |",
                s.latency_sets_ms
                    .get(*n)
                    .map(fmt)
                    .unwrap_or_else(|| "–".into())
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "\n*service*: from the moment each request was actually sent. *from_batch*: from the moment the whole batch was asked for, so it includes waiting for a worker or a connection — a p50 that counts queueing as latency.\n"
    );
}

/// Expected-versus-observed rows of a correctness study (`extra.rows` of the last run).
fn correctness_rows(out: &mut String, cells: &[&Cell]) {
    for c in cells {
        let Some(rows) = c
            .runs
            .last()
            .and_then(|r| r.extra.get("rows"))
            .and_then(|v| v.as_array())
        else {
            continue;
        };
        let _ = writeln!(
            out,
            "Correctness rows ({} on Python {}):\n",
            c.variant, c.python
        );
        let _ = writeln!(
            out,
            "| case | expected | observed | matches |\n|---|---|---|---|"
        );
        let cell = |v: &serde_json::Value, k: &str| {
            let t = v
                .get(k)
                .map(|x| {
                    x.as_str()
                        .map(String::from)
                        .unwrap_or_else(|| x.to_string())
                })
                .unwrap_or_default();
            t.replace('|', "\\|").replace('\n', " ")
        };
        for r in rows {
            let ok = r.get("ok").and_then(|v| v.as_bool()).unwrap_or(false);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                cell(r, "case"),
                cell(r, "expected"),
                cell(r, "observed"),
                if ok { "yes" } else { "**NO**" }
            );
        }
        let _ = writeln!(out);
    }
}
