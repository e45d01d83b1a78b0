//! The report as one [`Doc`]: built once from the analysis model, rendered by `summary.md`,
//! `report.html` (and anything else that shows the report) with their own syntax only.

use super::markup::{Block, Doc, Section};
use super::{
    answer_tables, decision_section, fanout_tables, held_tables, network_tables, role_tables,
    runtime_tables, scenario_tables, service_tables, slow_tables, sweep_tables,
};
use crate::analysis::Report;

/// The method paragraph under the title.
fn intro(r: &Report) -> Vec<Block> {
    let m = &r.results.method;
    let mut out = vec![Block::Para(format!(
        "{} rounds after {} warm-up(s), cells interleaved {}, each run a fresh process; medians with min–max over rounds. A ratio is the geometric mean of the per-round ratios with a 95% t interval, each round a pair; significance by a two-sided paired t test on the per-round log ratios at α = {}, {}.",
        crate::analysis::stopping::rounds_text(m.rounds, &r.results.cells),
        m.warmups,
        match m.order_seed {
            Some(seed) => format!("in a random order drawn for each round (`--order-seed {seed}`)"),
            None => "in rotating order".to_string(),
        },
        r.rule.alpha,
        r.rule.band_text("the interval")
    )), Block::Para(r.rule.verdict_note())];
    out.extend(super::resolution_section::blocks(r));
    for (name, p) in &m.scenario_plans {
        out.push(Block::Para(format!(
            "Scenario {name}: {} rounds after {} warm-up(s) (its catalogue default).",
            p.rounds, p.warmups
        )));
    }
    if let Some(rule) = &m.adaptive {
        let how = match crate::analysis::stopping::counts(&r.results.cells) {
            Some(c) => format!(
                " {} cell(s) stopped with every comparison settled, {} reached the maximum with one still open{}; {:.1} rounds per cell on average.",
                c.settled,
                c.at_max,
                match m.budget_s {
                    Some(b) => format!(
                        ", {} stopped by the time budget ({}) with one still open (results.json names the open comparisons)",
                        c.by_budget,
                        crate::format::duration_s(b)
                    ),
                    None => String::new(),
                },
                c.mean_rounds
            ),
            None => String::new(),
        };
        out.push(Block::Para(format!(
            "{rule}. A cell stops once each comparison it takes part in (against its baseline, its scenario's contrasts, the decision table's winner against the runner-up) is significant at its look's share of α, equal within the noise band, or inconclusive.{how}"
        )));
    }
    if let Some(p) = &m.placement {
        out.push(Block::Para(placement_text(p)));
    } else if !m.cpus.is_empty() {
        out.push(Block::Para(format!(
            "Workers pinned to CPU(s) {}.",
            cpu_list(&m.cpus)
        )));
    }
    if let Some(h) = &m.hosts {
        out.push(Block::Para(hosts_text(h)));
    }
    for s in &r.results.skipped {
        out.push(Block::Para(format!(
            "Scenario {} did not run: it needs {}, which could not be had: {}",
            s.scenario, s.service, s.reason
        )));
    }
    for p in &r.results.skipped_pythons {
        out.push(Block::Para(format!(
            "Python {} did not run: {}",
            p.python, p.reason
        )));
    }
    if let Some(w) = &m.wake_hold {
        out.push(Block::Para(format!("CPU wake-up latency request: {w}.")));
    }
    if let Some(p) = &r.machine_speed {
        out.push(Block::Para(format!(
            "Machine-speed probe (a fixed work timed before and after every run): {:.2} ms median, 5th–95th percentile {:.2}–{:.2} ({:.0}% apart) over {} probes; {}.",
            p.median_ms,
            p.p5_ms,
            p.p95_ms,
            p.spread() * 100.0,
            p.probes,
            if p.unsteady() {
                "the machine's speed moved (see the warnings)"
            } else {
                "the probe held its speed between runs, which does not show that the worker's own CPU did during them: the cells' spread shows that"
            }
        )));
    }
    if let Some(t) = &r.time_account {
        out.push(Block::Para(time_text(t, m.budget_s)));
    }
    out
}

