//! The slow-consumer section: per server, what one client that stopped reading did to the rest
//! of its room and to the server's memory, what the slow client found when it read, and what
//! the server did, in words, from the analysis' one rule ([`SlowRow::effects`]).

use super::markup::{Section, Table};
use crate::analysis::slow_consumer::{RoomEffect, SlowEffect, SlowRow};
use crate::format::num;
use crate::stats::Summary;

/// "12.3 [11.9–12.8]": a median with its 95% interval.
fn median_ci(s: &Summary) -> String {
    super::held_tables::median_ci_or(s, "– (none delivered)")
}

/// A share as a percentage with its interval: "66 [65–67]%" ("none" when every run's is 0).
fn percent_ci(s: &Summary) -> String {
    if s.max == 0.0 {
        return "none".into();
    }
    format!(
        "{} [{}–{}]%",
        num(s.median * 100.0),
        num(s.ci95_low * 100.0),
        num(s.ci95_high * 100.0)
    )
}

/// What the server did, in words: the rule's two effects with the figures behind them.
pub fn what_happened(r: &SlowRow) -> String {
    let (room, slow) = r.effects();
    let from = r
        .first_late_s
        .as_ref()
        .map_or(String::new(), |s| format!(" from {} s", num(s.median)));
    let room = match room {
        RoomEffect::Unaffected => "the other clients were unaffected".to_string(),
        RoomEffect::Hurt => format!(
            "the other clients' deliveries came late or not at all{from}, but the broadcast went on"
        ),
        RoomEffect::Stalled => {
            format!("the broadcast stalled for every client{from}")
        }
    };
    let slow = match slow {
        SlowEffect::Kept => format!(
            "it kept what the slow client was owed (memory +{} MiB for {} MiB owed)",
            num(r.growth_mib.median),
            num(r.owed_mib)
        ),
        SlowEffect::WaitedFor => {
            "it waited for the slow client, which received every message once it read".to_string()
        }
        SlowEffect::Dropped => format!("it closed the slow client's connection ({})", r.ending),
        SlowEffect::LeftOut => format!(
            "it stopped sending to the slow client and left its connection open ({}% received)",
            num(r.received.median * 100.0)
        ),
    };
    format!("{room}; {slow}")
}

/// The section; None when no room had a slow consumer.
pub fn section(rows: &[SlowRow]) -> Option<Section> {
    let first = rows.first()?;
    let mut out = Section::new("A slow consumer", Some(&first.scenario));
    out.para(format!(
        "Each run joined the clients to a fresh server's room; {} of them never read. Timed, messages of a fixed size went into the room on a schedule, each broadcast to every client, until what the slow client was owed outgrew the kernel's socket buffers. *Other clients* are the ones that read: their p99 delivery latency from each message's intended send (corrected), the share of their deliveries that never arrived, and when the first message reached one of them late (above {} ms) or not at all. *Server memory* is the largest RSS of the server's process tree during the schedule over its RSS at the start, read from /proc outside the server: it holds what the server buffered for the slow client, and anything else it kept (messages it read but could not yet broadcast). *Slow client* is what it received, when it finally read at the end, of the timed messages it was owed, and whether the server had closed its connection. Medians over runs with their 95% intervals; each effect is what most runs showed.",
        first.slow,
        num(first.bound_ms)
    ));
    let mut t = Table::new([
        "variant",
        "python",
        "kind",
        "clients (slow)",
        "other clients: p99 ms (95% CI)",
        "missing",
        "first late, s",
        "server memory +MiB (95% CI)",
        "owed MiB",
        "slow client received",
        "its connection",
        "what happened",
    ]);
    for r in rows {
        t.row([
            r.variant.clone(),
            r.python.clone(),
            r.kind.clone(),
            format!("{} ({})", r.clients, r.slow),
            median_ci(&r.others_p99_ms),
            percent_ci(&r.others_missing),
            r.first_late_s.as_ref().map_or("never".into(), |s| {
                format!("{} (in {} of {} runs)", num(s.median), r.late_runs, r.runs)
            }),
            median_ci(&r.growth_mib),
            num(r.owed_mib),
            percent_ci(&r.received),
            if r.dropped_runs > 0 {
                format!("{} (in {} of {} runs)", r.ending, r.dropped_runs, r.runs)
            } else {
                "open".into()
            },
            what_happened(r),
        ]);
    }
    out.table(t);
    Some(out)
}
