//! WebSocket fan-out: per cell whose runs carry `extra.fanout`, who joined the room, what a
//! client cost the server in memory, how fast broadcasts were delivered, and whether the room
//! kept up: the one rule ([`FanoutRow::keeps_up`]) the table, the per-server limit line and
//! every later comparison ask. Medians over the cell's measured runs, with intervals. A room
//! with slow consumers is not one of them: it measures what they do ([`super::slow_consumer`]).

use super::measured::MeasuredRuns;
use super::services::server_kind;
use crate::extras::FanoutFigures;
use crate::results::{Cell, RunRecord};
use crate::stats::{summarize, Summary};

/// One cell that ran a room.
#[derive(Debug, Clone, PartialEq)]
pub struct FanoutRow {
    /// Scenario name.
    pub scenario: String,
    /// Variant (the server's name).
    pub variant: String,
    /// Interpreter version.
    pub python: String,
    /// The cell's matrix setting (`clients=1000`).
    pub setting: String,
    /// `sync` or `async`.
    pub kind: String,
    /// Clients asked to join.
    pub clients: u64,
    /// The fewest that joined in a run.
    pub joined: u64,
    /// The most deliveries missing in a run (not received within the drain time).
    pub missing: u64,
    /// The most clients whose connection ended during a run.
    pub closed: u64,
    /// Deliveries per second.
    pub delivered_per_s: Summary,
    /// Delivery latency from the intended send, median over all deliveries of a run, ms.
    pub p50_ms: Summary,
    /// The same, p99.
    pub p99_ms: Summary,
    /// The largest single delivery latency of any run, ms.
    pub max_ms: f64,
    /// The p99 from the server's stamp (the broadcast alone), ms.
    pub stamp_p99_ms: Summary,
    /// Server RSS per client in the room, KiB.
    pub kib_per_connection: Option<Summary>,
    /// The p99 bound the room had to keep, ms.
    pub bound_ms: f64,
    /// The largest p99 of any run, ms (NaN when a run delivered nothing).
    pub worst_p99_ms: f64,
    /// The first failure to join, if any.
    pub first_failure: Option<String>,
    /// The load generator's largest share of one CPU in any run (it reads every delivery).
    pub client_cpu_share: f64,
}

impl FanoutRow {
    /// Whether the room kept up: every client joined and stayed, every delivery arrived, and
    /// the p99 delivery latency of every run was within the bound.
    pub fn keeps_up(&self) -> bool {
        self.joined == self.clients
            && self.missing == 0
            && self.closed == 0
            && self.worst_p99_ms <= self.bound_ms
    }
}

/// A run's p99 delivery latency over every delivery, from the intended send, ms (NaN when it
/// delivered nothing or carries no room).
pub fn run_delivery_p99(r: &RunRecord) -> f64 {
    r.extra
        .fanout
        .as_ref()
        .and_then(|f| f.delivery_ms)
        .map_or(f64::NAN, |p| p.p99)
}

/// The rows of every cell that ran a room, in document order.
pub fn rows(cells: &[&Cell]) -> Vec<FanoutRow> {
    cells.iter().filter_map(|c| row(c)).collect()
}

