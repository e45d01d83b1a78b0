//! The decision framework's questions about services, answered from a run's services under
//! test: per setting, the best sync server against the best async one on the figure the
//! question is about, judged by the one comparison rule, with the cells it came from.
//!
//! * **High-concurrency I/O (100+ connections)**: closed-loop settings with `connections` ≥ 100
//!   on an I/O endpoint (`db`, `upstream`), by throughput.
//! * **Localhost database**: closed-loop settings on `/db` with no injected round trip
//!   (`rtt_ms` 0 or absent), by throughput.
//! * **Strict p99**: by each round's p99. Where open-loop sweeps exist, corrected p99 at the
//!   slowest variant's knee (a load every variant carried, [`super::like_for_like`]); else
//!   closed-loop p99, each server at its own throughput, said so in the metric.
//! * **High concurrency (1,000+ held connections)**: settings that held at least
//!   [`HELD_MANY`] idle keep-alive connections, by the server's RSS per held connection,
//!   among the servers that held every one of them to the end of every run.
//! * **WebSocket / real-time**: each room size of a fan-out scenario, by the p99 delivery
//!   latency of a broadcast, among the servers whose room kept up
//!   ([`super::fanout::FanoutRow::keeps_up`]).
//!
//! Where a question compares only the servers that qualified (held every connection, kept
//! up), and only one kind's servers did, that kind answers it, with no ratio.

use serde_json::Value;

use super::comparison::{self, Comparison, Rule};
use super::fanout;
use super::held::{self, run_p99};
use super::like_for_like::LikeForLike;
use super::measured::MeasuredRuns;
use super::resolution::{Floors, RunRule};
use super::services::server_kind;
use crate::catalogue::FrameworkRow;
use crate::results::{Cell, CellStatus, RunRecord};
use crate::stats;

/// Fewest connections that count as high concurrency.
pub const HIGH_CONCURRENCY: f64 = 100.0;
/// Fewest held idle connections that count as many.
pub const HELD_MANY: u64 = 1000;

/// A question of the decision framework about services.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// Many concurrent connections waiting on I/O.
    HighConcurrencyIo,
    /// A tail-latency requirement.
    StrictP99,
    /// A database on the same host (no network round trip).
    LocalhostDatabase,
    /// Many idle keep-alive connections held at once.
    HeldConnections,
    /// Broadcasts to many WebSocket clients at once.
    Realtime,
}

impl Question {
    /// The row of the decision framework it answers.
    pub fn row(self) -> FrameworkRow {
        match self {
            Question::HighConcurrencyIo => FrameworkRow::HighConcurrencyIo,
            Question::StrictP99 => FrameworkRow::StrictP99,
            Question::LocalhostDatabase => FrameworkRow::LocalhostDatabase,
            Question::HeldConnections => FrameworkRow::HighConcurrencyIo,
            Question::Realtime => FrameworkRow::Websocket,
        }
    }

    /// The question as the framework words it.
    pub fn text(self) -> &'static str {
        self.row().text()
    }
}

/// One setting's answer to one question.
#[derive(Debug, Clone)]
pub struct ServiceAnswer {
    /// The question answered.
    pub question: Question,
    /// Scenario name.
    pub scenario: String,
    /// Interpreter version.
    pub python: String,
    /// The cells' matrix setting, or the sweep's parameters.
    pub setting: String,
    /// The best sync server on the figure compared.
    pub best_sync: String,
    /// The best async server on the figure compared.
    pub best_async: String,
    /// The figure compared, with where it was read.
    pub metric: String,
    /// How many times better the async server is (above 1: async better, below: sync), paired
    /// by round, with its verdict; None with fewer than two paired rounds.
    pub async_advantage: Option<Comparison>,
    /// The one kind some server of which qualified for the comparison when no server of the
    /// other did (held connections: only it held them all); it leads with no ratio to show.
    pub only_kind: Option<&'static str>,
}

impl ServiceAnswer {
    /// The kind that leads significantly, or None.
    pub fn leader(&self) -> Option<&'static str> {
        self.only_kind
            .or_else(|| super::services::leading_kind(self.async_advantage.as_ref()))
    }
}

/// Median over a cell's measured runs of a figure.
fn median_of(c: &Cell, figure: fn(&RunRecord) -> f64) -> f64 {
    stats::median(&MeasuredRuns::of(c).values(figure))
}

