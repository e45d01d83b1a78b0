//! The adaptive rounds' stopping rule on this machine's real noise: two *equal* variants drawn
//! from the clean runs of the committed full run (docs/findings/core), each run divided by its
//! cell's median so only run-to-run noise is left, judged after every round by the lab's own
//! comparison with its looks, against the fixed five rounds `make run-all` uses. Prints the
//! rates (`cargo test --release --test stopping_noise -- --nocapture`).

use crate::common;

use asynclab::analysis::comparison::{self, Pairing, Rule};
use asynclab::results::Results;
use asynclab::stats::rng::Rng;
use asynclab::stats::Looks;

const RULE: Rule = Rule {
    alpha: 0.05,
    noise_threshold: 0.03,
    looks: None,
    floor: 0.0,
};

/// Every clean run's throughput over its cell's median, pooled over the closed-loop cells of
/// the committed full run.
fn noise() -> Vec<f64> {
    let json = common::findings_json(&common::root().join("docs/findings/core"));
    let doc: Results = serde_json::from_slice(&json).unwrap();
    let mut pool = Vec::new();
    for c in &doc.cells {
        if asynclab::catalogue::offered_rate(&c.params).is_some() {
            continue;
        }
        let xs: Vec<f64> = c
            .runs
            .iter()
            .filter(|r| !r.interference.as_ref().is_some_and(|i| i.contaminated))
            .map(|r| r.throughput_per_s)
            .filter(|x| *x > 0.0)
            .collect();
        if xs.len() >= 3 {
            let m = asynclab::stats::median(&xs);
            pool.extend(xs.iter().map(|x| x / m));
        }
    }
    pool
}

/// What one draw of two equal variants ends as: called different, and the rounds it took.
fn draw(pool: &[f64], rng: &mut Rng, looks: Option<Looks>) -> (bool, usize) {
    let (min, max) = looks.map_or((5, 5), |l| (l.min, l.max));
    let rule = Rule { looks, ..RULE };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for n in 1..=max {
        a.push(pool[rng.below(pool.len())]);
        b.push(pool[rng.below(pool.len())]);
        if n < min {
            continue;
        }
        let c = comparison::compare(&a, &b, Pairing::ByRound, rule);
        if c.verdict.is_significant() {
            return (true, n);
        }
        if comparison::settled(&c, rule).is_some() {
            return (false, n);
        }
    }
    (false, max)
}

#[test]
fn equal_variants_on_real_noise_are_called_different_no_more_often_than_with_fixed_rounds() {
    let pool = noise();
    assert!(pool.len() >= 100, "{} clean runs: too few", pool.len());
    let draws = 1_000;
    let rate = |looks: Option<Looks>| {
        let mut rng = Rng::new(20261205);
        let (mut hits, mut rounds) = (0, 0);
        for _ in 0..draws {
            let (hit, n) = draw(&pool, &mut rng, looks);
            hits += usize::from(hit);
            rounds += n;
        }
        (hits as f64 / draws as f64, rounds as f64 / draws as f64)
    };
    let (fixed, _) = rate(None);
    let (adaptive, rounds) = rate(Some(Looks { min: 4, max: 10 }));
    eprintln!(
        "{} clean runs, spread {:.2}-{:.2} of their cell's median; {draws} draws: fixed 5 rounds called equal variants different in {:.2}%, adaptive 4-10 in {:.2}% ({rounds:.2} rounds on average)",
        pool.len(),
        pool.iter().copied().fold(f64::INFINITY, f64::min),
        pool.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        fixed * 100.0,
        adaptive * 100.0
    );
    assert!(adaptive <= RULE.alpha, "{adaptive}");
    // Within the draws' own error of the fixed rule's rate (two standard errors of its count).
    let slack = 2.0 * (fixed.max(1.0 / draws as f64) / draws as f64).sqrt();
    assert!(
        adaptive <= fixed + slack,
        "adaptive {adaptive} against fixed {fixed}"
    );
}