fn row(c: &Cell) -> Option<FanoutRow> {
    if super::slow_consumer::has_slow_consumers(c) {
        return None;
    }
    let runs = MeasuredRuns::of(c);
    let figures: Vec<&FanoutFigures> = runs
        .iter()
        .filter_map(|r| r.extra.fanout.as_ref())
        .collect();
    let first = figures.first()?;
    let of =
        |f: fn(&FanoutFigures) -> f64| summarize(&figures.iter().map(|x| f(x)).collect::<Vec<_>>());
    let kib: Vec<f64> = figures
        .iter()
        .filter_map(|f| f.kib_per_connection)
        .collect();
    let p99 = |f: &FanoutFigures| f.delivery_ms.map_or(f64::NAN, |p| p.p99);
    Some(FanoutRow {
        scenario: c.scenario.clone(),
        variant: c.variant.clone(),
        python: c.python.clone(),
        setting: c.group.clone(),
        kind: server_kind(c).unwrap_or_default(),
        clients: first.clients,
        joined: figures.iter().map(|f| f.joined).min().unwrap_or(0),
        missing: figures.iter().map(|f| f.missing).max().unwrap_or(0),
        closed: figures.iter().map(|f| f.closed_at_end).max().unwrap_or(0),
        delivered_per_s: of(|f| f.delivered_per_s),
        p50_ms: of(|f| f.delivery_ms.map_or(f64::NAN, |p| p.p50)),
        p99_ms: of(p99),
        max_ms: figures
            .iter()
            .map(|f| f.delivery_ms.map_or(f64::NAN, |p| p.max))
            .fold(f64::NAN, f64::max),
        stamp_p99_ms: of(|f| f.from_stamp_ms.map_or(f64::NAN, |p| p.p99)),
        kib_per_connection: (!kib.is_empty()).then(|| summarize(&kib)),
        bound_ms: first.bound_ms,
        worst_p99_ms: figures
            .iter()
            .map(|f| p99(f))
            .fold(f64::NEG_INFINITY, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.max(b)
                }
            }),
        first_failure: figures
            .iter()
            .find_map(|f| f.error_samples.first().cloned()),
        client_cpu_share: runs
            .iter()
            .filter_map(|r| r.extra.client.as_ref().map(|c| c.cpu_share))
            .fold(0.0, f64::max),
    })
}

/// Per server and interpreter: the largest room that kept up and the smallest that did not
/// (clients), from `rows`; in the rows' order of first appearance.
pub fn limits(rows: &[FanoutRow]) -> Vec<Limit> {
    let mut out: Vec<Limit> = Vec::new();
    for r in rows {
        let i = match out
            .iter()
            .position(|l| l.variant == r.variant && l.python == r.python)
        {
            Some(i) => i,
            None => {
                out.push(Limit {
                    variant: r.variant.clone(),
                    python: r.python.clone(),
                    kind: r.kind.clone(),
                    kept_up_to: None,
                    failed_at: None,
                });
                out.len() - 1
            }
        };
        let l = &mut out[i];
        if r.keeps_up() {
            l.kept_up_to = l.kept_up_to.max(Some(r.clients));
        } else {
            l.failed_at = Some(l.failed_at.map_or(r.clients, |n| n.min(r.clients)));
        }
    }
    out
}

/// Where one server's room stopped keeping up.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub variant: String,
    pub python: String,
    pub kind: String,
    /// The largest room that kept up.
    pub kept_up_to: Option<u64>,
    /// The smallest room that did not.
    pub failed_at: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(variant: &str, clients: u64, p99: f64, missing: u64) -> FanoutRow {
        let s = summarize(&[p99]);
        FanoutRow {
            scenario: "fanout".into(),
            variant: variant.into(),
            python: "3.12.1".into(),
            setting: format!("clients={clients}"),
            kind: "async".into(),
            clients,
            joined: clients,
            missing,
            closed: 0,
            delivered_per_s: s.clone(),
            p50_ms: s.clone(),
            p99_ms: s.clone(),
            max_ms: p99,
            stamp_p99_ms: s,
            kib_per_connection: None,
            bound_ms: 100.0,
            worst_p99_ms: p99,
            first_failure: None,
            client_cpu_share: 0.1,
        }
    }

    #[test]
    fn a_room_keeps_up_only_within_the_bound_with_nothing_missing() {
        assert!(row("a", 100, 99.0, 0).keeps_up());
        assert!(!row("a", 100, 101.0, 0).keeps_up());
        assert!(!row("a", 100, 5.0, 1).keeps_up());
        assert!(!row("a", 100, f64::NAN, 0).keeps_up());
        let mut short = row("a", 100, 5.0, 0);
        short.joined = 99;
        assert!(!short.keeps_up());
    }

    #[test]
    fn limits_name_the_largest_room_kept_and_the_smallest_lost() {
        let rows = [
            row("a", 100, 5.0, 0),
            row("a", 1000, 50.0, 0),
            row("a", 10000, 900.0, 0),
            row("b", 100, 500.0, 0),
        ];
        let l = limits(&rows);
        assert_eq!((l[0].kept_up_to, l[0].failed_at), (Some(1000), Some(10000)));
        assert_eq!((l[1].kept_up_to, l[1].failed_at), (None, Some(100)));
    }
}
