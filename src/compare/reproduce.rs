//! Whether a second run reproduces a first (`asynclab compare A B --reproduce`): every verdict
//! each run reached on its own (each variant against its baseline, the catalogue's contrasts,
//! the decision table's winner against its runner-up, the service questions' async advantage
//! and the kind it names, and the ratios the loop and per-operation tables print, judged round
//! by round though those tables call no verdict), matched by what it compares, must agree; so
//! must each answer in words that a table gives instead of a ratio (what a server did with a
//! slow consumer).
//!
//! **The rule.** A verdict of A is reproduced by B's verdict on the same comparison when
//! (1) their classes agree (*different*: significant; *not shown different*: not significant,
//! within noise or too few rounds; *inconclusive*), (2) a significant verdict keeps its sign
//! (and a decision its winner), and (3) the two ratios lie within their combined intervals:
//! `|ln r_A − ln r_B| ≤ √(h_A² + h_B²)`, `h` each interval's half-width in logs. An answer in
//! words is reproduced by the same words. A run is
//! reproduced when every comparison both runs made is. What only one run made is listed, not
//! judged.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::analysis::comparison::{Comparison, Verdict};
use crate::analysis::runtime::{LoopEntry, REFERENCE_LOOP};
use crate::analysis::scenario::VsBaseline;
use crate::analysis::{analyze, Report};
use crate::results::Results;

/// One comparison a run made, by what it compares.
#[derive(Debug, Clone)]
struct Made {
    /// What the ratio is, in words.
    what: String,
    /// For a decision: the winner (its sign is who won).
    winner: Option<String>,
    /// For an answer in words, the words (its ratio and interval are not judged).
    answer: Option<String>,
    ratio: f64,
    low: f64,
    high: f64,
    verdict: Verdict,
}

/// One comparison both runs made, and whether B reproduces A on it.
#[derive(Debug, Clone)]
pub struct Check {
    /// The comparison, in words.
    pub what: String,
    /// A's outcome and B's, as the tables print them.
    pub a: String,
    pub b: String,
    /// None when B reproduces A; else why not.
    pub failure: Option<String>,
}

/// What `--reproduce` found.
#[derive(Debug, Clone)]
pub struct Reproduction {
    /// Every comparison both runs made.
    pub checks: Vec<Check>,
    /// Comparisons only one run made ("A only: ..." / "B only: ...").
    pub unmatched: Vec<String>,
    /// Each run's resolution lines (its A/A twins).
    pub resolutions: (Vec<String>, Vec<String>),
}

impl Reproduction {
    /// Whether every comparison both runs made reproduced (and there was one).
    pub fn reproduced(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.failure.is_none())
    }
}

/// The verdict's class: what must agree between the runs.
fn class(v: &Verdict) -> &'static str {
    match v {
        Verdict::Significant => "different",
        Verdict::Inconclusive(_) => "inconclusive",
        _ => "not shown different",
    }
}

fn made(what: String, winner: Option<String>, c: &Comparison) -> Made {
    Made {
        what,
        winner,
        answer: None,
        ratio: c.ratio.ratio,
        low: c.ratio.ci95_low,
        high: c.ratio.ci95_high,
        verdict: c.verdict.clone(),
    }
}

