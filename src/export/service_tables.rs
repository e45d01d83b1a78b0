//! The services-under-test sections: per cell, the server's workers and database connections,
//! its CPU per request and memory, and the load generator's own CPU share; sync against async
//! along the round trip; and the decision framework's service questions, answered per setting.

use super::markup::{Cell, Section, Table};
use super::scenario_tables::ratio_cell;
use crate::analysis::service_questions::{Question, ServiceAnswer, HELD_MANY, HIGH_CONCURRENCY};
use crate::analysis::services::{finding, KindCrossover, ServiceRow, CLIENT_BUSY_SHARE};
use crate::format::{num, rate};

/// The section; None when no run drove a service under test.
pub fn section(rows: &[ServiceRow]) -> Option<Section> {
    let first = rows.first()?;
    let mut out = Section::new(
        "Services under test: cost per request",
        Some(&first.scenario),
    );
    out.para(format!("Each server ran as its own process tree on the CPUs the placement gave it, started afresh for every run and driven by the lab's load generator (src/loadgen) over keep-alive connections. Medians over each cell's measured runs: server CPU per request attempted (its whole tree), the peak of the tree's summed RSS and of its largest process. *generator CPU* is the load generator's largest share of one CPU in any run; above {:.0}% it may have limited what it measured. *connects/request* near 1 means the server closed the connection after every answer (gunicorn's sync workers do), so each request paid a TCP handshake.", CLIENT_BUSY_SHARE * 100.0));
    if rows.iter().any(|r| r.room) {
        out.para("In a WebSocket room a request is a message sent into the room: its CPU is per message sent (each one broadcast to every client), and its clients connect once each, so connects/request does not apply (–).");
    }
    let mut t = Table::new([
        "variant",
        "python",
        "setting",
        "kind",
        "workers × threads",
        "db conns",
        "CPU ms/request",
        "tree RSS MiB",
        "largest process MiB",
        "generator CPU",
        "connects/request",
    ]);
    for r in rows {
        let busy = if r.client_cpu_share > CLIENT_BUSY_SHARE {
            " (busy)"
        } else {
            ""
        };
        t.row([
            r.variant.clone(),
            r.python.clone(),
            super::decision_section::setting_text(&r.setting).into(),
            r.kind.clone(),
            format!("{} × {}", r.workers, r.threads),
            r.db_connections.to_string(),
            if r.room {
                format!("{} per message", num(r.cpu_ms_per_request))
            } else {
                num(r.cpu_ms_per_request)
            },
            num(r.rss_mib),
            num(r.largest_process_mib),
            format!("{:.0}%{busy}", r.client_cpu_share * 100.0),
            if r.room {
                "–".into()
            } else {
                format!("{:.2}", r.connects_per_request)
            },
        ]);
    }
    out.table(t);
    Some(out)
}

/// One section per setting: the best sync server against the best async one at each value of
/// the axis, and the crossover finding.
pub fn crossover_sections(xs: &[KindCrossover]) -> Vec<Section> {
    xs.iter()
        .map(|x| {
            let at = if x.setting.is_empty() {
                String::new()
            } else {
                format!(", {}", x.setting)
            };
            let mut out = Section::new(
                format!("{}: sync against async servers (Python {}{at})", x.scenario, x.python),
                Some(&x.scenario),
            );
            out.para(format!("**{}**", finding(x)));
            out.para("At each setting, the sync server and the async server with the highest median throughput (closed loop: what each serves with every connection busy, its capacity), compared round by round: async over sync, with the 95% interval and the verdict of every other table.");
            let axis = if x.axis.is_empty() { "setting" } else { x.axis.as_str() };
            let mut t = Table::new([axis, "best sync", "best async", "async / sync (95% CI)"]);
            for p in &x.points {
                let ratio = match &p.async_vs_sync {
                    Some(c) => ratio_cell(c),
                    None => "fewer than two rounds".into(),
                };
                t.row([
                    Cell::from(if x.axis.is_empty() { "–".to_string() } else { rate(p.at) }),
                    p.best_sync.clone().into(),
                    p.best_async.clone().into(),
                    ratio,
                ]);
            }
            out.table(t);
            out
        })
        .collect()
}

/// The async advantage in words: its ratio and verdict, or why there is none.
pub fn advantage_text(a: &ServiceAnswer) -> String {
    match a.only_kind {
        Some(kind) => format!("– (only {kind} servers qualified)"),
        None => super::scenario_tables::outcome(a.async_advantage.as_ref()),
    }
}

/// The answer's kind in words: the significant leader, or why neither leads.
pub fn answer_text(a: &ServiceAnswer) -> String {
    match (a.leader(), &a.async_advantage) {
        (Some(kind), _) => format!("**{kind}**"),
        (None, Some(c)) => format!("neither ({})", c.verdict.text()),
        (None, None) => "neither (fewer than two paired rounds)".into(),
    }
}

/// The section answering the framework's questions about services; None without answers.
pub fn questions_section(answers: &[ServiceAnswer]) -> Option<Section> {
    if answers.is_empty() {
        return None;
    }
    let mut out = Section::new("Service questions", None);
    let held = answers
        .iter()
        .any(|a| a.question == Question::HeldConnections);
    let held_text = if held {
        format!(" *High-concurrency I/O* also from held connections: settings that held {HELD_MANY} or more idle keep-alive connections, by server RSS per held connection among the servers that held them all (lower is better).")
    } else {
        String::new()
    };
    let realtime = answers.iter().any(|a| a.question == Question::Realtime);
    let realtime_text = if realtime {
        " *WebSocket / real-time*: each room size of a fan-out scenario, by the p99 delivery latency of a broadcast among the servers whose room kept up (the fan-out table's rule); where only one kind's servers kept up, that kind answers with no ratio, and where none did, that size has no row."
    } else {
        ""
    };
    let lower = if held {
        "lower p99 or memory"
    } else {
        "lower p99"
    };
    out.para(format!("The decision framework's rows about services, answered from this run's services under test. *High-concurrency I/O*: closed-loop settings with {HIGH_CONCURRENCY} or more connections on `/db` or `/upstream`, by throughput. *Strict p99*: by each round's p99; where open-loop sweeps ran, the corrected p99 at the slowest variant's knee (a load every server carried), else closed-loop p99, each server at its own throughput. *Localhost database*: closed-loop `/db` settings with no injected round trip, by throughput.{held_text}{realtime_text} At each setting the best sync server meets the best async one on that figure, round by round; *async advantage* above 1 means async is better (higher throughput, or {lower}), with the 95% interval and the verdict of every other table. A kind is named only when its lead is significant. Each row comes from two cells of `results.json`, the ones its scenario, setting, interpreter and servers name."));
    let mut t = Table::new([
        "question",
        "scenario",
        "setting",
        "python",
        "compared",
        "best sync",
        "best async",
        "async advantage (95% CI)",
        "answer",
    ]);
    for a in answers {
        t.row([
            Cell::from(a.question.text()),
            a.scenario.clone().into(),
            super::decision_section::setting_text(&a.setting).into(),
            a.python.clone().into(),
            a.metric.clone().into(),
            a.best_sync.clone().into(),
            a.best_async.clone().into(),
            match &a.async_advantage {
                Some(c) => ratio_cell(c),
                None => advantage_text(a).into(),
            },
            answer_text(a).into(),
        ]);
    }
    out.table(t);
    Some(out)
}
