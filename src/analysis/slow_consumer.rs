//! Slow consumers: per cell whose runs carry `extra.slow_consumer`, what the server did when
//! one client of its room stopped reading, from measured latency and memory: what the other
//! clients received, how the server's memory grew, and what the slow client found when it
//! read. [`SlowRow::effects`] is the one rule that names it; the table, the chart and the
//! docs ask it. Medians over the cell's measured runs, with intervals.

use super::measured::MeasuredRuns;
use super::services::server_kind;
use crate::extras::SlowConsumerFigures;
use crate::results::Cell;
use crate::stats::{median, summarize, Summary};

/// Whether a cell's room had slow consumers: such a cell measures them, not the room's
/// fan-out, and the fan-out rows leave it out.
pub fn has_slow_consumers(c: &Cell) -> bool {
    c.runs.iter().any(|r| r.extra.slow_consumer.is_some())
}

/// One cell whose room had slow consumers.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowRow {
    /// Scenario name.
    pub scenario: String,
    /// Variant (the server's name).
    pub variant: String,
    /// Interpreter version.
    pub python: String,
    /// `sync` or `async`.
    pub kind: String,
    /// Clients in the room, slow consumers included.
    pub clients: u64,
    /// Slow consumers among them.
    pub slow: u64,
    /// Runs the figures come from.
    pub runs: usize,
    /// The other clients' p99 delivery latency from the intended send, ms.
    pub others_p99_ms: Summary,
    /// The share of the other clients' deliveries that never arrived.
    pub others_missing: Summary,
    /// The p99 bound the room was held to, ms.
    pub bound_ms: f64,
    /// Runs in which a message reached another client late or not at all.
    pub late_runs: usize,
    /// When the first such message was intended, s, over the runs that had one.
    pub first_late_s: Option<Summary>,
    /// Runs in which nothing of the schedule's last second reached the other clients.
    pub stalled_runs: usize,
    /// The server tree's largest RSS during the schedule over its RSS at the start, MiB.
    pub growth_mib: Summary,
    /// What the slow consumers were owed, MiB (median over runs).
    pub owed_mib: f64,
    /// The share of what they were owed that the slow consumers received when they read.
    pub received: Summary,
    /// Runs in which the server had ended a slow consumer's connection.
    pub dropped_runs: usize,
    /// How the first slow consumer's connection stood in the first run that dropped it, or in
    /// the first run.
    pub ending: String,
    /// Per second of the schedule, the median over runs of the largest delivery latency to
    /// the other clients, ms (None: nothing of that second delivered in most runs).
    pub max_ms_by_second: Vec<Option<f64>>,
    /// Per second from the schedule's start, the median over runs of the server tree's
    /// largest RSS, MiB.
    pub rss_by_second: Vec<Option<f64>>,
}

/// What a slow consumer did to the rest of the room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoomEffect {
    /// Every other client received every message within the bound.
    Unaffected,
    /// Some of the other clients' deliveries came late or never, but the broadcast went on.
    Hurt,
    /// The broadcast stopped: nothing of the schedule's last second reached the others.
    Stalled,
}

/// What the server did with the slow consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowEffect {
    /// Kept everything it owed it while the rest of the room went on: the slow consumer
    /// received every message once it read.
    Kept,
    /// Waited for it: the broadcast stalled, and the slow consumer received every message once
    /// it read (the stalled room's with it).
    WaitedFor,
    /// Closed its connection.
    Dropped,
    /// Stopped sending to it, the connection left open: it received only part of what it was
    /// owed.
    LeftOut,
}

impl RoomEffect {
    /// The effect in a few words.
    pub fn words(self) -> &'static str {
        match self {
            RoomEffect::Unaffected => "the others unaffected",
            RoomEffect::Hurt => "some of the others' deliveries late or lost",
            RoomEffect::Stalled => "the broadcast stalled",
        }
    }
}

impl SlowEffect {
    /// The effect in a few words.
    pub fn words(self) -> &'static str {
        match self {
            SlowEffect::Kept => "kept what it owed the slow client",
            SlowEffect::WaitedFor => "waited for the slow client",
            SlowEffect::Dropped => "closed the slow client's connection",
            SlowEffect::LeftOut => "stopped sending to the slow client",
        }
    }
}

/// More than half of `runs`.
fn most(count: usize, runs: usize) -> bool {
    count * 2 > runs
}

impl SlowRow {
    /// The rule: each effect is what more than half the runs showed (for the slow consumer's
    /// share received, the median run).
    pub fn effects(&self) -> (RoomEffect, SlowEffect) {
        let room = if most(self.stalled_runs, self.runs) {
            RoomEffect::Stalled
        } else if most(self.late_runs, self.runs) {
            RoomEffect::Hurt
        } else {
            RoomEffect::Unaffected
        };
        let slow = if most(self.dropped_runs, self.runs) {
            SlowEffect::Dropped
        } else if self.received.median < 1.0 {
            SlowEffect::LeftOut
        } else if room == RoomEffect::Stalled {
            SlowEffect::WaitedFor
        } else {
            SlowEffect::Kept
        };
        (room, slow)
    }
}

