//! One scenario's part of the report model: its rows against the baseline, the parameters that
//! vary, and the extra tables its cells call for (memory per unit, further latency sets,
//! correctness rows, the core bound of process pools).

use std::collections::BTreeSet;

use super::comparison::{throughput_vs, Comparison, Rule};
use super::measured::{busy_machine, MeasuredRuns};
use crate::extras::CorrectnessRow;
use crate::results::{Cell, ScenarioInfo};

/// A row's comparison with the scenario's baseline.
#[derive(Debug, Clone, PartialEq)]
pub enum VsBaseline {
    /// The scenario's variants are not alternatives (decide_by = none): no column.
    NotCompared,
    /// The row is the baseline.
    IsBaseline,
    /// No baseline cell, or fewer than two paired rounds.
    NoPair,
    /// Throughput over the baseline's, round by round.
    Ratio(Comparison),
}

/// What else used the machine during a cell's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CellInterference {
    /// Median foreign CPU over the clean runs, seconds.
    pub foreign_cpu_s_median: f64,
    /// The most foreign CPU of any run, seconds.
    pub foreign_cpu_s_max: f64,
    /// Steal time over every run, seconds.
    pub steal_s: f64,
    /// Median involuntary context switches of the worker per run.
    pub involuntary_switches_median: f64,
    /// Runs left out as contaminated (each repeated in its round).
    pub contaminated_runs: usize,
    /// The machine-speed probe around the cell's runs.
    pub probe: Option<super::speed::ProbeRange>,
    /// Why the cell's rounds decide nothing, when the machine stayed busy.
    pub busy: Option<String>,
}

/// One cell of a scenario table.
#[derive(Debug, Clone)]
pub struct Row<'a> {
    /// The cell.
    pub cell: &'a Cell,
    /// Its comparison with the baseline.
    pub vs_baseline: VsBaseline,
    /// The interference its runs met, when it was measured.
    pub interference: Option<CellInterference>,
}

/// The interference of a cell's runs; None for documents from before it was measured.
pub fn cell_interference(cell: &Cell) -> Option<CellInterference> {
    let all: Vec<&crate::results::Interference> = cell
        .runs
        .iter()
        .filter_map(|r| r.interference.as_ref())
        .collect();
    if all.is_empty() {
        return None;
    }
    let clean: Vec<f64> = all
        .iter()
        .filter(|i| !i.contaminated)
        .map(|i| i.foreign_cpu_s)
        .collect();
    let switches: Vec<f64> = all.iter().map(|i| i.involuntary_switches as f64).collect();
    Some(CellInterference {
        foreign_cpu_s_median: crate::stats::median(&clean),
        foreign_cpu_s_max: all.iter().map(|i| i.foreign_cpu_s).fold(0.0, f64::max),
        steal_s: all.iter().map(|i| i.steal_s).sum(),
        involuntary_switches_median: crate::stats::median(&switches),
        contaminated_runs: all.iter().filter(|i| i.contaminated).count(),
        probe: super::speed::probe_range([cell]),
        busy: busy_machine(cell),
    })
}

/// Peak memory per unit of a cell with a `units` parameter.
#[derive(Debug, Clone)]
pub struct UnitMemory<'a> {
    /// The cell.
    pub cell: &'a Cell,
    /// Its `units`.
    pub units: u64,
    /// Median peak RSS Δ over rounds divided by the units, KiB.
    pub per_unit_kib: f64,
}

/// CPU cost and parallel efficiency of a cell whose runs report their `workers`.
#[derive(Debug, Clone)]
pub struct CpuRow<'a> {
    /// The cell.
    pub cell: &'a Cell,
    /// Workers that ran in parallel.
    pub workers: u64,
    /// CPU seconds per operation (job), median over clean runs.
    pub cpu_s_per_op: f64,
    /// Median throughput over the baseline's (None for the baseline or without one).
    pub speedup: Option<f64>,
    /// `speedup` divided by the workers that could run at once (workers, at most the cores).
    pub efficiency: Option<f64>,
    /// The speed-up's verdict (None for the baseline or without one).
    pub speedup_verdict: Option<super::comparison::Verdict>,
    /// Making one worker ready, ms, median over clean runs (models that report it).
    pub worker_start_ms: Option<f64>,
    /// A call's round trip to a worker, µs, median over clean runs (models that report it).
    pub call_overhead_us: Option<f64>,
}

