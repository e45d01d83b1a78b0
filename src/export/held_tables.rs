//! The held-connections section: per server and number of connections asked for, how many it
//! held, what each cost it in memory and the p99 of the trickle sent across them.

use super::markup::{Section, Table};
use crate::analysis::held::HeldRow;
use crate::format::num;
use crate::stats::Summary;

/// "12.3 [11.9–12.8]": a median with its 95% interval.
fn median_ci(s: &Summary) -> String {
    median_ci_or(s, "– (no answer)")
}

/// "12.3 [11.9–12.8]": a median with its 95% interval; `none` when there is no median.
pub(super) fn median_ci_or(s: &Summary, none: &str) -> String {
    if s.median.is_nan() {
        return none.into();
    }
    format!(
        "{} [{}–{}]",
        num(s.median),
        num(s.ci95_low),
        num(s.ci95_high)
    )
}

/// The section; None when no run held connections.
pub fn section(rows: &[HeldRow]) -> Option<Section> {
    let first = rows.first()?;
    let mut out = Section::new("Held connections", Some(&first.scenario));
    out.para("Each run opened the connections asked for to a fresh server, each proven by one answered request, held them idle, read the server tree's summed RSS (from /proc, outside the server) before opening and after holding, then sent the timed open-loop trickle across them. *held* is the fewest the server still held at the end of a run (after the trickle): a server that closes a keep-alive connection after its answer holds none. *KiB per connection* is the RSS added over the connections held, median over runs with its 95% interval; it counts the server's own memory, not the kernel's socket buffers. *trickle p99* is from each request's intended start (corrected, wrk2's rule); a request whose connection the server had closed paid a new connection in it.");
    let mut t = Table::new([
        "variant",
        "python",
        "setting",
        "kind",
        "held / asked",
        "failed to open",
        "KiB per connection (95% CI)",
        "server RSS MiB, held",
        "trickle p99 ms (95% CI)",
    ]);
    for r in rows {
        let failed = match (&r.first_failure, r.failed) {
            (Some(m), n) if n > 0 => format!("{n} (first: {m})"),
            (_, n) => n.to_string(),
        };
        t.row([
            r.variant.clone(),
            r.python.clone(),
            super::decision_section::setting_text(&r.setting).into(),
            r.kind.clone(),
            format!("{} / {}", r.held, r.asked),
            failed,
            r.kib_per_connection
                .as_ref()
                .map_or("– (held none)".into(), median_ci),
            num(r.rss_after_mib.median),
            median_ci(&r.trickle_p99_ms),
        ]);
    }
    out.table(t);
    Some(out)
}
