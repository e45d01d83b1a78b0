//! Runs cells in interleaved rounds after warm-ups, each round in its own random order (seeded:
//! `C A D B, B D A C, ...`), and keeps the
//! results document current after every run. With adaptive rounds, a cell whose comparisons
//! are settled leaves the rotation; the others go on to the maximum, or until the next round
//! would end after the plan's deadline (a time budget).

use std::time::Instant;

use super::executor::{Executor, RunError};
use super::matrix::CellSpec;
use super::tally::{Event, Tally};
use crate::results::{AdaptiveRounds, Cell, CellStatus, RoundsStop, StopCause};
use crate::stats::rng::{seed_for, Rng};

/// Rounds and warm-ups.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Measured rounds per cell; with adaptive rounds, the least before the first check.
    pub rounds: usize,
    /// The most measured rounds a cell gets: `rounds` for fixed rounds; above it, each cell
    /// is checked after every round from `rounds` on and stops once settled.
    pub max_rounds: usize,
    /// Warm-up runs per cell, discarded.
    pub warmups: usize,
    /// With adaptive rounds: no round past the minimum starts unless the one before, as long
    /// again, would end by then (a time budget's share); None for no deadline.
    pub deadline: Option<Instant>,
    /// How many times a contaminated run (the machine interfered) is repeated in its round.
    pub repeats: usize,
    /// Derives a cell's summary from its runs after each measured run (the analysis's rule,
    /// handed to the runner with the plan).
    pub derive: fn(&mut Cell),
    /// Seed of the cells' order within each round ([`round_order`]; `method.order_seed`).
    pub order_seed: u64,
}

impl Plan {
    /// The runs `cells` cells take under this plan at most, before any repeat.
    pub fn runs(&self, cells: usize) -> usize {
        cells * (self.warmups + self.max_rounds)
    }

    /// Whether cells are checked after every round and stop when settled.
    pub fn adaptive(&self) -> bool {
        self.max_rounds > self.rounds
    }
}

/// Whether each cell's comparisons are settled, given every cell of the batch: Ok(why) for a
/// cell that may stop, Err(which comparisons are open) for one that needs more rounds. The
/// analysis's rule, handed to the runner (it is only asked with adaptive rounds).
pub type Settle<'a> = dyn FnMut(&[Cell]) -> Vec<Result<String, String>> + 'a;

/// A new, empty results cell for a spec.
pub fn new_cell(spec: &CellSpec) -> Cell {
    Cell {
        id: spec.id.clone(),
        scenario: spec.scenario.clone(),
        variant: spec.variant.clone(),
        python: spec.python.version.clone(),
        event_loop: spec
            .params
            .get("loop")
            .and_then(|v| v.as_str())
            .map(String::from),
        params: spec.params.clone(),
        group: spec.group.clone(),
        decide_by: spec.decide_by,
        status: CellStatus::Running,
        failure: None,
        runs: Vec::new(),
        summary: None,
        warnings: Vec::new(),
        adaptive: None,
        warmup_timelines: Vec::new(),
        twin_of: spec.twin_of.clone(),
    }
}