/// The rows of every cell whose room had slow consumers, in document order.
pub fn rows(cells: &[&Cell]) -> Vec<SlowRow> {
    cells.iter().filter_map(|c| row(c)).collect()
}

fn row(c: &Cell) -> Option<SlowRow> {
    let runs = MeasuredRuns::of(c);
    let both: Vec<_> = runs
        .iter()
        .filter_map(|r| Some((r.extra.fanout.as_ref()?, r.extra.slow_consumer.as_ref()?)))
        .collect();
    let (first_room, _) = both.first()?;
    let slows: Vec<&SlowConsumerFigures> = both.iter().map(|(_, s)| *s).collect();
    let of = |f: &dyn Fn(&SlowConsumerFigures) -> f64| {
        summarize(&slows.iter().map(|s| f(s)).collect::<Vec<_>>())
    };
    let late: Vec<f64> = slows.iter().filter_map(|s| s.first_late_s).collect();
    let stalled = slows
        .iter()
        .filter(|s| {
            s.per_second
                .max_delivery_ms
                .last()
                .is_some_and(Option::is_none)
        })
        .count();
    let ending = slows
        .iter()
        .find(|s| s.dropped > 0)
        .or(slows.first())
        .and_then(|s| s.endings.first().cloned())
        .unwrap_or_default();
    Some(SlowRow {
        scenario: c.scenario.clone(),
        variant: c.variant.clone(),
        python: c.python.clone(),
        kind: server_kind(c).unwrap_or_default(),
        clients: first_room.clients,
        slow: slows[0].slow_clients,
        runs: slows.len(),
        others_p99_ms: summarize(
            &both
                .iter()
                .map(|(f, _)| f.delivery_ms.map_or(f64::NAN, |p| p.p99))
                .collect::<Vec<_>>(),
        ),
        others_missing: summarize(
            &both
                .iter()
                .map(|(f, _)| f.missing as f64 / (f.expected.max(1)) as f64)
                .collect::<Vec<_>>(),
        ),
        bound_ms: first_room.bound_ms,
        late_runs: late.len(),
        first_late_s: (!late.is_empty()).then(|| summarize(&late)),
        stalled_runs: stalled,
        growth_mib: of(&|s| s.rss_peak_mib - s.rss_start_mib),
        owed_mib: of(&|s| s.owed_mib).median,
        received: of(&|s| s.received as f64 / s.owed.max(1) as f64),
        dropped_runs: slows.iter().filter(|s| s.dropped > 0).count(),
        ending,
        max_ms_by_second: by_second(slows.iter().map(|s| &s.per_second.max_delivery_ms[..])),
        rss_by_second: by_second(slows.iter().map(|s| &s.per_second.rss_mib[..])),
    })
}

/// Second by second, the median over runs of their readings; a second with a reading in no
/// more than half the runs has none (as many seconds as the longest run).
fn by_second<'a>(runs: impl Iterator<Item = &'a [Option<f64>]> + Clone) -> Vec<Option<f64>> {
    let n = runs.clone().count();
    let seconds = runs.clone().map(<[_]>::len).max().unwrap_or(0);
    (0..seconds)
        .map(|i| {
            let xs: Vec<f64> = runs.clone().filter_map(|r| r.get(i).copied()?).collect();
            most(xs.len(), n).then(|| median(&xs))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(stalled: usize, late: usize, dropped: usize, received: f64) -> SlowRow {
        let s = summarize(&[1.0]);
        SlowRow {
            scenario: "slow_consumer".into(),
            variant: "v".into(),
            python: "3.12.1".into(),
            kind: "async".into(),
            clients: 50,
            slow: 1,
            runs: 3,
            others_p99_ms: s.clone(),
            others_missing: s.clone(),
            bound_ms: 100.0,
            late_runs: late,
            first_late_s: None,
            stalled_runs: stalled,
            growth_mib: s.clone(),
            owed_mib: 9.4,
            received: summarize(&[received]),
            dropped_runs: dropped,
            ending: "open".into(),
            max_ms_by_second: vec![],
            rss_by_second: vec![],
        }
    }

    #[test]
    fn each_effect_is_what_most_runs_showed() {
        use RoomEffect::*;
        use SlowEffect::*;
        assert_eq!(row(0, 0, 0, 1.0).effects(), (Unaffected, Kept));
        assert_eq!(row(2, 3, 0, 1.0).effects(), (Stalled, WaitedFor));
        assert_eq!(row(1, 2, 0, 0.4).effects(), (Hurt, LeftOut));
        assert_eq!(row(0, 1, 2, 0.4).effects(), (Unaffected, Dropped));
        assert_eq!(row(0, 0, 1, 1.0).effects(), (Unaffected, Kept));
    }

    #[test]
    fn a_second_needs_a_reading_in_most_runs() {
        let runs: [&[Option<f64>]; 3] = [
            &[Some(1.0), None, Some(5.0)],
            &[Some(3.0), None],
            &[Some(2.0), Some(9.0), Some(7.0)],
        ];
        assert_eq!(
            by_second(runs.iter().copied()),
            vec![Some(2.0), None, Some(6.0)]
        );
    }
}
