//! Network sweeps: a scenario's cells along `rtt_ms` (the delay line's round trip), one sweep per
//! interpreter and setting of the other axes. Each variant's throughput (median, 95% interval)
//! and pooled p99 at each RTT, its fraction of the Rust reference client there, the leader at
//! each RTT as the decision table ranked it, and the RTT where the lead changes hands, or the
//! plain statement that it does not in the range measured.

use std::collections::BTreeMap;

use serde_json::Value;

use super::comparison::Verdict;
use super::decision::Decision;
use crate::results::{CeilingRecord, Cell, CellStatus};
use crate::stats::Summary;

/// One variant at one RTT.
#[derive(Debug, Clone)]
pub struct NetworkPoint {
    /// The delay line's round trip, ms (0: no delay line).
    pub rtt_ms: f64,
    /// Throughput over the clean rounds, ops per second.
    pub throughput_per_s: Summary,
    /// p99 latency pooled over the rounds, ms (from the actual send: closed loop).
    pub p99_ms: Option<f64>,
    /// Median throughput as a fraction of the reference client's median at the same setting.
    pub ceiling_fraction: Option<f64>,
}

/// One variant's points, in RTT order.
#[derive(Debug, Clone)]
pub struct NetworkSeries {
    /// Variant name.
    pub variant: String,
    /// Its points.
    pub points: Vec<NetworkPoint>,
}

/// Who led at one RTT, from the decision table's row for that setting.
#[derive(Debug, Clone)]
pub struct Leader {
    /// The RTT, ms.
    pub rtt_ms: f64,
    /// The decision row (winner, runner-up, ratio with interval, verdict).
    pub decision: Decision,
}

/// Where the lead changes hands along the RTT axis.
#[derive(Debug, Clone, PartialEq)]
pub enum Crossover {
    /// `before` led significantly up to `last_rtt_ms`, `after` from `at_rtt_ms`.
    Changes {
        /// The variant leading at the lower RTTs.
        before: String,
        /// The last RTT it led significantly at, ms.
        last_rtt_ms: f64,
        /// The variant leading from `at_rtt_ms`.
        after: String,
        /// The first RTT the new leader led significantly at, ms.
        at_rtt_ms: f64,
    },
    /// One variant led at every RTT where a lead was significant.
    Same {
        /// That variant.
        leader: String,
        /// RTTs with a significant lead, of all RTTs.
        significant: usize,
    },
    /// No RTT had a significant lead (or a busy machine left every one inconclusive).
    Undecided,
}

/// One sweep: a scenario at one setting of its other axes, along the RTT.
#[derive(Debug, Clone)]
pub struct NetworkSweep {
    /// Scenario name.
    pub scenario: String,
    /// Interpreter version.
    pub python: String,
    /// The other axes' values (`concurrency=10`), may be empty.
    pub setting: String,
    /// The RTTs measured, ms, ascending.
    pub rtts_ms: Vec<f64>,
    /// Per variant.
    pub series: Vec<NetworkSeries>,
    /// The reference client's median throughput at each RTT (same order as `rtts_ms`).
    pub ceiling_per_s: Vec<Option<f64>>,
    /// The leader at each RTT that has a decision row.
    pub leaders: Vec<Leader>,
    /// Where the lead changes.
    pub crossover: Crossover,
}

/// The group string without its `rtt_ms=` part: the setting a sweep holds fixed.
fn setting_of(group: &str) -> String {
    group
        .split(' ')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("rtt_ms="))
        .collect::<Vec<_>>()
        .join(" ")
}

fn rtt_of(c: &Cell) -> f64 {
    c.params
        .get("rtt_ms")
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

/// The reference record whose parameters are exactly `params`.
fn ceiling_for<'a>(
    ceilings: &'a [CeilingRecord],
    scenario: &str,
    params: &BTreeMap<String, Value>,
) -> Option<&'a CeilingRecord> {
    ceilings
        .iter()
        .find(|r| r.scenario == scenario && &r.params == params)
}

/// Median throughput of `cell` as a fraction of its setting's reference client.
pub fn ceiling_fraction(cell: &Cell, ceilings: &[CeilingRecord]) -> Option<f64> {
    let reference = ceiling_for(ceilings, &cell.scenario, &cell.params)?;
    let top = reference.throughput_per_s.as_ref()?.median;
    let own = cell.summary.as_ref()?.throughput_per_s.median;
    (top > 0.0 && own.is_finite()).then(|| own / top)
}

