//! The WebSocket fan-out section: per server and room size, who joined, what a client cost the
//! server in memory, how fast broadcasts were delivered, whether the room kept up, and per
//! server the largest room that did.

use super::markup::{Section, Table};
use crate::analysis::fanout::{self, FanoutRow};
use crate::analysis::services::CLIENT_BUSY_SHARE;
use crate::format::num;
use crate::stats::Summary;

/// "12.3 [11.9–12.8]": a median with its 95% interval.
fn median_ci(s: &Summary) -> String {
    super::held_tables::median_ci_or(s, "– (none delivered)")
}

/// The section; None when no run joined a room.
pub fn section(rows: &[FanoutRow]) -> Option<Section> {
    let first = rows.first()?;
    let mut out = Section::new("WebSocket fan-out", Some(&first.scenario));
    out.para(format!("Each run joined the clients to a fresh server's chat room, held them idle, read the server tree's summed RSS (from /proc, outside the server) before joining and after, then, timed, sent messages into the room on a fixed schedule, each broadcast by the server to every client. Delivery latency is from each message's intended send to a client's receipt (corrected, wrk2's rule: a late send, a slow read and a slow broadcast all count), over every delivery of a run; *p50* and *p99* are medians over runs with their 95% intervals, *max* the largest of any run. *from the server's stamp* is the p99 from the server's receipt of the message, the broadcast alone. A room *keeps up* when every client joined and stayed, every delivery arrived, and every run's p99 was within {} ms. *generator CPU* is the load generator's largest share of one CPU in any run: it reads every delivery, and a delivery's latency includes any wait to be read, so above {:.0}% the generator may have added to what it measured.", num(first.bound_ms), CLIENT_BUSY_SHARE * 100.0));
    let mut t = Table::new([
        "variant",
        "python",
        "setting",
        "kind",
        "joined / asked",
        "KiB per client (95% CI)",
        "deliveries/s",
        "p50 ms (95% CI)",
        "p99 ms (95% CI)",
        "max ms",
        "p99 from the server's stamp, ms",
        "generator CPU",
        "keeps up",
    ]);
    for r in rows {
        let joined = match (&r.first_failure, r.clients - r.joined.min(r.clients)) {
            (Some(m), n) if n > 0 => format!("{} / {} (first failure: {m})", r.joined, r.clients),
            _ => format!("{} / {}", r.joined, r.clients),
        };
        let keeps = if r.keeps_up() {
            "yes".to_string()
        } else if r.missing > 0 {
            format!("no: {} deliveries missing", r.missing)
        } else if r.joined < r.clients || r.closed > 0 {
            "no: not every client stayed".to_string()
        } else {
            format!("no: p99 above {} ms", num(r.bound_ms))
        };
        t.row([
            r.variant.clone(),
            r.python.clone(),
            super::decision_section::setting_text(&r.setting).into(),
            r.kind.clone(),
            joined,
            r.kib_per_connection.as_ref().map_or("–".into(), median_ci),
            num(r.delivered_per_s.median),
            median_ci(&r.p50_ms),
            median_ci(&r.p99_ms),
            num(r.max_ms),
            num(r.stamp_p99_ms.median),
            format!(
                "{:.0}%{}",
                r.client_cpu_share * 100.0,
                if r.client_cpu_share > CLIENT_BUSY_SHARE {
                    " (busy)"
                } else {
                    ""
                }
            ),
            keeps,
        ]);
    }
    out.table(t);
    let lines: Vec<String> = fanout::limits(rows)
        .iter()
        .map(|l| {
            let verdict = match (l.kept_up_to, l.failed_at) {
                (Some(n), Some(m)) => format!("kept up to {n} clients; not at {m}"),
                (Some(n), None) => format!("kept up at every size run, up to {n} clients"),
                (None, Some(m)) => format!("kept up at no size run, from {m} clients"),
                (None, None) => "no room size run".to_string(),
            };
            format!("{} ({}, {}): {verdict}", l.variant, l.kind, l.python)
        })
        .collect();
    out.para("Largest room that kept up, per server:");
    out.list(lines);
    Some(out)
}
