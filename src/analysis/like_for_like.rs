//! Latency like for like: the variants of one open-loop sweep setting at the same offered
//! rates, those every variant was measured at up to the slowest variant's knee, so no variant's
//! tail is read at a load another one never carried.
//!
//! With `--rates auto` every variant climbs the same doubling ladder, so these rates are the
//! slowest knee and its halvings (fractions 1, ½, ¼ … of it).

use std::collections::BTreeMap;

use crate::results::{Knee, Sweep, SweepPoint};

/// One setting's variants at their shared rates.
#[derive(Debug, Clone)]
pub struct LikeForLike {
    /// Scenario name.
    pub scenario: String,
    /// Interpreter version.
    pub python: String,
    /// The variants compared, in the report's order.
    pub variants: Vec<String>,
    /// The variant whose knee is lowest.
    pub slowest: String,
    /// Its knee, per second: the highest rate of the rows.
    pub slowest_knee_per_s: f64,
    /// Shared rates, ascending, each with every variant's point there (in `variants` order).
    pub rows: Vec<(f64, Vec<SweepPoint>)>,
}

/// The highest rate a sweep sustained: its knee, or its top rate when it never saturated;
/// None when it saturated at its lowest rate.
fn sustained(s: &Sweep) -> Option<f64> {
    match s.knee {
        Knee::Reached => s.knee_rate_per_s,
        Knee::NotReached => s.points.last().map(|p| p.offered_rate_per_s),
        Knee::BelowLowestRate => None,
    }
}

/// Settings (scenario, interpreter and every parameter but the rate) with two or more
/// variants; a setting where some variant never kept up has no shared sustained rate.
pub fn analyze(sweeps: &[Sweep]) -> Vec<LikeForLike> {
    let mut order: Vec<(String, String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String, String), Vec<&Sweep>> = BTreeMap::new();
    for s in sweeps {
        let key = (
            s.scenario.clone(),
            s.python.clone(),
            serde_json::to_string(&s.params).unwrap_or_default(),
        );
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(s);
    }
    order
        .into_iter()
        .filter_map(|key| {
            let group = &groups[&key];
            if group.len() < 2 {
                return None;
            }
            let knees: Vec<f64> = group.iter().map(|s| sustained(s)).collect::<Option<_>>()?;
            let (slowest_at, slowest_knee) = knees
                .iter()
                .copied()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(&b.1))?;
            let mut rates: Vec<f64> = group[0]
                .points
                .iter()
                .map(|p| p.offered_rate_per_s)
                .filter(|r| *r <= slowest_knee)
                .collect();
            rates.retain(|r| {
                group
                    .iter()
                    .all(|s| s.points.iter().any(|p| p.offered_rate_per_s == *r))
            });
            let rows = rates
                .into_iter()
                .map(|r| {
                    let points = group
                        .iter()
                        .filter_map(|s| s.points.iter().find(|p| p.offered_rate_per_s == r))
                        .cloned()
                        .collect();
                    (r, points)
                })
                .collect();
            Some(LikeForLike {
                scenario: key.0,
                python: key.1,
                slowest: group[slowest_at].variant.clone(),
                slowest_knee_per_s: slowest_knee,
                variants: group.iter().map(|s| s.variant.clone()).collect(),
                rows,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(rate: f64, saturated: bool) -> SweepPoint {
        SweepPoint {
            cell_id: format!("c{rate}"),
            offered_rate_per_s: rate,
            achieved_rate_per_s: Some(rate),
            corrected_p50_ms: Some(1.0),
            corrected_p99_ms: Some(2.0),
            corrected_p99_9_ms: Some(3.0),
            uncorrected_p50_ms: Some(1.0),
            uncorrected_p99_ms: Some(2.0),
            abandoned: 0,
            saturated,
            reason: None,
        }
    }

    fn sweep(variant: &str, rates: &[(f64, bool)]) -> Sweep {
        let points: Vec<SweepPoint> = rates.iter().map(|(r, s)| point(*r, *s)).collect();
        let (knee, knee_rate_per_s, saturated_rate_per_s) = crate::analysis::sweep::knee(&points);
        Sweep {
            scenario: "s".into(),
            variant: variant.into(),
            python: "3.12".into(),
            params: BTreeMap::new(),
            reference_ms: Some(1.0),
            points,
            knee,
            knee_rate_per_s,
            saturated_rate_per_s,
        }
    }

    #[test]
    fn rows_stop_at_the_slowest_knee_and_keep_only_shared_rates() {
        let fast = sweep(
            "fast",
            &[(10.0, false), (20.0, false), (40.0, false), (80.0, true)],
        );
        let slow = sweep("slow", &[(10.0, false), (20.0, false), (40.0, true)]);
        let all = [fast, slow];
        let l = analyze(&all);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].slowest, "slow");
        assert_eq!(l[0].slowest_knee_per_s, 20.0);
        let rates: Vec<f64> = l[0].rows.iter().map(|r| r.0).collect();
        assert_eq!(rates, [10.0, 20.0]);
        assert!(l[0].rows.iter().all(|r| r.1.len() == 2));
    }

    #[test]
    fn a_variant_that_never_kept_up_leaves_no_shared_rate() {
        let all = [
            sweep("fast", &[(10.0, false), (20.0, true)]),
            sweep("slow", &[(10.0, true)]),
        ];
        assert!(analyze(&all).is_empty());
    }
}