/// The sweeps of a document's cells: scenarios whose cells vary `rtt_ms` over two or more
/// values.
pub fn analyze(
    cells: &[Cell],
    decisions: &[Decision],
    ceilings: &[CeilingRecord],
) -> Vec<NetworkSweep> {
    let mut groups: BTreeMap<(String, String, String), Vec<&Cell>> = BTreeMap::new();
    for c in cells {
        let usable = c.status == CellStatus::Ok && c.summary.as_ref().is_some_and(|s| s.rounds > 0);
        if usable && c.params.contains_key("rtt_ms") {
            let key = (c.scenario.clone(), c.python.clone(), setting_of(&c.group));
            groups.entry(key).or_default().push(c);
        }
    }
    let mut out = Vec::new();
    for ((scenario, python, setting), cells) in groups {
        let mut rtts: Vec<f64> = cells.iter().map(|c| rtt_of(c)).collect();
        rtts.sort_by(f64::total_cmp);
        rtts.dedup();
        if rtts.len() < 2 {
            continue;
        }
        let mut variants: Vec<String> = Vec::new();
        for c in &cells {
            if !variants.contains(&c.variant) {
                variants.push(c.variant.clone());
            }
        }
        let series = variants
            .iter()
            .map(|v| {
                let mut points: Vec<NetworkPoint> = cells
                    .iter()
                    .filter(|c| &c.variant == v)
                    .filter_map(|c| {
                        let s = c.summary.as_ref()?;
                        Some(NetworkPoint {
                            rtt_ms: rtt_of(c),
                            throughput_per_s: s.throughput_per_s.clone(),
                            p99_ms: s.latency_ms.as_ref().map(|l| l.p99),
                            ceiling_fraction: ceiling_fraction(c, ceilings),
                        })
                    })
                    .collect();
                points.sort_by(|a, b| a.rtt_ms.total_cmp(&b.rtt_ms));
                NetworkSeries {
                    variant: v.clone(),
                    points,
                }
            })
            .collect();
        let ceiling_per_s = rtts
            .iter()
            .map(|r| {
                let c = cells.iter().find(|c| rtt_of(c) == *r)?;
                let rec = ceiling_for(ceilings, &scenario, &c.params)?;
                rec.throughput_per_s.as_ref().map(|t| t.median)
            })
            .collect();
        let leaders: Vec<Leader> = rtts
            .iter()
            .filter_map(|r| {
                let group = cells.iter().find(|c| rtt_of(c) == *r)?.group.clone();
                let decision = decisions
                    .iter()
                    .find(|d| d.scenario == scenario && d.python == python && d.group == group)?;
                Some(Leader {
                    rtt_ms: *r,
                    decision: decision.clone(),
                })
            })
            .collect();
        let crossover = crossover(&leaders);
        out.push(NetworkSweep {
            scenario,
            python,
            setting,
            rtts_ms: rtts,
            series,
            ceiling_per_s,
            leaders,
            crossover,
        });
    }
    out
}

/// The first RTT whose significant leader is not the one before it.
pub fn crossover(leaders: &[Leader]) -> Crossover {
    let significant: Vec<&Leader> = leaders
        .iter()
        .filter(|l| l.decision.verdict == Verdict::Significant)
        .collect();
    let Some(first) = significant.first() else {
        return Crossover::Undecided;
    };
    let mut last = first;
    for l in &significant[1..] {
        if l.decision.winner != last.decision.winner {
            return Crossover::Changes {
                before: last.decision.winner.clone(),
                last_rtt_ms: last.rtt_ms,
                after: l.decision.winner.clone(),
                at_rtt_ms: l.rtt_ms,
            };
        }
        last = l;
    }
    Crossover::Same {
        leader: first.decision.winner.clone(),
        significant: significant.len(),
    }
}

/// The finding in one sentence, for the report and the decision record.
pub fn finding(s: &NetworkSweep) -> String {
    let range = match (s.rtts_ms.first(), s.rtts_ms.last()) {
        (Some(a), Some(b)) => format!(
            "{} to {} ms",
            crate::format::rate(*a),
            crate::format::rate(*b)
        ),
        _ => String::new(),
    };
    let at = if s.setting.is_empty() {
        String::new()
    } else {
        format!(" at {}", s.setting)
    };
    match &s.crossover {
        Crossover::Changes {
            before,
            last_rtt_ms,
            after,
            at_rtt_ms,
        } => format!(
            "The lead changes between {} and {} ms{at}: {before} leads up to {} ms, {after} from {} ms (each lead significant).",
            crate::format::rate(*last_rtt_ms),
            crate::format::rate(*at_rtt_ms),
            crate::format::rate(*last_rtt_ms),
            crate::format::rate(*at_rtt_ms)
        ),
        Crossover::Same {
            leader,
            significant: 1,
        } => {
            let only = s
                .leaders
                .iter()
                .find(|l| l.decision.verdict == Verdict::Significant)
                .map(|l| crate::format::rate(l.rtt_ms))
                .unwrap_or_default();
            format!(
                "No crossover can be named from {range}{at}: a lead is significant only at {only} ms ({leader}); at the other RTTs these rounds do not tell the variants apart."
            )
        }
        Crossover::Same {
            leader,
            significant,
        } => format!(
            "No crossover from {range}{at}: {leader} leads at every RTT where a lead is significant ({significant} of {}).",
            s.rtts_ms.len()
        ),
        Crossover::Undecided => format!(
            "No crossover can be named from {range}{at}: no RTT has a significant lead (see each RTT's verdict)."
        ),
    }
}

