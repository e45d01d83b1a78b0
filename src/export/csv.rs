//! `results.csv`: one row per cell with the summary columns, for spreadsheets.
//!
//! The columns are the fields of [`Row`], in order, so the header and the rows cannot drift
//! apart; the `csv` crate quotes (RFC 4180: a field holding a comma, a quote, CR or LF is
//! quoted, quotes doubled). Numbers are written as Rust's `Display` writes them (shortest
//! text that reads back to the same value, never an exponent), and a figure a cell does not
//! have (a failed cell, a scenario without latencies) is an empty field.

use serde::{Serialize, Serializer};

use super::{Exporter, Outputs};
use crate::analysis::params_text;
use crate::results::Cell;

/// The CSV exporter.
pub struct CsvExporter;

/// A number as `Display` writes it (`150`, not the `150.0` the csv crate would), empty when
/// absent.
fn display<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

/// One line of `results.csv`: its field names are the header.
#[derive(Debug, Default, Serialize)]
struct Row {
    scenario: String,
    variant: String,
    python: String,
    params: String,
    status: String,
    rounds: Option<usize>,
    #[serde(serialize_with = "display")]
    throughput_per_s_median: Option<f64>,
    #[serde(serialize_with = "display")]
    throughput_per_s_min: Option<f64>,
    #[serde(serialize_with = "display")]
    throughput_per_s_max: Option<f64>,
    #[serde(serialize_with = "display")]
    throughput_per_s_ci95_low: Option<f64>,
    #[serde(serialize_with = "display")]
    throughput_per_s_ci95_high: Option<f64>,
    #[serde(serialize_with = "display")]
    wall_s_median: Option<f64>,
    #[serde(serialize_with = "display")]
    cpu_s_median: Option<f64>,
    #[serde(serialize_with = "display")]
    peak_rss_delta_mib_median: Option<f64>,
    latency_kind: Option<String>,
    #[serde(serialize_with = "display")]
    latency_p50_ms: Option<f64>,
    #[serde(serialize_with = "display")]
    latency_p95_ms: Option<f64>,
    #[serde(serialize_with = "display")]
    latency_p99_ms: Option<f64>,
    #[serde(serialize_with = "display")]
    latency_max_ms: Option<f64>,
    ops: Option<u64>,
    errors: Option<u64>,
}

impl Row {
    fn of(c: &Cell) -> Row {
        let keys: Vec<String> = c.params.keys().cloned().collect();
        let s = c.summary.as_ref();
        let t = s.map(|s| &s.throughput_per_s);
        let l = s.and_then(|s| s.latency_ms.as_ref());
        Row {
            scenario: c.scenario.clone(),
            variant: c.variant.clone(),
            python: c.python.clone(),
            params: params_text(&c.params, &keys),
            status: format!("{:?}", c.status).to_lowercase(),
            rounds: s.map(|s| s.rounds),
            throughput_per_s_median: t.map(|t| t.median),
            throughput_per_s_min: t.map(|t| t.min),
            throughput_per_s_max: t.map(|t| t.max),
            throughput_per_s_ci95_low: t.map(|t| t.ci95_low),
            throughput_per_s_ci95_high: t.map(|t| t.ci95_high),
            wall_s_median: s.map(|s| s.wall_s.median),
            cpu_s_median: s.map(|s| s.cpu_s.median),
            peak_rss_delta_mib_median: s.map(|s| s.peak_rss_delta_mib.median),
            latency_kind: l.map(|l| l.kind.clone()),
            latency_p50_ms: l.map(|l| l.p50),
            latency_p95_ms: l.map(|l| l.p95),
            latency_p99_ms: l.map(|l| l.p99),
            latency_max_ms: l.map(|l| l.max),
            ops: s.map(|s| s.ops),
            errors: s.map(|s| s.errors),
        }
    }
}

/// The rows as CSV text, header first (also when there are no rows).
fn render(rows: &[Row]) -> anyhow::Result<Vec<u8>> {
    if rows.is_empty() {
        // The csv crate writes the header with the first row: write one and keep its header.
        let mut header = csv::Writer::from_writer(Vec::new());
        header.serialize(Row::default())?;
        let text = header.into_inner().map_err(|e| e.into_error())?;
        let end = text.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        return Ok(text[..end].to_vec());
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.serialize(row)?;
    }
    Ok(w.into_inner().map_err(|e| e.into_error())?)
}

impl Exporter for CsvExporter {
    fn file_name(&self) -> &'static str {
        "results.csv"
    }
    fn render(&self, o: &Outputs) -> anyhow::Result<Vec<u8>> {
        let rows: Vec<Row> = o.report.results.cells.iter().map(Row::of).collect();
        render(&rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_cr_lf_quotes_and_commas_are_quoted_and_read_back() {
        let awkward = "a,b \"c\"\r\nd\re";
        let rows = [
            Row {
                scenario: "s".into(),
                params: awkward.into(),
                status: "ok".into(),
                throughput_per_s_median: Some(150.0),
                wall_s_median: Some(0.1 + 0.2),
                ops: Some(7),
                ..Row::default()
            },
            Row {
                scenario: "\r".into(),
                status: "failed".into(),
                ..Row::default()
            },
        ];
        let text = String::from_utf8(render(&rows).unwrap()).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        assert!(
            lines[0].starts_with("scenario,variant,python,params,status,rounds,")
                && lines[0].ends_with(",ops,errors"),
            "{text}"
        );
        assert!(
            text.contains(",\"a,b \"\"c\"\"\r\nd\re\",ok,,150,"),
            "quoted, quotes doubled, numbers as Display writes them: {text:?}"
        );
        assert!(text.contains(",0.30000000000000004,"), "{text:?}");
        assert!(text.contains("\n\"\r\",,,,failed,,"), "{text:?}");
        let mut back = csv::Reader::from_reader(text.as_bytes());
        let records: Vec<csv::StringRecord> = back.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), 2);
        assert_eq!(&records[0][3], awkward);
        assert_eq!(&records[1][0], "\r");
        assert!(records.iter().all(|r| r.len() == 21));
    }

    #[test]
    fn no_rows_is_the_header_alone() {
        let text = String::from_utf8(render(&[]).unwrap()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.starts_with("scenario,") && text.ends_with("ops,errors\n"));
    }
}
