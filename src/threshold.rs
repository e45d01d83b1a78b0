//! A study file's pass/fail thresholds (k6's idea), as written under `[thresholds]`:
//! `io_http = ["asyncio/sync >= 5", "p99_ms < 150"]`. This module only reads an expression;
//! `analysis::thresholds` checks a run against it. It imports nothing of the lab, so the study
//! (which refuses a malformed one) and the analysis both sit on it.

use std::fmt;

/// What an expression bounds.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// The median throughput of variant `.0` over that of variant `.1`, in every setting both
    /// ran in.
    Ratio(String, String),
    /// A figure of every cell, or of one variant's cells.
    Metric {
        /// Only this variant's cells; every cell when `None`.
        variant: Option<String>,
        /// The figure.
        metric: Metric,
    },
}

/// A cell's figure a threshold can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Median throughput over rounds, per second.
    ThroughputPerS,
    /// Pooled latency p50, ms.
    P50Ms,
    /// Pooled latency p99, ms.
    P99Ms,
    /// Median wall time, s.
    WallS,
    /// Median CPU time, s.
    CpuS,
    /// Median peak RSS above the baseline, MiB.
    RssMib,
}

impl Metric {
    /// Every metric with its name in an expression.
    pub const ALL: [(&'static str, Metric); 6] = [
        ("throughput_per_s", Metric::ThroughputPerS),
        ("p50_ms", Metric::P50Ms),
        ("p99_ms", Metric::P99Ms),
        ("wall_s", Metric::WallS),
        ("cpu_s", Metric::CpuS),
        ("rss_mib", Metric::RssMib),
    ];

    /// Its name in an expression.
    pub fn name(self) -> &'static str {
        Metric::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("?", |(n, _)| n)
    }
}

/// The comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Op {
    /// Whether `value OP bound` holds (never for a value that is not a number).
    pub fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::Lt => value < bound,
            Op::Le => value <= bound,
            Op::Gt => value > bound,
            Op::Ge => value >= bound,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

/// One threshold: `SUBJECT OP NUMBER`.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// What is bounded.
    pub subject: Subject,
    /// How.
    pub op: Op,
    /// The bound.
    pub bound: f64,
}

/// How to write one, for the error line.
pub const FORMS: &str = "write \"A/B >= 2\" (variant A's median throughput over B's), \"p99_ms < 50\" (every cell) or \"asyncio.p99_ms < 50\" (one variant); metrics: throughput_per_s, p50_ms, p99_ms, wall_s, cpu_s, rss_mib";

impl Threshold {
    /// Reads `text`; the error says what is wrong (and [`FORMS`] how to write it).
    pub fn parse(text: &str) -> Result<Threshold, String> {
        let ops = [("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)];
        let (at, len, op) = ops
            .iter()
            .filter_map(|(s, op)| text.find(s).map(|i| (i, s.len(), *op)))
            .min_by_key(|(i, len, _)| (*i, usize::MAX - len))
            .ok_or_else(|| format!("{text:?} has no comparison (<, <=, >, >=)"))?;
        let left = text[..at].trim();
        let right = text[at + len..].trim();
        let bound: f64 = right
            .parse()
            .ok()
            .filter(|b: &f64| b.is_finite())
            .ok_or_else(|| format!("{text:?}: {right:?} is not a number"))?;
        let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_');
        let metric = |m: &str| Metric::ALL.iter().find(|(n, _)| *n == m).map(|(_, m)| *m);
        let subject = if let Some((a, b)) = left.split_once('/') {
            let (a, b) = (a.trim(), b.trim());
            if !word(a) || !word(b) {
                return Err(format!("{text:?}: {left:?} is not two variants"));
            }
            Subject::Ratio(a.into(), b.into())
        } else if let Some((v, m)) = left.split_once('.') {
            let metric = metric(m.trim()).ok_or_else(|| format!("{text:?}: no metric {m:?}"))?;
            if !word(v.trim()) {
                return Err(format!("{text:?}: {v:?} is not a variant"));
            }
            Subject::Metric {
                variant: Some(v.trim().into()),
                metric,
            }
        } else {
            let metric = metric(left).ok_or_else(|| format!("{text:?}: no metric {left:?}"))?;
            Subject::Metric {
                variant: None,
                metric,
            }
        };
        Ok(Threshold { subject, op, bound })
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.subject {
            Subject::Ratio(a, b) => write!(f, "{a}/{b}")?,
            Subject::Metric {
                variant: Some(v),
                metric,
            } => write!(f, "{v}.{}", metric.name())?,
            Subject::Metric {
                variant: None,
                metric,
            } => write!(f, "{}", metric.name())?,
        }
        write!(f, " {} {}", self.op.text(), self.bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_form_and_says_what_is_wrong() {
        let t = Threshold::parse("asyncio/sync >= 5").unwrap();
        assert_eq!(t.subject, Subject::Ratio("asyncio".into(), "sync".into()));
        assert_eq!((t.op, t.bound), (Op::Ge, 5.0));
        assert_eq!(t.to_string(), "asyncio/sync >= 5");
        let t = Threshold::parse("p99_ms<50").unwrap();
        assert_eq!(t.op, Op::Lt);
        assert_eq!(t.to_string(), "p99_ms < 50");
        let t = Threshold::parse("uvicorn.throughput_per_s > 1e3").unwrap();
        assert_eq!(t.to_string(), "uvicorn.throughput_per_s > 1000");
        for bad in [
            "p99_ms",
            "p98_ms < 5",
            "a/ >= 1",
            "p99_ms < fast",
            "x.y < 1",
        ] {
            assert!(Threshold::parse(bad).is_err(), "{bad}");
        }
        assert!(Op::Le.holds(2.0, 2.0) && !Op::Lt.holds(2.0, 2.0) && !Op::Gt.holds(f64::NAN, 0.0));
    }
}