/// The cell of `kind` with the best median of `figure` (highest, or lowest when `lower`).
fn best<'a>(
    cells: &[&'a Cell],
    kind: &str,
    figure: fn(&RunRecord) -> f64,
    lower: bool,
) -> Option<&'a Cell> {
    cells
        .iter()
        .copied()
        .filter(|c| server_kind(c).as_deref() == Some(kind))
        .max_by(|a, b| {
            let (x, y) = (median_of(a, figure), median_of(b, figure));
            if lower {
                y.total_cmp(&x)
            } else {
                x.total_cmp(&y)
            }
        })
}

fn answer(
    question: Question,
    cells: &[&Cell],
    setting: &str,
    metric: String,
    figure: fn(&RunRecord) -> f64,
    lower_is_better: bool,
    rule: RunRule<'_>,
) -> Option<ServiceAnswer> {
    let s = best(cells, "sync", figure, lower_is_better)?;
    let a = best(cells, "async", figure, lower_is_better)?;
    let rule = rule.at(&a.scenario);
    let async_advantage = if lower_is_better {
        comparison::cells(s, a, figure, rule)
    } else {
        comparison::cells(a, s, figure, rule)
    };
    Some(ServiceAnswer {
        question,
        scenario: a.scenario.clone(),
        python: a.python.clone(),
        setting: setting.to_string(),
        best_sync: s.variant.clone(),
        best_async: a.variant.clone(),
        metric,
        async_advantage,
        only_kind: None,
    })
}

fn param_f64(c: &Cell, key: &str) -> Option<f64> {
    c.params.get(key).and_then(Value::as_f64)
}

fn endpoint(c: &Cell) -> Option<&str> {
    c.params.get("endpoint").and_then(Value::as_str)
}

/// Every answer the run's service cells give, questions in the framework's order.
pub fn answers(
    all: &[&Cell],
    like_for_like: &[LikeForLike],
    rule: Rule,
    floors: &Floors,
) -> Vec<ServiceAnswer> {
    let rule = RunRule { rule, floors };
    let usable: Vec<&Cell> = all
        .iter()
        .copied()
        .filter(|c| {
            c.status == CellStatus::Ok
                && server_kind(c).is_some()
                && c.summary
                    .as_ref()
                    .is_some_and(|s| s.errors == 0 && s.rounds > 0)
        })
        .collect();
    let closed: Vec<&Cell> = usable
        .iter()
        .copied()
        .filter(|c| crate::catalogue::offered_rate(&c.params).is_none())
        .collect();
    let mut settings: Vec<(&str, &str, &str)> = Vec::new();
    for c in &closed {
        let key = (c.scenario.as_str(), c.python.as_str(), c.group.as_str());
        if !settings.contains(&key) {
            settings.push(key);
        }
    }
    let in_setting = |(scenario, python, group): (&str, &str, &str)| -> Vec<&Cell> {
        closed
            .iter()
            .copied()
            .filter(|c| c.scenario == scenario && c.python == python && c.group == group)
            .collect()
    };
    // A throughput question over the closed-loop settings it asks about.
    let by_throughput = |question: Question, asks: &dyn Fn(&Cell) -> bool| -> Vec<ServiceAnswer> {
        settings
            .iter()
            .filter_map(|&key| {
                let cells = in_setting(key);
                let metric = "throughput /s (closed loop)".to_string();
                asks(cells[0])
                    .then(|| {
                        answer(
                            question,
                            &cells,
                            key.2,
                            metric,
                            |r| r.throughput_per_s,
                            false,
                            rule,
                        )
                    })
                    .flatten()
            })
            .collect()
    };
    let mut out = by_throughput(Question::HighConcurrencyIo, &|c| {
        matches!(endpoint(c), Some("db" | "upstream"))
            && param_f64(c, "connections").is_some_and(|n| n >= HIGH_CONCURRENCY)
    });
    let sweep_answers: Vec<ServiceAnswer> = like_for_like
        .iter()
        .filter_map(|l| {
            let (at, points) = l.rows.last()?;
            let cells: Vec<&Cell> = points
                .iter()
                .filter_map(|p| usable.iter().copied().find(|c| c.id == p.cell_id))
                .collect();
            let setting = cells.first().map(|c| {
                c.group
                    .split(' ')
                    .filter(|kv| !kv.starts_with("rate_per_s="))
                    .collect::<Vec<_>>()
                    .join(" ")
            })?;
            answer(
                Question::StrictP99,
                &cells,
                &setting,
                format!(
                    "corrected p99 ms at {}/s offered (the slowest knee, {})",
                    crate::format::rate(*at),
                    l.slowest
                ),
                run_p99,
                true,
                rule,
            )
        })
        .collect();
    if sweep_answers.is_empty() {
        for &key in &settings {
            out.extend(answer(
                Question::StrictP99,
                &in_setting(key),
                key.2,
                "p99 ms, closed loop (each server at its own throughput)".into(),
                run_p99,
                true,
                rule,
            ));
        }
    } else {
        out.extend(sweep_answers);
    }
    out.extend(by_throughput(Question::LocalhostDatabase, &|c| {
        endpoint(c) == Some("db") && param_f64(c, "rtt_ms").unwrap_or(0.0) == 0.0
    }));
    out.extend(held_answers(all, rule));
    out.extend(realtime_answers(all, rule));
    out
}

