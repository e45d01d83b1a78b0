//! One scenario's part of the report model: its rows against the baseline, the parameters that
//! vary, and the extra tables its cells call for (memory per unit, further latency sets,
//! correctness rows, the core bound of process pools).

use std::collections::BTreeSet;

use super::verdict::{throughput_vs, Comparison};
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

/// One cell of a scenario table.
#[derive(Debug, Clone)]
pub struct Row<'a> {
    /// The cell.
    pub cell: &'a Cell,
    /// Its comparison with the baseline.
    pub vs_baseline: VsBaseline,
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
    /// The machine's cores, when a variant ran as a process tree (its speed-up is bounded).
    pub process_tree_cores: Option<usize>,
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

/// Analyses one scenario's cells; `cores` is the machine's.
pub fn analyze<'a>(
    name: &str,
    cells: Vec<&'a Cell>,
    info: Option<&'a ScenarioInfo>,
    cores: usize,
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
    let compared = cells[0].decide_by != "none";
    let baseline = compared.then(|| {
        info.and_then(|i| i.baseline.clone())
            .filter(|b| cells.iter().any(|c| &c.variant == b))
            .unwrap_or_else(|| cells[0].variant.clone())
    });
    let rows = cells
        .iter()
        .map(|&cell| {
            let vs_baseline = match &baseline {
                None => VsBaseline::NotCompared,
                Some(b) => match baseline_for(cell, &cells, b) {
                    Some(base) if base.id == cell.id => VsBaseline::IsBaseline,
                    Some(base) => throughput_vs(cell, base)
                        .map(VsBaseline::Ratio)
                        .unwrap_or(VsBaseline::NoPair),
                    None => VsBaseline::NoPair,
                },
            };
            Row { cell, vs_baseline }
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
        .filter_map(|&c| Some((c, c.runs.last()?.extra.rows.as_deref()?)))
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
    ScenarioReport {
        name: name.to_string(),
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
    }
}