/// The order of cell indices in pass `r` (warm-ups included) of the batch whose first cell is
/// `first`: a permutation drawn from `seed`, `first` and `r` (Fisher–Yates). Random rather than
/// rotated, so under "no difference" either side of a round is as likely to go first, whatever
/// drifts with the position in a round (what the paired test's symmetry rests on:
/// `stats::paired`); seeded, so a run's order can be replayed.
pub fn round_order(n: usize, r: usize, seed: u64, first: &str) -> Vec<usize> {
    let mut rng = Rng::new(seed_for(&format!("asynclab/order/{seed}/{first}"), &[r]));
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// Measures `specs` (one scenario's cells) into `cells`, calling the plan's `derive` on a cell
/// after each of its measured runs and `save` after every run so nothing measured is lost. A
/// failing cell is marked failed and skipped in later rounds; the others go on. A run the
/// worker skipped (an optional package is not installed) marks the cell skipped with the
/// worker's reason instead. Ctrl-C returns an
/// error after saving. `tally` counts every run (its total must already hold these cells'
/// [`Plan::runs`]); `progress` hears of each run before it starts and of repeats, failures
/// and skips.
#[allow(clippy::too_many_arguments)]
pub fn run_interleaved(
    specs: &[CellSpec],
    plan: Plan,
    exec: &mut dyn Executor,
    cells: &mut [Cell],
    save: &mut dyn FnMut(&[Cell]) -> anyhow::Result<()>,
    settle: &mut Settle<'_>,
    tally: &mut Tally,
    progress: &mut dyn FnMut(&Tally, Event<'_>),
) -> anyhow::Result<()> {
    assert_eq!(specs.len(), cells.len());
    let n = specs.len();
    let total = plan.warmups + plan.max_rounds;
    if plan.adaptive() {
        for c in cells.iter_mut() {
            c.adaptive = Some(AdaptiveRounds {
                min_rounds: plan.rounds,
                max_rounds: plan.max_rounds,
                stop: None,
            });
        }
    }
    let stopped = |c: &Cell| c.adaptive.as_ref().is_some_and(|a| a.stop.is_some());
    let mut last_round: Option<std::time::Duration> = None;
    let mut open: Vec<String> = vec![String::new(); n];
    for step in 0..total {
        let warm = step < plan.warmups;
        let round = step.saturating_sub(plan.warmups);
        if cells
            .iter()
            .all(|c| matches!(c.status, CellStatus::Failed | CellStatus::Skipped) || stopped(c))
        {
            break;
        }
        let past_deadline = match (plan.deadline, last_round) {
            (Some(deadline), Some(took)) => Instant::now() + took > deadline,
            _ => false,
        };
        if plan.adaptive() && !warm && round >= plan.rounds && past_deadline {
            for (i, c) in cells.iter_mut().enumerate() {
                if c.status != CellStatus::Running || stopped(c) {
                    continue;
                }
                tally.total = tally.total.saturating_sub(plan.max_rounds - round);
                if let Some(a) = c.adaptive.as_mut() {
                    a.stop = Some(RoundsStop {
                        rounds: round,
                        cause: StopCause::Budget,
                        reason: format!("the time budget, with open: {}", open[i]),
                    });
                }
            }
            save(cells)?;
            break;
        }
        let started = Instant::now();
        let first = specs.first().map_or("", |s| s.id.as_str());
        for i in round_order(n, step, plan.order_seed, first) {
            if matches!(cells[i].status, CellStatus::Failed | CellStatus::Skipped)
                || stopped(&cells[i])
            {
                continue;
            }
            let label = if warm {
                "warm-up".to_string()
            } else if plan.adaptive() {
                format!("round {}/{}-{}", round + 1, plan.rounds, plan.max_rounds)
            } else {
                format!("round {}/{}", round + 1, plan.rounds)
            };
            let mut attempt = 0;
            let outcome = loop {
                // Every run, a repeat too, is announced, so the numbered lines count 1, 2, 3…
                let shown = match attempt {
                    0 => label.clone(),
                    k => format!("{label}, repeat {k}/{}", plan.repeats),
                };
                progress(
                    tally,
                    Event::Start {
                        label: &shown,
                        cell: &specs[i].id,
                    },
                );
                let outcome = exec.execute(&specs[i], (!warm).then_some(round));
                tally.done += 1;
                let spoiled = match &outcome {
                    Ok(r) if !warm => r.interference.as_ref().and_then(|x| x.reason.clone()),
                    _ => None,
                };
                match spoiled {
                    Some(why) if attempt < plan.repeats => {
                        attempt += 1;
                        tally.total += 1;
                        progress(
                            tally,
                            Event::Note(&format!(
                                "{label}: {} repeated ({attempt}/{}): {why}",
                                specs[i].id, plan.repeats
                            )),
                        );
                        if let Ok(r) = outcome {
                            cells[i].runs.push(r);
                        }
                        save(cells)?;
                    }
                    _ => break outcome,
                }
            };
            match outcome {
                Ok(record) => {
                    if !warm {
                        cells[i].runs.push(record);
                        (plan.derive)(&mut cells[i]);
                    } else if let Some(t) = record.timeline {
                        cells[i].warmup_timelines.push(t);
                    }
                }
                Err(RunError::Skipped { reason, .. }) => {
                    tally.total = tally.total.saturating_sub(total - step - 1);
                    progress(
                        tally,
                        Event::Note(&format!("SKIPPED {}: {reason}", specs[i].id)),
                    );
                    cells[i].status = CellStatus::Skipped;
                    cells[i].failure = Some(reason);
                }
                Err(RunError::Failed(msg)) => {
                    tally.total = tally.total.saturating_sub(total - step - 1);
                    progress(
                        tally,
                        Event::Note(&format!(
                            "FAILED {}: {}",
                            specs[i].id,
                            msg.lines().next().unwrap_or("")
                        )),
                    );
                    cells[i].status = CellStatus::Failed;
                    cells[i].failure = Some(format!("{label}: {msg}"));
                }
                Err(RunError::Interrupted) => {
                    save(cells)?;
                    crate::interrupt::check()?;
                    anyhow::bail!("interrupted");
                }
            }
            save(cells)?;
        }
        if !warm {
            last_round = Some(started.elapsed());
        }
        if plan.adaptive() && !warm && round + 1 >= plan.rounds {
            let last = round + 1 == plan.max_rounds;
            let verdicts = settle(cells);
            for ((c, why), open) in cells.iter_mut().zip(verdicts).zip(open.iter_mut()) {
                if c.status != CellStatus::Running || stopped(c) {
                    continue;
                }
                let stop = match why {
                    Ok(reason) => RoundsStop {
                        rounds: round + 1,
                        cause: StopCause::Settled,
                        reason,
                    },
                    Err(which) if last => RoundsStop {
                        rounds: round + 1,
                        cause: StopCause::Maximum,
                        reason: format!("the maximum, with open: {which}"),
                    },
                    Err(which) => {
                        *open = which;
                        continue;
                    }
                };
                tally.total = tally.total.saturating_sub(plan.max_rounds - (round + 1));
                if let Some(a) = c.adaptive.as_mut() {
                    a.stop = Some(stop);
                }
            }
            save(cells)?;
        }
    }
    for c in cells.iter_mut() {
        if c.status == CellStatus::Running {
            c.status = CellStatus::Ok;
        }
    }
    save(cells)?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::python::PythonEnv;
    use crate::results::RunRecord;
    use crate::runner::executor::SkipKind;
    use std::collections::BTreeMap;
    use std::time::Duration;

    /// Records the order of calls and fails chosen variants; starts no process.
    struct MockExecutor {
        calls: Vec<(String, Option<usize>)>,
        fail: Option<&'static str>,
    }

    /// Interference of a run: contaminated or not.
    fn interference(contaminated: bool) -> crate::results::Interference {
        crate::results::Interference {
            foreign_cpu_s: if contaminated { 0.9 } else { 0.0 },
            foreign_cores: if contaminated { 0.9 } else { 0.0 },
            steal_s: 0.0,
            kernel_cpu_s: 0.0,
            involuntary_switches: 0,
            probe_before_ms: 5.0,
            probe_after_ms: 5.0,
            contaminated,
            reason: contaminated.then(|| "busy".to_string()),
        }
    }

    impl Executor for MockExecutor {
        fn execute(
            &mut self,
            cell: &CellSpec,
            round: Option<usize>,
        ) -> Result<RunRecord, RunError> {
            self.calls.push((cell.variant.clone(), round));
            if self.fail == Some(cell.variant.as_str()) {
                return Err(RunError::Failed("boom; stderr: Traceback".into()));
            }
            if cell.variant == "skipme" {
                return Err(RunError::Skipped {
                    kind: SkipKind::MissingPackage,
                    reason: "loop rsloop is not installed in this environment: make rsloop".into(),
                });
            }
            Ok(RunRecord {
                round: round.unwrap_or(0),
                wall_s: 1.0,
                inside_wall_s: 1.0,
                cpu_s: 0.5,
                baseline_rss_mib: 10.0,
                peak_rss_mib: 12.0,
                peak_rss_delta_mib: 2.0,
                memory_metric: crate::results::MEMORY_RSS_HWM.into(),
                ops: 10,
                errors: 0,
                server_requests: None,
                roles: Vec::new(),
                throughput_per_s: 10.0,
                latency_kind: "service".into(),
                latencies_ms: vec![1.0, 2.0, 3.0],
                latency_sets_ms: Default::default(),
                error_samples: vec![],
                // Variant "busy1": the first measured try of each round is contaminated;
                // "busy": every try is.
                interference: Some(interference(match cell.variant.as_str() {
                    "busy" => round.is_some(),
                    "busy1" => {
                        round.is_some()
                            && self
                                .calls
                                .iter()
                                .filter(|c| c.0 == "busy1" && c.1 == round)
                                .count()
                                == 1
                    }
                    _ => false,
                })),
                extra: Default::default(),
                timeline: None,
            })
        }
    }

    /// A cell spec of scenario `s` that starts no process (for executors that fake runs).
    pub(crate) fn spec(variant: &str) -> CellSpec {
        CellSpec {
            id: format!("s/{variant}"),
            scenario: "s".into(),
            script: "s.py".into(),
            variant: variant.into(),
            params: BTreeMap::new(),
            python: PythonEnv::fake("3.12.1"),
            timeout: Duration::from_secs(1),
            services: vec![],
            check_server_requests: false,
            group: String::new(),
            decide_by: crate::catalogue::DecideBy::Throughput,
            cpus: Vec::new(),
            network: None,
            server: None,
            twin_of: None,
        }
    }

    fn run(fail: Option<&'static str>) -> (MockExecutor, Vec<Cell>, usize) {
        let plan = Plan {
            rounds: 3,
            max_rounds: 3,
            warmups: 1,
            deadline: None,
            repeats: 2,
            derive: crate::analysis::summary::derive_cell,
            order_seed: 7,
        };
        let specs: Vec<CellSpec> = ["a", "b", "c"].iter().map(|v| spec(v)).collect();
        let mut cells: Vec<Cell> = specs.iter().map(new_cell).collect();
        let mut exec = MockExecutor {
            calls: vec![],
            fail,
        };
        let mut saves = 0;
        let mut tally = Tally {
            done: 0,
            total: plan.runs(specs.len()),
        };
        run_interleaved(
            &specs,
            plan,
            &mut exec,
            &mut cells,
            &mut |_| {
                saves += 1;
                Ok(())
            },
            &mut |_| unreachable!("fixed rounds are never checked"),
            &mut tally,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(tally.done, exec.calls.len(), "every run counted");
        assert_eq!(tally.done, tally.total, "the total ends at what ran");
        (exec, cells, saves)
    }

    /// 3 rounds after 1 warm-up, 2 repeats, of these variants; nothing fails on purpose.
    fn run_variants(variants: &[&str]) -> (MockExecutor, Vec<Cell>, Vec<Tally>) {
        let specs: Vec<CellSpec> = variants.iter().map(|v| spec(v)).collect();
        let mut cells: Vec<Cell> = specs.iter().map(new_cell).collect();
        let mut exec = MockExecutor {
            calls: vec![],
            fail: None,
        };
        let plan = Plan {
            rounds: 3,
            max_rounds: 3,
            warmups: 1,
            deadline: None,
            repeats: 2,
            derive: crate::analysis::summary::derive_cell,
            order_seed: 7,
        };
        let mut tally = Tally {
            done: 0,
            total: plan.runs(specs.len()),
        };
        let mut seen = Vec::new();
        run_interleaved(
            &specs,
            plan,
            &mut exec,
            &mut cells,
            &mut |_| Ok(()),
            &mut |_| unreachable!("fixed rounds are never checked"),
            &mut tally,
            &mut |t, _| seen.push(*t),
        )
        .unwrap();
        assert_eq!(tally.done, exec.calls.len(), "every run counted");
        assert_eq!(tally.done, tally.total, "the total ends at what ran");
        assert!(seen.iter().all(|t| t.done <= t.total), "{seen:?}");
        (exec, cells, seen)
    }

    #[test]
    fn rounds_interleave_in_a_seeded_random_order_after_warmups() {
        let (exec, cells, saves) = run(None);
        let order: Vec<String> = exec.calls.iter().map(|(v, _)| v.clone()).collect();
        for pass in order.chunks(3) {
            let mut sorted = pass.to_vec();
            sorted.sort();
            assert_eq!(sorted, ["a", "b", "c"], "every cell once a pass: {order:?}");
        }
        assert_eq!(
            order,
            run(None)
                .0
                .calls
                .iter()
                .map(|(v, _)| v.clone())
                .collect::<Vec<_>>(),
            "replayed by its seed"
        );
        assert!(
            exec.calls[..3].iter().all(|(_, r)| r.is_none()),
            "first pass is the warm-up"
        );
        assert!(cells
            .iter()
            .all(|c| c.runs.len() == 3 && c.status == CellStatus::Ok));
        assert_eq!(saves, 12 + 1, "saved after every run and at the end");
    }

    #[test]
    fn every_cell_goes_first_about_as_often() {
        // 3,000 passes of 3 cells: each first in a third of them, within 3 standard errors.
        let mut first = [0usize; 3];
        for seed in 0..300 {
            for r in 0..10 {
                first[round_order(3, r, seed, "x")[0]] += 1;
            }
        }
        let sd = (3000.0f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
        for f in first {
            assert!((f as f64 - 1000.0).abs() < 3.0 * sd, "{first:?}");
        }
        assert_ne!(
            round_order(5, 0, 1, "x"),
            round_order(5, 0, 1, "y"),
            "batches differ"
        );
    }

    #[test]
    fn a_failing_cell_is_marked_and_the_others_go_on() {
        let (exec, cells, _) = run(Some("b"));
        assert_eq!(
            exec.calls.iter().filter(|(v, _)| v == "b").count(),
            1,
            "not retried"
        );
        assert_eq!(cells[1].status, CellStatus::Failed);
        assert!(cells[1].failure.as_deref().unwrap().contains("Traceback"));
        assert!(cells[0].runs.len() == 3 && cells[2].runs.len() == 3);
    }

    #[test]
    fn a_skipped_run_marks_the_cell_skipped_not_failed() {
        let (exec, cells, seen) = run_variants(&["a", "skipme"]);
        assert_eq!(
            seen[0].total, 8,
            "2 cells × (1 warm-up + 3 rounds) up front"
        );
        assert_eq!(cells[1].status, CellStatus::Skipped);
        assert_eq!(
            cells[1].failure.as_deref(),
            Some("loop rsloop is not installed in this environment: make rsloop")
        );
        assert_eq!(
            exec.calls.iter().filter(|(v, _)| v == "skipme").count(),
            1,
            "not retried in later rounds"
        );
        assert_eq!(cells[0].status, CellStatus::Ok);
        assert_eq!(cells[0].runs.len(), 3);
    }

    #[test]
    fn contaminated_runs_are_kept_repeated_and_left_out() {
        let (_, cells, seen) = run_variants(&["a", "busy1", "busy"]);
        // 3 cells × 4 runs, plus 3 repeats of busy1 and 6 of busy.
        assert_eq!(seen.last().unwrap().total, 12 + 3 + 6);
        // a: clean, 3 runs. busy1: each round once contaminated, repeated once: 6 runs, 3 clean.
        assert_eq!(cells[0].runs.len(), 3);
        assert_eq!(cells[1].runs.len(), 6);
        let s1 = cells[1].summary.as_ref().unwrap();
        assert_eq!(
            (s1.rounds, s1.contaminated_runs, s1.rounds_without_clean_run),
            (3, 3, 0)
        );
        // busy: 1 + 2 repeats per round, none clean; the figure is still summarized.
        assert_eq!(cells[2].runs.len(), 9);
        let s2 = cells[2].summary.as_ref().unwrap();
        assert_eq!((s2.contaminated_runs, s2.rounds_without_clean_run), (9, 3));
        assert_eq!(cells[2].status, CellStatus::Ok);
    }

    /// Runs `variants` under adaptive `rounds..=max_rounds` after one warm-up, asking `settle`;
    /// the executor's calls, the cells and the final tally.
    fn run_adaptive(
        variants: &[&str],
        (rounds, max_rounds, deadline): (usize, usize, Option<Instant>),
        settle: &mut Settle<'_>,
    ) -> (MockExecutor, Vec<Cell>, Tally) {
        let specs: Vec<CellSpec> = variants.iter().map(|v| spec(v)).collect();
        let mut cells: Vec<Cell> = specs.iter().map(new_cell).collect();
        let mut exec = MockExecutor {
            calls: vec![],
            fail: None,
        };
        let plan = Plan {
            rounds,
            max_rounds,
            warmups: 1,
            deadline,
            repeats: 0,
            derive: crate::analysis::summary::derive_cell,
            order_seed: 7,
        };
        let mut tally = Tally {
            done: 0,
            total: plan.runs(specs.len()),
        };
        run_interleaved(
            &specs,
            plan,
            &mut exec,
            &mut cells,
            &mut |_| Ok(()),
            settle,
            &mut tally,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(tally.done, tally.total, "the total ends at what ran");
        (exec, cells, tally)
    }

    #[test]
    fn adaptive_rounds_stop_each_cell_when_settled_and_the_rest_at_the_maximum() {
        // "a" settles after 4 rounds, "b" after 5, "c" never: checked from round 3 to 6.
        let mut checks = Vec::new();
        let (exec, cells, tally) = run_adaptive(&["a", "b", "c"], (3, 6, None), &mut |cells| {
            checks.push(cells.iter().map(|c| c.runs.len()).collect::<Vec<_>>());
            cells
                .iter()
                .map(|c| {
                    let due = if c.variant == "a" { 4 } else { 5 };
                    if c.variant != "c" && c.runs.len() >= due {
                        Ok("different".into())
                    } else {
                        Err("a vs b: not significant".into())
                    }
                })
                .collect()
        });
        let runs: Vec<usize> = cells.iter().map(|c| c.runs.len()).collect();
        assert_eq!(runs, [4, 5, 6]);
        assert_eq!(checks.len(), 4, "after rounds 3, 4, 5 and 6: {checks:?}");
        assert_eq!(tally.done, 3 + 4 + 5 + 6, "warm-ups and measured runs");
        let stops: Vec<(usize, StopCause)> = cells
            .iter()
            .map(|c| {
                let s = c.adaptive.as_ref().unwrap().stop.as_ref().unwrap();
                (s.rounds, s.cause)
            })
            .collect();
        let (settled, max) = (StopCause::Settled, StopCause::Maximum);
        assert_eq!(stops, [(4, settled), (5, settled), (6, max)]);
        assert!(cells.iter().all(|c| c.status == CellStatus::Ok));
        let last_round: Vec<&str> = exec
            .calls
            .iter()
            .filter(|(_, r)| *r == Some(5))
            .map(|(v, _)| v.as_str())
            .collect();
        assert_eq!(last_round, ["c"], "settled cells leave the rotation");
    }

    #[test]
    fn adaptive_rounds_end_early_when_every_cell_is_settled() {
        let (exec, cells, tally) = run_adaptive(&["a", "b"], (4, 10, None), &mut |cells| {
            vec![Ok("equal within noise".into()); cells.len()]
        });
        assert_eq!(
            exec.calls.len(),
            2 + 8,
            "a warm-up and 4 rounds of 2 cells, then settled"
        );
        assert_eq!(tally.done, 10);
        let a = cells[0].adaptive.as_ref().unwrap();
        assert_eq!((a.min_rounds, a.max_rounds), (4, 10));
        assert_eq!(a.stop.as_ref().unwrap().reason, "equal within noise");
    }

    #[test]
    fn a_deadline_stops_open_cells_after_the_minimum_and_names_what_was_open() {
        let open = |cells: &[Cell]| vec![Err("a vs b: not significant".into()); cells.len()];
        let past = Some(Instant::now());
        let (exec, cells, tally) = run_adaptive(&["a", "b"], (2, 6, past), &mut { open });
        assert_eq!(
            exec.calls.len(),
            2 + 4,
            "the warm-up and the minimum run anyway"
        );
        assert_eq!(tally.done, 6);
        let stop = cells[0].adaptive.as_ref().unwrap().stop.clone().unwrap();
        assert_eq!((stop.rounds, stop.cause), (2, StopCause::Budget));
        assert!(
            stop.reason.contains("a vs b: not significant"),
            "{}",
            stop.reason
        );
        let later = Some(Instant::now() + std::time::Duration::from_secs(3600));
        let (exec, cells, _) = run_adaptive(&["a", "b"], (2, 6, later), &mut { open });
        assert_eq!(exec.calls.len(), 2 + 12, "room for every round");
        let stop = cells[1].adaptive.as_ref().unwrap().stop.clone().unwrap();
        assert_eq!(stop.cause, StopCause::Maximum);
    }
}