impl CpuRow<'_> {
    /// True when the efficiency is above what physics allows (100%): the measured speed-up
    /// is noise or a slower baseline round, never a real gain.
    pub fn above_physical_bound(&self) -> bool {
        self.efficiency.is_some_and(|e| e > 1.0)
    }
}

/// One scenario's analysed cells.
#[derive(Debug, Clone)]
pub struct ScenarioReport<'a> {
    /// Scenario name.
    pub name: String,
    /// What the catalogue said of it (title, question, baseline), when the run recorded it.
    pub info: Option<&'a ScenarioInfo>,
    /// Its cells, in the document's order.
    pub cells: Vec<&'a Cell>,
    /// Parameters equal in every cell (shown above the table).
    pub constant_params: Vec<String>,
    /// Parameters that differ between cells (a column).
    pub varying_params: Vec<String>,
    /// The variant ratios are against; None when the variants are not compared.
    pub baseline: Option<String>,
    /// One row per cell.
    pub rows: Vec<Row<'a>>,
    /// The latency kinds the cells measured ("service", "open-loop-corrected").
    pub latency_kinds: BTreeSet<String>,
    /// Memory per unit, for cells with a `units` parameter.
    pub memory_per_unit: Vec<UnitMemory<'a>>,
    /// Names of further latency sets, and the cells that recorded any.
    pub latency_sets: (Vec<String>, Vec<&'a Cell>),
    /// Correctness rows of each cell's last run that reported them.
    pub correctness: Vec<(&'a Cell, &'a [CorrectnessRow])>,
    /// CPU cost per operation and parallel efficiency, for cells that report `workers`.
    pub cpu_rows: Vec<CpuRow<'a>>,
    /// The machine's cores, when a variant ran as a process tree (its speed-up is bounded).
    pub process_tree_cores: Option<usize>,
    /// The machine's cores.
    pub cores: usize,
}

/// The baseline cell for `cell`: the baseline variant on the same interpreter, sharing the
/// most parameter values.
pub fn baseline_for<'a>(cell: &Cell, cells: &[&'a Cell], baseline: &str) -> Option<&'a Cell> {
    cells
        .iter()
        .copied()
        .filter(|c| c.python == cell.python && c.variant == baseline && c.summary.is_some())
        .max_by_key(|c| {
            c.params
                .iter()
                .filter(|(k, v)| cell.params.get(*k) == Some(v))
                .count()
        })
}