/// The held-connections question per setting that held [`HELD_MANY`] or more: the servers
/// that held them all, by RSS per held connection (lower is better). A server whose trickle
/// failed still counts: what it held is the answer, its trickle's errors are beside it.
fn held_answers(all: &[&Cell], rule: RunRule<'_>) -> Vec<ServiceAnswer> {
    let many =
        |c: &Cell| crate::catalogue::held_connections(&c.params).is_some_and(|n| n >= HELD_MANY);
    by_setting(all, |c| many(c).then(|| held::rows(&[c]).pop()).flatten())
        .iter()
        .filter_map(|group| {
            let (first, row) = group.first()?;
            let kept: Vec<&Cell> = group
                .iter()
                .filter(|(_, r)| r.held_all())
                .map(|(c, _)| *c)
                .collect();
            let asked = crate::format::rate(row.asked as f64);
            let metric = format!(
                "server RSS per held idle connection, KiB; {} of {} servers held all {asked}",
                kept.len(),
                group.len(),
            );
            among_qualified(
                Question::HeldConnections,
                &kept,
                &first.group,
                metric,
                held::kib_per_connection,
                format!("none held all {asked}"),
                rule,
            )
        })
        .collect()
}

/// The WebSocket question per room size: the servers whose room kept up, by the p99 delivery
/// latency of each run.
fn realtime_answers(all: &[&Cell], rule: RunRule<'_>) -> Vec<ServiceAnswer> {
    by_setting(all, |c| fanout::rows(&[c]).pop())
        .iter()
        .filter_map(|group| {
            let (first, row) = group.first()?;
            let kept: Vec<&Cell> = group
                .iter()
                .filter(|(_, r)| r.keeps_up())
                .map(|(c, _)| *c)
                .collect();
            let metric = format!(
                "p99 delivery latency of a broadcast, ms, from the intended send; {} of {} servers kept up with {} clients (p99 within {} ms, nothing missing)",
                kept.len(),
                group.len(),
                crate::format::rate(row.clients as f64),
                crate::format::num(row.bound_ms),
            );
            among_qualified(
                Question::Realtime,
                &kept,
                &first.group,
                metric,
                fanout::run_delivery_p99,
                "none kept up".into(),
                rule,
            )
        })
        .collect()
}

/// The cells with a server under test that ran to the end, each with its row of `rows_of`
/// (held connections, rooms), grouped by setting in order of first appearance. A server whose
/// timed load had errors still counts: what it held or delivered is the answer.
fn by_setting<'a, R>(
    all: &[&'a Cell],
    rows_of: impl Fn(&Cell) -> Option<R>,
) -> Vec<Vec<(&'a Cell, R)>> {
    let mut groups: Vec<Vec<(&Cell, R)>> = Vec::new();
    for &c in all {
        if c.status != CellStatus::Ok || server_kind(c).is_none() {
            continue;
        }
        let Some(r) = rows_of(c) else { continue };
        let same =
            |o: &Cell| o.scenario == c.scenario && o.python == c.python && o.group == c.group;
        match groups.iter_mut().find(|g| same(g[0].0)) {
            Some(g) => g.push((c, r)),
            None => groups.push(vec![(c, r)]),
        }
    }
    groups
}

