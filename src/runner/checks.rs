//! Cross-cell checks: variants of one scenario that must compute the same answer (the
//! catalogue's `agree` keys, e.g. rows and checksum) really did, round by round; a correctness
//! study's (`correctness = true`) expected-versus-observed rows all match; and where the
//! catalogue asks (`check_server_requests`), each run's request count is the mock server's.

use std::collections::BTreeMap;

use crate::catalogue::Scenario;
use crate::results::Cell;

/// One line per disagreement between variants that must agree, per wrong row of a correctness
/// study and per run whose request count the mock server contradicts.
pub fn disagreements(cells: &[Cell], scenarios: &[&Scenario]) -> Vec<String> {
    let mut out = Vec::new();
    for s in scenarios.iter().filter(|s| !s.agree.is_empty()) {
        // Cells that must agree share scenario, interpreter and matrix group.
        let mut groups: BTreeMap<(&str, &str), Vec<&Cell>> = BTreeMap::new();
        for c in cells.iter().filter(|c| c.scenario == s.name) {
            groups
                .entry((c.python.as_str(), c.group.as_str()))
                .or_default()
                .push(c);
        }
        for ((python, group), members) in groups {
            for key in &s.agree {
                let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for c in &members {
                    for r in &c.runs {
                        let v = r
                            .extra
                            .value(key)
                            .map(|v| v.to_string())
                            .unwrap_or_else(|| "missing".into());
                        let who = format!("{} round {}", c.variant, r.round + 1);
                        seen.entry(v).or_default().push(who);
                    }
                }
                if seen.len() > 1 {
                    let detail: Vec<String> = seen
                        .iter()
                        .map(|(v, who)| format!("{key}={v} from {}", who.join(", ")))
                        .collect();
                    out.push(format!(
                        "{} ({python}{}{group}): variants disagree on {key} — a variant computed something else: {}",
                        s.name,
                        if group.is_empty() { "" } else { ", " },
                        detail.join("; ")
                    ));
                }
            }
        }
    }
    out.extend(wrong_rows(cells, scenarios));
    out.extend(miscounted_requests(cells, scenarios));
    out
}

/// One line per run whose ops + errors differ from the requests the mock server served, in
/// scenarios whose catalogue entry sets `check_server_requests`.
fn miscounted_requests(cells: &[Cell], scenarios: &[&Scenario]) -> Vec<String> {
    let checked = |c: &Cell| {
        scenarios
            .iter()
            .any(|s| s.name == c.scenario && s.check_server_requests)
    };
    cells
        .iter()
        .filter(|c| checked(c))
        .flat_map(|c| c.runs.iter().map(move |r| (c, r)))
        .filter_map(|(c, r)| {
            let served = r.server_requests?;
            (served != r.ops + r.errors).then(|| {
                format!(
                    "{}: round {} reported {} requests but the mock server served {} — the variant's count is not trustworthy",
                    c.id,
                    r.round + 1,
                    r.ops + r.errors,
                    served
                )
            })
        })
        .collect()
}

/// One line per row of a correctness study whose observed value is not the expected one.
fn wrong_rows(cells: &[Cell], scenarios: &[&Scenario]) -> Vec<String> {
    let text = |v: &serde_json::Value| {
        v.as_str()
            .map(String::from)
            .unwrap_or_else(|| v.to_string())
    };
    let mut out = Vec::new();
    for s in scenarios.iter().filter(|s| s.correctness) {
        for c in cells.iter().filter(|c| c.scenario == s.name) {
            for r in &c.runs {
                for row in r
                    .extra
                    .correctness_rows()
                    .into_iter()
                    .flatten()
                    .filter(|row| !row.ok)
                {
                    out.push(format!(
                        "{} round {}: {}: expected {}, observed {}",
                        c.id,
                        r.round + 1,
                        text(&row.case),
                        text(&row.expected),
                        text(&row.observed)
                    ));
                }
            }
        }
    }
    out
}
