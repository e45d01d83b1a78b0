//! `asynclab compare`: the regression gate's flags, checked here; the comparison itself is
//! [`crate::compare`].

use std::path::PathBuf;

use clap::Args;

use crate::compare;
use crate::error::UsageError;

/// `asynclab compare`.
#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// The baseline: a results folder or a results.json path.
    pub base: PathBuf,
    /// The run to judge (a results folder or results.json); omit it with --by.
    pub new: Option<PathBuf>,
    /// Fail when a cell is worse than BASE by more than this fraction (and significantly); a
    /// fraction like every threshold of the lab's: 0.10 is 10%.
    #[arg(long, default_value_t = compare::DEFAULT_THRESHOLD, value_name = "FRACTION")]
    pub threshold: f64,
    /// The per-run number compared: throughput (higher is better), wall, cpu or rss (lower is better).
    #[arg(long, value_enum, default_value = "throughput")]
    pub metric: compare::Metric,
    /// Compare within BASE: DIM is python or loop, then the baseline value and the new value
    /// (e.g. `--by python 3.10 3.12`); cells are paired by round.
    #[arg(long, num_args = 3, value_names = ["DIM", "BASE_VALUE", "NEW_VALUE"])]
    pub by: Option<Vec<String>>,
    /// Whether NEW reproduces BASE: every verdict each run reached on its own (each variant
    /// against its baseline, the contrasts, the decision table) agrees in class and sign, and
    /// the ratios lie within their combined intervals; names each that does not (exit 1).
    #[arg(long, conflicts_with_all = ["by", "metric", "threshold"])]
    pub reproduce: bool,
    /// Significance level of the test between two runs (Mann–Whitney), between 0 and 1 (the
    /// 95% interval is kept).
    #[arg(long, default_value_t = 0.05, value_name = "ALPHA")]
    pub alpha: f64,
    /// Output: text (default), markdown (one table) or json (see `compare::formats`).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines for a terminal.
    Text,
    /// A Markdown table.
    Markdown,
    /// One JSON document.
    Json,
}

/// Checks the flags, compares, prints; 1 when the gate fails.
pub fn execute(a: &CompareArgs) -> anyhow::Result<i32> {
    if !(a.threshold.is_finite() && (0.0..1.0).contains(&a.threshold)) {
        return Err(UsageError::Flag {
            flag: "--threshold",
            message: format!(
                "{} is not a fraction from 0 to below 1; give e.g. 0.10 for 10% (as --noise-threshold takes 0.03 for 3%)",
                a.threshold
            ),
        }
        .into());
    }
    if !(a.alpha > 0.0 && a.alpha < 1.0) {
        return Err(UsageError::Flag {
            flag: "--alpha",
            message: format!(
                "{} is not a significance level; give a number strictly between 0 and 1, like 0.05",
                a.alpha
            ),
        }
        .into());
    }
    let gate = compare::Gate {
        metric: a.metric,
        threshold_pct: a.threshold * 100.0,
        alpha: a.alpha,
    };
    let base = crate::analysis::summary::load(&a.base)?;
    if a.reproduce {
        let Some(new) = &a.new else {
            return Err(UsageError::Flag {
                flag: "--reproduce",
                message: "needs two runs: asynclab compare FIRST SECOND --reproduce".into(),
            }
            .into());
        };
        let new_doc = crate::analysis::summary::load(new)?;
        let r = crate::compare::reproduce::reproduce(&base, &new_doc);
        let names = (a.base.display().to_string(), new.display().to_string());
        print!(
            "{}",
            crate::compare::reproduce::render(&r, (&names.0, &names.1))
        );
        return Ok(if r.reproduced() { 0 } else { 1 });
    }
    let report = match (&a.by, &a.new) {
        (Some(by), None) => {
            let dim = match by[0].as_str() {
                "python" => compare::By::Python,
                "loop" => compare::By::Loop,
                other => {
                    return Err(UsageError::Flag {
                        flag: "--by",
                        message: format!("'{other}' is not a dimension; use --by python 3.10 3.12 or --by loop asyncio uvloop"),
                    }
                    .into())
                }
            };
            compare::compare_within(&base, dim, &by[1], &by[2], gate)?
        }
        (None, Some(new)) => {
            let new_doc = crate::analysis::summary::load(new)?;
            let names = (a.base.display().to_string(), new.display().to_string());
            compare::compare_runs(&base, &new_doc, gate, (&names.0, &names.1))?
        }
        (Some(_), Some(_)) => {
            return Err(UsageError::Flag {
                flag: "--by",
                message: "compares within one run; give one results folder, not two".into(),
            }
            .into())
        }
        (None, None) => {
            return Err(UsageError::Flag {
                flag: "NEW",
                message: "missing: give BASE and NEW results folders, or one folder with --by python|loop BASE_VALUE NEW_VALUE".into(),
            }
            .into())
        }
    };
    match a.format {
        Format::Text => print!("{}", compare::render(&report)),
        Format::Markdown => print!("{}", compare::formats::markdown(&report)),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&compare::formats::json(&report))?
        ),
    }
    Ok(report.exit_code())
}