/// The answer among the servers that qualified, lower `figure` better: the best sync against
/// the best async, or, where only one kind's servers qualified, that kind with no ratio;
/// `none` names a kind with no server that qualified.
fn among_qualified(
    question: Question,
    qualified: &[&Cell],
    group: &str,
    metric: String,
    figure: fn(&RunRecord) -> f64,
    none: String,
    rule: RunRule<'_>,
) -> Option<ServiceAnswer> {
    let (s, a) = (
        best(qualified, "sync", figure, true),
        best(qualified, "async", figure, true),
    );
    match (s, a) {
        (Some(one), None) | (None, Some(one)) => Some(ServiceAnswer {
            question,
            scenario: one.scenario.clone(),
            python: one.python.clone(),
            setting: group.to_string(),
            best_sync: s.map_or(none.clone(), |c| c.variant.clone()),
            best_async: a.map_or(none, |c| c.variant.clone()),
            metric,
            async_advantage: None,
            only_kind: Some(if s.is_some() { "sync" } else { "async" }),
        }),
        _ => answer(question, qualified, group, metric, figure, true, rule),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::services::tests::cell_at;

    fn rule() -> Rule {
        Rule {
            alpha: stats::ALPHA,
            noise_threshold: 0.03,
            looks: None,
            floor: 0.0,
        }
    }

    /// A cell that held `hold` connections, `held` of them to the end, at `kib` each.
    fn room_cell(variant: &str, kind: &str, clients: u64, p99: f64, missing: u64) -> Cell {
        let mut c = cell_at(variant, kind, 0.0, 100.0, 2.0);
        c.params.insert("clients".into(), clients.into());
        c.params.insert("rate_per_s".into(), 10.into());
        c.group = format!("clients={clients}");
        for (i, r) in c.runs.iter_mut().enumerate() {
            let p99 = p99 * (1.0 + 0.002 * i as f64);
            r.errors = missing;
            r.extra.fanout = Some(crate::extras::FanoutFigures {
                clients,
                joined: clients,
                failed: 0,
                error_samples: Vec::new(),
                join_s: 1.0,
                idle_s: 1.0,
                in_room_after_idle: clients,
                closed_at_end: 0,
                rss_before_mib: 30.0,
                rss_after_mib: 40.0,
                kib_per_connection: Some(10.0),
                rate_per_s: 10.0,
                sent: 50,
                send_errors: 0,
                expected: 50 * clients,
                delivered: 50 * clients - missing,
                missing,
                delivered_per_s: 10.0 * clients as f64,
                delivery_ms: Some(crate::extras::Percentiles {
                    p50: p99 / 2.0,
                    p99,
                    max: p99 * 1.1,
                }),
                from_stamp_ms: None,
                sampled_clients: 100,
                bound_ms: 100.0,
                broadcast_delay_ms: 0.0,
            });
        }
        crate::analysis::summary::derive_cell(&mut c);
        c
    }

    #[test]
    fn rooms_compare_the_servers_that_kept_up_or_name_the_only_kind_that_did() {
        let cells = [
            room_cell("flask_sock", "sync", 1000, 40.0, 0),
            room_cell("websockets", "async", 1000, 30.0, 0),
            room_cell("uvicorn", "async", 1000, 35.0, 0),
            room_cell("flask_sock", "sync", 10000, 2300.0, 0),
            // Within the bound but deliveries missing: it did not keep up.
            room_cell("uvicorn", "async", 10000, 90.0, 7),
            room_cell("websockets", "async", 10000, 80.0, 0),
            // Nobody kept up: no answer at this size.
            room_cell("flask_sock", "sync", 20000, 5000.0, 0),
            room_cell("websockets", "async", 20000, 900.0, 0),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let got = answers(&refs, &[], rule(), &Floors::default());
        assert!(
            got.iter().all(|a| a.question == Question::Realtime),
            "{got:#?}"
        );
        assert_eq!(got.len(), 2, "{got:#?}");
        assert_eq!(
            (got[0].best_sync.as_str(), got[0].best_async.as_str()),
            ("flask_sock", "websockets")
        );
        let ratio = got[0].async_advantage.as_ref().unwrap().ratio.ratio;
        assert!((ratio - 40.0 / 30.0).abs() < 0.01, "{ratio}");
        assert_eq!(got[0].leader(), Some("async"));
        assert!(
            got[0].metric.contains("3 of 3 servers kept up"),
            "{}",
            got[0].metric
        );
        assert_eq!(got[1].setting, "clients=10000");
        assert_eq!(got[1].best_sync, "none kept up");
        assert_eq!(got[1].best_async, "websockets");
        assert_eq!(got[1].leader(), Some("async"));
        assert!(
            got[1].metric.contains("1 of 3 servers kept up"),
            "{}",
            got[1].metric
        );
    }

    fn held_cell(variant: &str, kind: &str, hold: u64, held: u64, kib: f64) -> Cell {
        let mut c = cell_at(variant, kind, 0.0, 100.0, 2.0);
        c.params.insert("hold".into(), hold.into());
        c.params.insert("rate_per_s".into(), 100.into());
        c.group = format!("hold={hold}");
        for (i, r) in c.runs.iter_mut().enumerate() {
            r.extra.held = Some(crate::extras::HeldFigures {
                asked: hold,
                failed: hold - held,
                error_samples: Vec::new(),
                open_s: 1.0,
                idle_s: 1.0,
                open_after_idle: held,
                open_at_end: held,
                rss_before_mib: 40.0,
                rss_after_mib: 40.0 + kib * held as f64 / 1024.0,
                kib_per_connection: (held > 0).then_some(kib * (1.0 + 0.002 * i as f64)),
            });
        }
        crate::analysis::summary::derive_cell(&mut c);
        c
    }

    #[test]
    fn held_connections_compare_the_servers_that_held_them_all_or_name_the_only_kind_that_did() {
        let cells = [
            held_cell("gunicorn_sync", "sync", 1000, 0, 0.0),
            held_cell("gthread", "sync", 1000, 1000, 3.0),
            held_cell("uvicorn", "async", 1000, 1000, 8.0),
            held_cell("gthread", "sync", 10000, 3000, 3.0),
            held_cell("uvicorn", "async", 10000, 10000, 8.0),
            {
                // Its trickle failed too: it still counts among the servers asked.
                let mut c = held_cell("granian", "sync", 10000, 400, 20.0);
                c.runs.iter_mut().for_each(|r| r.errors = 5);
                crate::analysis::summary::derive_cell(&mut c);
                c
            },
            // Below the threshold of many: asked, but not a question.
            held_cell("gthread", "sync", 100, 100, 10.0),
            held_cell("uvicorn", "async", 100, 100, 5.0),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let got = answers(&refs, &[], rule(), &Floors::default());
        let held: Vec<&ServiceAnswer> = got
            .iter()
            .filter(|a| a.question == Question::HeldConnections)
            .collect();
        assert_eq!(held.len(), 2, "{got:#?}");
        // 1,000: both kinds held them all; less memory per connection is better, so sync leads.
        assert_eq!(held[0].setting, "hold=1000");
        assert_eq!(
            (held[0].best_sync.as_str(), held[0].best_async.as_str()),
            ("gthread", "uvicorn")
        );
        let ratio = held[0].async_advantage.as_ref().unwrap().ratio.ratio;
        assert!((ratio - 3.0 / 8.0).abs() < 0.01, "{ratio}");
        assert_eq!(held[0].leader(), Some("sync"));
        assert!(
            held[0].metric.contains("2 of 3 servers held all 1000"),
            "{}",
            held[0].metric
        );
        // 10,000: only the async server held them all, which answers it without a ratio.
        assert_eq!(held[1].setting, "hold=10000");
        assert_eq!(held[1].best_sync, "none held all 10000");
        assert!(held[1].async_advantage.is_none());
        assert!(
            held[1].metric.contains("1 of 3 servers held all 10000"),
            "{}",
            held[1].metric
        );
        assert_eq!(held[1].leader(), Some("async"));
        // Held cells answer no closed-loop question.
        assert!(got.iter().all(|a| a.question == Question::HeldConnections));
    }

    #[test]
    fn each_question_takes_its_settings_and_names_the_kind_the_rounds_show() {
        let cells = [
            cell_at("gunicorn_sync", "sync", 0.0, 1000.0, 50.0),
            cell_at("uvicorn", "async", 0.0, 700.0, 20.0),
            cell_at("gunicorn_sync", "sync", 20.0, 140.0, 30.0),
            cell_at("uvicorn", "async", 20.0, 600.0, 30.0),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let got: Vec<(Question, String, Option<&str>)> =
            answers(&refs, &[], rule(), &Floors::default())
                .iter()
                .map(|a| (a.question, a.setting.clone(), a.leader()))
                .collect();
        let db0 = "endpoint=db rtt_ms=0".to_string();
        let db20 = "endpoint=db rtt_ms=20".to_string();
        assert_eq!(
            got,
            [
                (Question::HighConcurrencyIo, db0.clone(), Some("sync")),
                (Question::HighConcurrencyIo, db20.clone(), Some("async")),
                // Lower p99 is better: async's 20 ms beats sync's 50 ms; 30 against 30 is a tie.
                (Question::StrictP99, db0.clone(), Some("async")),
                (Question::StrictP99, db20, None),
                (Question::LocalhostDatabase, db0, Some("sync")),
            ]
        );
    }
}