/// Where the run's time went, from the runs' timelines, and whether the runs alone outlasted
/// the time budget (whose clock starts earlier, with the services, so a shorter span does not
/// show that the budget held).
fn time_text(t: &crate::analysis::time_account::TimeAccount, budget_s: Option<f64>) -> String {
    let part = |s: f64| {
        format!(
            "{} ({:.0}%)",
            crate::format::duration_s(s),
            100.0 * s / t.span_s.max(1e-9)
        )
    };
    let over = match budget_s {
        Some(b) if t.span_s > b => format!(
            " The runs alone outlasted the time budget ({}) by {}: every cell runs its minimum rounds whatever the budget says, since the budget stops only the rounds past them (`--dry-run` estimates the minimum from the last run).",
            crate::format::duration_s(b),
            crate::format::duration_s(t.span_s - b)
        ),
        _ => String::new(),
    };
    format!(
        "Where the time went: {} runs and {} warm-up runs over {} from the first start to the last exit. Of the measured runs: timed {}, workers' start-up, imports and set-up {}, the driver's readings around the timed region, the result and the exit {}; the warm-up runs {}; between runs (saving results.json, the stopping rule, the reference clients) {}.{over}",
        t.runs,
        t.warmups,
        crate::format::duration_s(t.span_s),
        part(t.timed_s),
        part(t.startup_s),
        part(t.around_s),
        part(t.warmup_s),
        part(t.between_s)
    )
}

/// Where each role ran and the round trips between them (`--hosts containers`).
fn hosts_text(h: &crate::results::HostsRecord) -> String {
    let roles: Vec<String> = h
        .roles
        .iter()
        .map(|r| {
            format!(
                "{} at {} on CPU(s) {}",
                r.role,
                r.address,
                cpu_list(&r.cpus)
            )
        })
        .collect();
    let trips: Vec<String> = h
        .round_trips
        .iter()
        .map(|t| {
            format!(
                "{} → {} {:.3} ms median ({:.3} ms p90, {}, {} round trips)",
                t.from, t.to, t.median_ms, t.p90_ms, t.probe, t.samples
            )
        })
        .collect();
    format!(
        "Hosts: each role in its own container on the private network {} of the Docker engine at {}, from image {}: {}. Every number includes the distance between them, measured before the first run: {}.",
        h.network,
        h.engine,
        h.roles.first().map_or("", |r| r.image.as_str()),
        roles.join("; "),
        trips.join("; ")
    )
}

/// `0,1`, or "any CPU" for an empty (unpinned) set.
fn cpu_list(cpus: &[usize]) -> String {
    if cpus.is_empty() {
        return "any CPU".into();
    }
    let c: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
    c.join(",")
}

/// One sentence saying where the services and the workers ran.
fn placement_text(p: &crate::results::PlacementRecord) -> String {
    let mut s = if p.effective == crate::results::PlacementPolicy::Unpinned
        && p.service_worker_cpus.is_empty()
    {
        format!("Placement {}: nothing pinned.", p.effective)
    } else {
        format!(
            "Placement {}: the driver and its services on CPU(s) {}, workers of scenarios with a service on {}, other workers on {}.",
            p.effective,
            cpu_list(&p.service_cpus),
            cpu_list(&p.service_worker_cpus),
            cpu_list(&p.other_worker_cpus)
        )
    };
    if p.effective != p.policy {
        s.push_str(&format!(
            " (`{}` was asked for; one CPU leaves nothing to split.)",
            p.policy
        ));
    }
    if let Some(n) = &p.not_placed {
        s.push_str(&format!(" Not placed: {n}."));
    }
    s
}

/// The environment the numbers come from.
fn environment(r: &Report) -> Section {
    let e = &r.results.env;
    let la = |l: [f64; 3]| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]);
    let mut items = vec![
        format!(
            "CPU: {} ({} cores), governor: {}",
            e.cpu_model, e.cores, e.governor
        ),
        format!("Memory: {} MiB; kernel {}", e.memory_total_mib, e.kernel),
        format!(
            "Load average before: {}; after: {}",
            la(e.load_avg_before),
            e.load_avg_after.map(la).unwrap_or_else(|| "–".into())
        ),
    ];
    for p in &e.pythons {
        let pk: Vec<String> = p.packages.iter().map(|(k, v)| format!("{k} {v}")).collect();
        // A free-threaded build says whether its workers really ran without the GIL (an
        // extension module without free-threading support turns it back on).
        let gil = match (p.gil_disabled_build, p.gil_enabled) {
            (Some(true), Some(false)) => ", free-threaded, GIL off",
            (Some(true), _) => ", free-threaded, GIL ON",
            _ => "",
        };
        items.push(format!(
            "Python {} ({}, {}{gil}): {}",
            p.version,
            p.implementation,
            p.compiler,
            pk.join(", ")
        ));
    }
    if let Some(pg) = &e.postgres {
        items.push(format!("PostgreSQL: {pg}"));
    }
    if let Some(m) = &e.mock_http {
        items.push(format!("Mock HTTP server: {m}"));
    }
    items.push(format!(
        "{} at commit {}; started {}",
        r.results.generated_by, e.git_commit, r.results.started_at
    ));
    if let Some(inv) = &r.results.invocation {
        items.push(format!(
            "Command line: {} (in {}); `asynclab rerun` runs it again",
            inv.argv.join(" "),
            inv.cwd
        ));
    }
    let mut s = Section::new("Environment", None);
    s.list(items);
    s
}