/// One reference-client setting with the fraction of it each variant reached.
#[derive(Debug, Clone)]
pub struct CeilingRow {
    /// Scenario name.
    pub scenario: String,
    /// The parameters that tell this setting from the scenario's others (`concurrency=10`).
    pub setting: String,
    /// The client (`reqwest`, `tokio-postgres`).
    pub client: String,
    /// Its throughput over the rounds, ops per second; `None` when it failed.
    pub throughput_per_s: Option<Summary>,
    /// Why it failed, if it did.
    pub failure: Option<String>,
    /// Each cell with these parameters: variant, interpreter, fraction of the ceiling.
    pub fractions: Vec<(String, String, f64)>,
}

/// The ceiling rows of a document, in record order.
pub fn ceiling_rows(cells: &[Cell], ceilings: &[CeilingRecord]) -> Vec<CeilingRow> {
    ceilings
        .iter()
        .map(|r| {
            let same: Vec<&CeilingRecord> = ceilings
                .iter()
                .filter(|o| o.scenario == r.scenario)
                .collect();
            let varying: Vec<String> = r
                .params
                .iter()
                .filter(|(k, v)| same.iter().any(|o| o.params.get(*k) != Some(*v)))
                .map(|(k, _)| k.clone())
                .collect();
            let setting = super::params_text(&r.params, &varying);
            let fractions = cells
                .iter()
                .filter(|c| c.scenario == r.scenario && c.params == r.params)
                .filter_map(|c| {
                    Some((
                        c.variant.clone(),
                        c.python.clone(),
                        ceiling_fraction(c, ceilings)?,
                    ))
                })
                .collect();
            CeilingRow {
                scenario: r.scenario.clone(),
                setting,
                client: r.client.clone(),
                throughput_per_s: r.throughput_per_s.clone(),
                failure: r.failure.clone(),
                fractions,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::RatioEstimate;

    fn leader(rtt: f64, winner: &str, verdict: Verdict) -> Leader {
        Leader {
            rtt_ms: rtt,
            decision: Decision {
                scenario: "db_remote".into(),
                group: format!("concurrency=10 rtt_ms={rtt}"),
                python: "3.12.1".into(),
                metric: "throughput /s",
                winner: winner.into(),
                runner_up: "other".into(),
                ratio: RatioEstimate {
                    ratio: 1.2,
                    ci95_low: 1.1,
                    ci95_high: 1.3,
                    paired: true,
                },
                beyond_spread: true,
                settled: None,
                verdict,
            },
        }
    }

    #[test]
    fn the_lead_changes_at_the_first_significant_new_leader() {
        let s = Verdict::Significant;
        let ls = [
            leader(0.0, "threads", s.clone()),
            leader(1.0, "asyncpg", Verdict::NotSignificant),
            leader(5.0, "threads", s.clone()),
            leader(20.0, "asyncpg", s.clone()),
        ];
        assert_eq!(
            crossover(&ls),
            Crossover::Changes {
                before: "threads".into(),
                last_rtt_ms: 5.0,
                after: "asyncpg".into(),
                at_rtt_ms: 20.0
            }
        );
    }

    #[test]
    fn one_leader_throughout_or_none_is_said_so() {
        let ls = [
            leader(0.0, "asyncpg", Verdict::Significant),
            leader(5.0, "threads", Verdict::TooFewRounds),
            leader(20.0, "asyncpg", Verdict::Significant),
        ];
        assert_eq!(
            crossover(&ls),
            Crossover::Same {
                leader: "asyncpg".into(),
                significant: 2
            }
        );
        let busy = [leader(0.0, "a", Verdict::Inconclusive("busy".into()))];
        assert_eq!(crossover(&busy), Crossover::Undecided);
        assert_eq!(setting_of("concurrency=10 rtt_ms=5"), "concurrency=10");
    }
}