/// Every comparison `r` made, keyed by what it compares.
fn comparisons(r: &Report) -> BTreeMap<String, Made> {
    let at = |group: &str, python: &str| {
        if group.is_empty() {
            format!("Python {python}")
        } else {
            format!("{group}, Python {python}")
        }
    };
    let mut out = BTreeMap::new();
    for sc in &r.scenarios {
        let base = sc.baseline.as_deref().unwrap_or("baseline");
        for row in &sc.rows {
            if let VsBaseline::Ratio(c) = &row.vs_baseline {
                let cell = row.cell;
                let what = format!(
                    "{}: {} against {base} ({}), throughput",
                    sc.name,
                    cell.variant,
                    at(&cell.group, &cell.python)
                );
                out.insert(what.clone(), made(what, None, c));
            }
        }
    }
    for c in &r.contrasts {
        if let Some(cmp) = &c.comparison {
            let what = format!(
                "{}: {} against {} ({}), contrast",
                c.scenario,
                c.contrast.new,
                c.contrast.base,
                at(&c.group, &c.python)
            );
            out.insert(what.clone(), made(what, None, cmp));
        }
    }
    for d in &r.decisions {
        let what = format!(
            "{}: the best variant ({}), {}",
            d.scenario,
            at(&d.group, &d.python),
            d.metric
        );
        let m = Made {
            what: what.clone(),
            winner: Some(d.winner.clone()),
            answer: None,
            ratio: d.ratio.ratio,
            low: d.ratio.ci95_low,
            high: d.ratio.ci95_high,
            verdict: d.verdict.clone(),
        };
        out.insert(what, m);
    }
    for l in &r.loops {
        for row in &l.rows {
            for (lp, e) in l.loops.iter().zip(&row.entries) {
                if let LoopEntry::Measured {
                    paired: Some(c), ..
                } = e
                {
                    let what = format!(
                        "{}: {lp} against {REFERENCE_LOOP} ({}, Python {}), ms per batch",
                        l.scenario, row.variant, row.python
                    );
                    out.insert(what.clone(), made(what, None, c));
                }
            }
        }
    }
    for o in &r.ops {
        for t in &o.tables {
            let base = &t.pythons[0];
            for row in &t.rows {
                for (p, e) in t.pythons.iter().zip(&row.entries) {
                    if let Some(c) = e.as_ref().and_then(|e| e.paired.as_ref()) {
                        let what = format!(
                            "{}: Python {p} against {base} ({}, {}), ns per op",
                            o.scenario, row.op, t.event_loop
                        );
                        out.insert(what.clone(), made(what, None, c));
                    }
                }
            }
        }
    }
    for s in &r.slow_consumers {
        let what = format!(
            "{}: what {} did with the slow client (Python {})",
            s.scenario, s.variant, s.python
        );
        let (room, slow) = s.effects();
        let m = Made {
            what: what.clone(),
            winner: None,
            answer: Some(format!("{}; {}", room.words(), slow.words())),
            ratio: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
            verdict: Verdict::NotSignificant,
        };
        out.insert(what, m);
    }
    for a in &r.service_answers {
        if let Some(c) = &a.async_advantage {
            let what = format!(
                "{}: {} ({}), async against sync",
                a.scenario,
                a.question.text(),
                at(&a.setting, &a.python)
            );
            let winner = a.leader().map(String::from);
            out.insert(what.clone(), made(what, winner, c));
        }
    }
    out
}

fn outcome(m: &Made) -> String {
    if let Some(words) = &m.answer {
        return words.clone();
    }
    let who = m
        .winner
        .as_deref()
        .map_or(String::new(), |w| format!("{w} by "));
    format!(
        "{who}{}× [{}–{}] {}",
        crate::format::num(m.ratio),
        crate::format::num(m.low),
        crate::format::num(m.high),
        m.verdict.text()
    )
}

/// Why B does not reproduce A on one comparison; None when it does.
fn failure(a: &Made, b: &Made) -> Option<String> {
    if a.answer.is_some() || b.answer.is_some() {
        return (a.answer != b.answer).then(|| "a different answer".to_string());
    }
    if class(&a.verdict) != class(&b.verdict) {
        return Some(format!(
            "the verdicts differ: {} against {}",
            class(&a.verdict),
            class(&b.verdict)
        ));
    }
    if a.verdict.is_significant() {
        if a.winner != b.winner {
            return Some("a different winner".into());
        }
        if (a.ratio > 1.0) != (b.ratio > 1.0) {
            return Some("the difference changed sign".into());
        }
    }
    let half = |m: &Made| (m.high.ln() - m.low.ln()) / 2.0;
    let apart = (a.ratio.ln() - b.ratio.ln()).abs();
    let allowed = (half(a).powi(2) + half(b).powi(2)).sqrt();
    if !apart.is_finite() || apart > allowed {
        return Some(format!(
            "the ratios lie {}% apart, beyond their combined intervals (±{}%)",
            crate::format::num(apart.exp_m1() * 100.0),
            crate::format::num(allowed.exp_m1() * 100.0)
        ));
    }
    None
}