/// The study's thresholds, each against what it read; None without thresholds.
fn thresholds_section(r: &Report) -> Option<Section> {
    if r.thresholds.is_empty() {
        return None;
    }
    let failed = r.thresholds.iter().filter(|c| !c.passed).count();
    let mut s = Section::new("Thresholds", None);
    s.para(format!(
        "The study's thresholds: {failed} of {} check(s) failed{}.",
        r.thresholds.len(),
        if failed > 0 {
            ", so the run exited 1"
        } else {
            ""
        }
    ));
    let mut t = super::markup::Table::new(["scenario", "threshold", "read at", "value", "held"]);
    for c in &r.thresholds {
        t.row([
            super::markup::Cell::from(c.scenario.clone()),
            super::markup::Cell::from(format!("`{}`", c.threshold)),
            super::markup::Cell::from(c.at.clone()),
            super::markup::Cell::from(c.value.map_or("–".into(), crate::format::num)),
            super::markup::Cell::from(if c.passed { "yes" } else { "**no**" }),
        ]);
    }
    s.table(t);
    Some(s)
}

/// The whole report: the answers first (the decision table, the service questions), then each
/// scenario's detail, the warnings and the environment.
pub fn build(r: &Report) -> Doc {
    let mut sections: Vec<Section> = answer_tables::answers_section(r).into_iter().collect();
    sections.extend(answer_tables::framework_section(r));
    sections.extend(decision_section::section(&r.decisions));
    sections.extend(service_tables::questions_section(&r.service_answers));
    sections.extend(thresholds_section(r));
    sections.extend(scenario_tables::sections(&r.scenarios));
    sections.extend(
        r.ops
            .iter()
            .map(|o| runtime_tables::ops_section(o, r.results)),
    );
    sections.extend(r.loops.iter().map(runtime_tables::loop_section));
    sections.extend(service_tables::section(&r.services));
    sections.extend(held_tables::section(&r.held));
    sections.extend(fanout_tables::section(&r.fanout));
    sections.extend(slow_tables::section(&r.slow_consumers));
    sections.extend(service_tables::crossover_sections(&r.service_crossovers));
    sections.extend(sweep_tables::sections(&r.sweeps));
    sections.extend(sweep_tables::like_for_like_sections(&r.like_for_like));
    sections.extend(network_tables::sections(&r.network));
    sections.extend(network_tables::ceiling_section(&r.ceilings));
    sections.extend(role_tables::section(&r.roles));
    if !r.warnings.is_empty() {
        let mut s = Section::new("Warnings", None);
        s.blocks.push(Block::Folded(
            r.warnings
                .iter()
                .map(|g| {
                    let line = match g.items.len() {
                        0 => g.headline.clone(),
                        n => format!(
                            "{} — {n} sample{}, listed in report.html",
                            g.headline,
                            if n == 1 { "" } else { "s" }
                        ),
                    };
                    (line, g.items.clone())
                })
                .collect(),
        ));
        sections.push(s);
    }
    sections.push(environment(r));
    Doc {
        title: "asynclab results".into(),
        intro: intro(r),
        sections,
    }
}

#[cfg(test)]
mod tests {
    use super::time_text;
    use crate::analysis::time_account::TimeAccount;

    fn account(span_s: f64) -> TimeAccount {
        TimeAccount {
            runs: 10,
            warmups: 2,
            span_s,
            timed_s: span_s / 2.0,
            startup_s: span_s / 4.0,
            around_s: span_s / 8.0,
            warmup_s: span_s / 16.0,
            between_s: span_s / 16.0,
        }
    }

    #[test]
    fn runs_that_outlast_the_budget_say_by_how_much() {
        let text = time_text(&account(666.0), Some(480.0));
        assert!(
            text.contains("outlasted the time budget (8.0 min) by 3.1 min"),
            "{text}"
        );
    }

    #[test]
    fn runs_within_the_budget_or_without_one_say_nothing_of_it() {
        assert!(!time_text(&account(470.0), Some(480.0)).contains("budget"));
        assert!(!time_text(&account(666.0), None).contains("budget"));
    }
}
