//! The network sections: per sweep along `rtt_ms`, one table of every variant's throughput,
//! p99 and fraction of the Rust reference client at each RTT, with the leader there and the
//! crossover finding; then the reference clients' ceilings with each variant's fraction.

use super::markup::{Cell, Section, Table};
use super::scenario_tables::verdict_mark;
use crate::analysis::network::{finding, CeilingRow, NetworkSweep};
use crate::format::{num, opt, rate};

fn sweep_table(s: &NetworkSweep) -> Table {
    let mut head = vec!["RTT ms".to_string()];
    head.extend(s.series.iter().map(|v| v.variant.clone()));
    head.push("reference /s".into());
    head.push("leader (× runner-up, 95% CI)".into());
    let mut t = Table::new(head);
    for (i, rtt) in s.rtts_ms.iter().enumerate() {
        let mut row: Vec<Cell> = vec![rate(*rtt).into()];
        for v in &s.series {
            row.push(match v.points.iter().find(|p| p.rtt_ms == *rtt) {
                Some(p) => {
                    let t = &p.throughput_per_s;
                    let mut text = format!(
                        "{}/s [{}–{}] · p99 {} ms",
                        num(t.median),
                        num(t.ci95_low),
                        num(t.ci95_high),
                        opt(p.p99_ms)
                    );
                    if let Some(f) = p.ceiling_fraction {
                        text.push_str(&format!(" · {:.0}% of ref.", f * 100.0));
                    }
                    text.into()
                }
                None => "–".into(),
            });
        }
        row.push(opt(s.ceiling_per_s.get(i).copied().flatten()).into());
        row.push(match s.leaders.iter().find(|l| l.rtt_ms == *rtt) {
            Some(l) => {
                let d = &l.decision;
                Cell::marked(
                    format!(
                        "{} over {}: {}× [{}–{}], {}",
                        d.winner,
                        d.runner_up,
                        num(d.ratio.ratio),
                        num(d.ratio.ci95_low),
                        num(d.ratio.ci95_high),
                        d.verdict.text()
                    ),
                    verdict_mark(&d.verdict),
                )
            }
            None => "–".into(),
        });
        t.row(row);
    }
    t
}

/// One section per network sweep.
pub fn sections(sweeps: &[NetworkSweep]) -> Vec<Section> {
    sweeps
        .iter()
        .map(|s| {
            let at = if s.setting.is_empty() {
                String::new()
            } else {
                format!(", {}", s.setting)
            };
            let mut out = Section::new(
                format!(
                    "{}: throughput against the round trip to the service (Python {}{at})",
                    s.scenario, s.python
                ),
                Some(&s.scenario),
            );
            out.para(format!("**{}**", finding(s)));
            out.para("Each RTT is a delay line (a TCP proxy in the driver, src/services/delay_line.rs) between the workers and the service, half the round trip each way; 0 is no proxy at all. Throughput: median over clean rounds with its bootstrap 95% interval; p99: pooled over rounds, from each request's actual send (closed loop, so not corrected for waiting). *of ref.*: the median as a share of the Rust reference client's at the same load, RTT and connections. The leader is the decision table's: best median, against the runner-up, paired by round.");
            out.table(sweep_table(s));
            out
        })
        .collect()
}

/// The reference clients' section; None when no scenario had one.
pub fn ceiling_section(rows: &[CeilingRow]) -> Option<Section> {
    if rows.is_empty() {
        return None;
    }
    let mut out = Section::new("Rust reference ceiling", None);
    out.para("A Rust client (reqwest for the mock server, tokio-postgres for PostgreSQL) runs the same closed-loop load as the cells of each setting: the same operations, concurrency, connections and delay line, on the workers' CPUs, once per round after the scenario's rounds. Each variant's median is shown as a share of the reference's. It is a reference, not a hard ceiling: under the default placement the client shares its core with PostgreSQL (or the mock server) and the delay lines, so where the service's CPU is the limit a Python variant can come near 100% of it or, within the spread of short runs, above.");
    let mut t = Table::new([
        "scenario",
        "setting",
        "client",
        "reference /s (95% CI)",
        "variants, share of it",
    ]);
    for r in rows {
        let reference = match (&r.throughput_per_s, &r.failure) {
            (Some(s), _) => format!(
                "{} [{}–{}]",
                num(s.median),
                num(s.ci95_low),
                num(s.ci95_high)
            ),
            (None, Some(why)) => format!("failed: {why}"),
            (None, None) => "–".into(),
        };
        let shares: Vec<String> = r
            .fractions
            .iter()
            .map(|(v, py, f)| format!("{v} (py{py}) {:.0}%", f * 100.0))
            .collect();
        t.row([
            Cell::from(r.scenario.clone()),
            (if r.setting.is_empty() {
                "–".to_string()
            } else {
                r.setting.clone()
            })
            .into(),
            r.client.clone().into(),
            reference.into(),
            shares.join(" · ").into(),
        ]);
    }
    out.table(t);
    Some(out)
}