/// Whether run `b` reproduces run `a`.
pub fn reproduce(a: &Results, b: &Results) -> Reproduction {
    let (ra, rb) = (analyze(a), analyze(b));
    let (ma, mb) = (comparisons(&ra), comparisons(&rb));
    let mut checks = Vec::new();
    let mut unmatched = Vec::new();
    for (key, x) in &ma {
        match mb.get(key) {
            Some(y) => checks.push(Check {
                what: x.what.clone(),
                a: outcome(x),
                b: outcome(y),
                failure: failure(x, y),
            }),
            None => unmatched.push(format!("A only: {}", x.what)),
        }
    }
    unmatched.extend(
        mb.keys()
            .filter(|k| !ma.contains_key(*k))
            .map(|k| format!("B only: {k}")),
    );
    let lines = |r: &Report| {
        r.twins
            .iter()
            .map(|t| format!("{}: {}", t.scenario, crate::export::resolution_line(t)))
            .collect::<Vec<_>>()
    };
    Reproduction {
        checks,
        unmatched,
        resolutions: (lines(&ra), lines(&rb)),
    }
}

/// Verdict classes (and the outcome as printed) by the ids of the two cells compared.
type ByCells = BTreeMap<(String, String), (&'static str, String)>;

/// Each run's verdict class on every comparison of two cells it made (against the baseline, or
/// a contrast), keyed by the two cells' ids (scenario, variant, every parameter, interpreter).
fn classes_by_cells(r: &Report) -> ByCells {
    let mut out = BTreeMap::new();
    for sc in &r.scenarios {
        for row in &sc.rows {
            let VsBaseline::Ratio(c) = &row.vs_baseline else {
                continue;
            };
            let base = sc.rows.iter().find(|b| {
                matches!(b.vs_baseline, VsBaseline::IsBaseline)
                    && b.cell.group == row.cell.group
                    && b.cell.python == row.cell.python
            });
            if let Some(b) = base {
                let key = (row.cell.id.clone(), b.cell.id.clone());
                out.insert(key, (class(&c.verdict), crate::export::ratio_text(c)));
            }
        }
    }
    for c in &r.contrasts {
        if let Some(cmp) = &c.comparison {
            out.insert(
                c.cells.clone(),
                (class(&cmp.verdict), crate::export::ratio_text(cmp)),
            );
        }
    }
    out
}

/// Where two of `docs` (name, document) reach different verdict classes on the same
/// comparison of the same two cells: one line each, "NEW vs BASE: PAGE says ..., PAGE says ...".
pub fn disagreements(docs: &[(String, Results)]) -> Vec<String> {
    let reports: Vec<(&str, ByCells)> = docs
        .iter()
        .map(|(name, d)| (name.as_str(), classes_by_cells(&analyze(d))))
        .collect();
    let mut out = Vec::new();
    for (i, (na, a)) in reports.iter().enumerate() {
        for (nb, b) in &reports[i + 1..] {
            for (key, (ca, ta)) in a {
                if let Some((cb, tb)) = b.get(key) {
                    if ca != cb {
                        out.push(format!(
                            "{} vs {}: {na} says {ta}, {nb} says {tb}",
                            key.0, key.1
                        ));
                    }
                }
            }
        }
    }
    out
}

/// The reproduction as text: each comparison with both outcomes, what did not reproduce, the
/// runs' resolutions, and the conclusion.
pub fn render(r: &Reproduction, names: (&str, &str)) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Does B ({}) reproduce A ({})? {} comparison(s) both runs made:",
        names.1,
        names.0,
        r.checks.len()
    );
    for c in &r.checks {
        let mark = if c.failure.is_none() { "ok  " } else { "FAIL" };
        let _ = writeln!(
            out,
            "  {mark} {}\n         A: {}\n         B: {}",
            c.what, c.a, c.b
        );
        if let Some(why) = &c.failure {
            let _ = writeln!(out, "         does not reproduce: {why}");
        }
    }
    for u in &r.unmatched {
        let _ = writeln!(out, "  (not judged) {u}");
    }
    for (name, lines) in [("A", &r.resolutions.0), ("B", &r.resolutions.1)] {
        if lines.is_empty() {
            let _ = writeln!(out, "Resolution of {name}: no A/A twin ran");
        }
        for l in lines {
            let _ = writeln!(out, "Resolution of {name}: {l}");
        }
    }
    let failed = r.checks.iter().filter(|c| c.failure.is_some()).count();
    let _ = if r.checks.is_empty() {
        writeln!(
            out,
            "Not reproduced: the runs made no comparison in common."
        )
    } else if failed == 0 {
        writeln!(
            out,
            "Reproduced: all {} comparison(s) agree in verdict, sign and ratio (within their combined intervals).",
            r.checks.len()
        )
    } else {
        writeln!(
            out,
            "Not reproduced: {failed} of {} comparison(s) differ (marked FAIL).",
            r.checks.len()
        )
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reproduces_itself_and_not_a_changed_copy() {
        let doc = crate::results::snapshot_fixture();
        let same = reproduce(&doc, &doc);
        assert!(same.reproduced(), "{}", render(&same, ("a", "a")));
        assert!(same.checks.len() >= 3);
        // Halve one variant's throughput in B: its verdicts move beyond their intervals.
        let mut slower = doc.clone();
        let cell = slower
            .cells
            .iter_mut()
            .find(|c| c.scenario == "io_http" && c.variant == "asyncio")
            .unwrap();
        for r in &mut cell.runs {
            r.throughput_per_s *= 0.5;
        }
        let r = reproduce(&doc, &slower);
        assert!(!r.reproduced());
        let text = render(&r, ("a", "b"));
        assert!(text.contains("FAIL io_http: asyncio against"), "{text}");
        assert!(text.contains("Not reproduced: "), "{text}");
    }

    #[test]
    fn the_rule_needs_the_class_the_sign_and_the_intervals() {
        let m = |ratio: f64, half: f64, verdict: Verdict| Made {
            what: String::new(),
            winner: None,
            answer: None,
            ratio,
            low: ratio / (1.0 + half),
            high: ratio * (1.0 + half),
            verdict,
        };
        use Verdict::*;
        assert_eq!(
            failure(&m(1.2, 0.05, Significant), &m(1.22, 0.05, Significant)),
            None
        );
        assert!(failure(&m(1.2, 0.05, Significant), &m(1.2, 0.05, NotSignificant)).is_some());
        assert!(failure(&m(1.2, 0.05, Significant), &m(0.8, 0.05, Significant)).is_some());
        assert!(failure(&m(1.2, 0.02, Significant), &m(1.4, 0.02, Significant)).is_some());
        // "Within noise" and "not significant" are one class: neither shows a difference.
        assert_eq!(
            failure(&m(1.01, 0.05, WithinNoise), &m(0.99, 0.05, NotSignificant)),
            None
        );
        // An answer in words needs the same words.
        let said = |words: &str| Made {
            answer: Some(words.into()),
            ..m(f64::NAN, 0.0, NotSignificant)
        };
        assert_eq!(failure(&said("stalled"), &said("stalled")), None);
        assert!(failure(&said("stalled"), &said("went on")).is_some());
    }
}
