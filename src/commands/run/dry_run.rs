//! `asynclab run --dry-run`: the plan printed, nothing started — each scenario's cells
//! (variant, python, parameters), rounds and warm-ups, the runs in total, an estimate of the
//! time from an earlier run of the same cells when there is one, and the resolved study.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::plan::RunPlan;
use super::resolve;
use super::RunArgs;
use crate::results::Results;

/// The earlier results the estimate comes from: `latest` beside the results folder.
fn earlier_results(args: &RunArgs) -> PathBuf {
    let parent = args
        .out
        .as_deref()
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("results"));
    parent.join("latest")
}

/// Median time of one run, by cell id, from an earlier results document: from the worker's
/// start to its exit where the run recorded its timeline, else its timed region alone.
fn median_run_s(doc: &Results) -> BTreeMap<String, f64> {
    doc.cells
        .iter()
        .filter_map(|c| {
            let mut w: Vec<f64> = c
                .runs
                .iter()
                .map(|r| r.timeline.map_or(r.wall_s, |t| t.exited_s - t.spawned_s))
                .filter(|w| w.is_finite())
                .collect();
            if w.is_empty() {
                return None;
            }
            w.sort_by(f64::total_cmp);
            Some((c.id.clone(), w[w.len() / 2]))
        })
        .collect()
}

/// Prints the plan to stdout.
pub fn print(args: &RunArgs, plan: &RunPlan) {
    let source = earlier_results(args);
    let known = Results::load(&source)
        .map(|d| median_run_s(&d))
        .unwrap_or_default();
    println!("asynclab: dry run: nothing started, no results folder made");
    let (mut total_runs, mut total_s, mut unknown_runs) = (0, 0.0, 0);
    let mut minimum_s = 0.0;
    for s in &plan.scenarios {
        let runs = s.plan.runs(s.specs.len());
        total_runs += runs;
        let rounds = if s.plan.adaptive() {
            format!(
                "{} to {} rounds, each cell stopping once settled",
                s.plan.rounds, s.plan.max_rounds
            )
        } else {
            format!("{} rounds", s.plan.rounds)
        };
        let at_most = if s.plan.adaptive() { "at most " } else { "" };
        println!(
            "\nscenario {}: {} cells × ({} warm-up + {rounds}) = {at_most}{runs} runs",
            s.scenario.name,
            s.specs.len(),
            s.plan.warmups,
        );
        let (mut s_est, mut s_unknown) = (0.0, 0);
        for c in &s.specs {
            let params: Vec<String> = c.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let each = known.get(&c.id);
            let per_cell = s.plan.warmups + s.plan.max_rounds;
            match each {
                Some(w) => {
                    s_est += w * per_cell as f64;
                    minimum_s += w * (s.plan.warmups + s.plan.rounds) as f64;
                }
                None => s_unknown += per_cell,
            }
            let est = each.map_or("unknown".to_string(), |w| format!("~{w:.2} s a run"));
            let variant = match c.twin_of {
                Some(_) => format!("{} (A/A twin)", c.variant),
                None => c.variant.clone(),
            };
            println!(
                "  {:<20} python {:<8} {}  ({est})",
                variant,
                c.python.version,
                params.join(","),
            );
        }
        let est = if s_unknown == runs {
            "unknown".to_string()
        } else if s_unknown > 0 {
            format!(
                "at least {} ({s_unknown} runs unknown)",
                crate::format::duration_s(s_est)
            )
        } else {
            format!("~{}", crate::format::duration_s(s_est))
        };
        println!("  time: {est}");
        total_s += s_est;
        unknown_runs += s_unknown;
    }
    let basis = format!(
        "each cell's median run in {}, from the worker's start to its exit (the timed region alone for runs from before timelines were recorded), {} of {total_runs} runs known; the time between runs and repeats not included",
        source.display(),
        total_runs - unknown_runs
    );
    let est = if unknown_runs == total_runs {
        format!(
            "unknown (no earlier run of these cells in {})",
            source.display()
        )
    } else if unknown_runs > 0 {
        format!("at least {} ({basis})", crate::format::duration_s(total_s))
    } else {
        format!("~{} ({basis})", crate::format::duration_s(total_s))
    };
    println!("\ntotal: {total_runs} runs, before repeats of contaminated runs; time: {est}");
    if let Some(b) = args.budget {
        let b = b.0.as_secs_f64();
        let fits = if unknown_runs == total_runs {
            "the minimum rounds' time is unknown".to_string()
        } else if minimum_s > b {
            format!(
                "the minimum rounds alone take {}{}: they run anyway, and no round past them",
                if unknown_runs > 0 { "at least " } else { "~" },
                crate::format::duration_s(minimum_s)
            )
        } else {
            format!(
                "the minimum rounds take {}{}, leaving the rest for rounds past them where comparisons are open",
                if unknown_runs > 0 { "at least " } else { "~" },
                crate::format::duration_s(minimum_s)
            )
        };
        println!(
            "budget: {} from the services' start; {fits}",
            crate::format::duration_s(b)
        );
    }
    if args.hosts == Some(crate::hosts::Hosts::Containers) {
        println!("hosts: {}", super::hosts::describe());
    }
    if let Some(engine) = &args.database_host {
        println!("hosts: the database role in a container on the Docker engine at {engine}");
    }
    println!(
        "\nthe resolved study (save it as a file and pass --study to run the same):\n\n{}",
        resolve::resolved(args, plan).to_toml()
    );
}