/// Analyses one scenario's cells; `cores` is the machine's, `rule` the run's comparison rule.
pub fn analyze<'a>(
    name: &str,
    cells: Vec<&'a Cell>,
    info: Option<&'a ScenarioInfo>,
    cores: usize,
    rule: Rule,
) -> ScenarioReport<'a> {
    let keys: BTreeSet<String> = cells
        .iter()
        .flat_map(|c| c.params.keys().cloned())
        .collect();
    let (varying_params, constant_params): (Vec<String>, Vec<String>) =
        keys.into_iter().partition(|k| {
            cells
                .iter()
                .any(|c| c.params.get(k) != cells[0].params.get(k))
        });
    let compared = cells[0].decide_by != crate::catalogue::DecideBy::None;
    let baseline = compared.then(|| {
        info.and_then(|i| i.baseline.clone())
            .filter(|b| cells.iter().any(|c| &c.variant == b))
            .unwrap_or_else(|| cells[0].variant.clone())
    });
    let rows: Vec<Row<'a>> = cells
        .iter()
        .map(|&cell| {
            let vs_baseline = match &baseline {
                None => VsBaseline::NotCompared,
                Some(b) => match baseline_for(cell, &cells, b) {
                    Some(base) if base.id == cell.id => VsBaseline::IsBaseline,
                    Some(base) => throughput_vs(cell, base, rule)
                        .map(VsBaseline::Ratio)
                        .unwrap_or(VsBaseline::NoPair),
                    None => VsBaseline::NoPair,
                },
            };
            Row {
                cell,
                vs_baseline,
                interference: cell_interference(cell),
            }
        })
        .collect();
    let latency_kinds = cells
        .iter()
        .filter_map(|c| c.summary.as_ref()?.latency_ms.as_ref())
        .map(|l| l.kind.clone())
        .collect();
    let memory_per_unit = cells
        .iter()
        .filter_map(|&cell| {
            let units = cell.params.get("units")?.as_u64()?;
            let median = cell.summary.as_ref()?.peak_rss_delta_mib.median;
            Some(UnitMemory {
                cell,
                units,
                per_unit_kib: median * 1024.0 / units as f64,
            })
        })
        .collect();
    let with_sets: Vec<&Cell> = cells
        .iter()
        .copied()
        .filter(|c| {
            c.summary
                .as_ref()
                .is_some_and(|s| !s.latency_sets_ms.is_empty())
        })
        .collect();
    let set_names: BTreeSet<String> = with_sets
        .iter()
        .flat_map(|c| {
            c.summary
                .iter()
                .flat_map(|s| s.latency_sets_ms.keys().cloned())
        })
        .collect();
    let correctness = cells
        .iter()
        .filter_map(|&c| Some((c, c.runs.last()?.extra.correctness_rows()?)))
        .collect();
    // A variant that ran as a process tree; documents from before `memory_metric` was
    // recorded only tell it by the variant's name.
    let process_tree = baseline.is_some()
        && cells.iter().any(|c| {
            c.runs.iter().any(|r| {
                r.memory_metric == crate::results::MEMORY_PSS_TREE
                    || (r.memory_metric.is_empty()
                        && ["multiprocessing", "processes"].contains(&c.variant.as_str()))
            })
        });
    // The CPU table is for CPU-bound work: the baseline's CPU time is most of its wall time.
    let cpu_bound = baseline.as_deref().is_some_and(|b| {
        cells.iter().filter(|c| c.variant == b).any(|c| {
            c.summary
                .as_ref()
                .is_some_and(|s| s.cpu_s.median >= 0.9 * s.wall_s.median)
        })
    });
    let cpu_rows = rows
        .iter()
        .filter(|_| cpu_bound)
        .filter_map(|row: &Row<'a>| {
            let c = row.cell;
            let workers = c.runs.iter().find_map(|r| r.extra.workers)?;
            let per_op: Vec<f64> = MeasuredRuns::of(c)
                .iter()
                .filter(|r| r.ops > 0)
                .map(|r| r.cpu_s / r.ops as f64)
                .collect();
            let speedup = match &row.vs_baseline {
                VsBaseline::Ratio(cmp) => Some(cmp.ratio.ratio),
                VsBaseline::IsBaseline => Some(1.0),
                _ => None,
            };
            let speedup_verdict = match &row.vs_baseline {
                VsBaseline::Ratio(cmp) => Some(cmp.verdict.clone()),
                _ => None,
            };
            let parallel = workers.min(cores.max(1) as u64).max(1) as f64;
            let measured = |f: fn(&crate::extras::Extras) -> Option<f64>| {
                let v: Vec<f64> = MeasuredRuns::of(c)
                    .iter()
                    .filter_map(|r| f(&r.extra))
                    .collect();
                (!v.is_empty()).then(|| crate::stats::median(&v))
            };
            Some(CpuRow {
                cell: c,
                workers,
                cpu_s_per_op: crate::stats::median(&per_op),
                speedup,
                efficiency: speedup.map(|s| s / parallel),
                speedup_verdict,
                worker_start_ms: measured(|e| e.worker_start_ms),
                call_overhead_us: measured(|e| e.call_overhead_us),
            })
        })
        .collect();
    ScenarioReport {
        name: name.to_string(),
        cpu_rows,
        info,
        cells,
        constant_params,
        varying_params,
        baseline,
        rows,
        latency_kinds,
        memory_per_unit,
        latency_sets: (set_names.into_iter().collect(), with_sets),
        correctness,
        process_tree_cores: process_tree.then_some(cores),
        cores,
    }
}
