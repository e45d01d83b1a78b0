//! `results.csv`: one row per cell with the summary columns, for spreadsheets.

use super::{Exporter, Outputs};
use crate::analysis::params_text;

/// The CSV exporter.
pub struct CsvExporter;

const HEADER: &str = "scenario,variant,python,params,status,rounds,throughput_per_s_median,throughput_per_s_min,throughput_per_s_max,throughput_per_s_ci95_low,throughput_per_s_ci95_high,wall_s_median,cpu_s_median,peak_rss_delta_mib_median,latency_kind,latency_p50_ms,latency_p95_ms,latency_p99_ms,latency_max_ms,ops,errors";

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Exporter for CsvExporter {
    fn file_name(&self) -> &'static str {
        "results.csv"
    }
    fn render(&self, o: &Outputs) -> anyhow::Result<Vec<u8>> {
        let mut out = String::from(HEADER);
        out.push('\n');
        for c in &o.report.results.cells {
            let keys: Vec<String> = c.params.keys().cloned().collect();
            let mut row = vec![
                quote(&c.scenario),
                quote(&c.variant),
                quote(&c.python),
                quote(&params_text(&c.params, &keys)),
                format!("{:?}", c.status).to_lowercase(),
            ];
            match &c.summary {
                Some(s) => {
                    let t = &s.throughput_per_s;
                    row.push(s.rounds.to_string());
                    for v in [
                        t.median,
                        t.min,
                        t.max,
                        t.ci95_low,
                        t.ci95_high,
                        s.wall_s.median,
                        s.cpu_s.median,
                        s.peak_rss_delta_mib.median,
                    ] {
                        row.push(format!("{v}"));
                    }
                    match &s.latency_ms {
                        Some(l) => {
                            row.push(quote(&l.kind));
                            for v in [l.p50, l.p95, l.p99, l.max] {
                                row.push(format!("{v}"));
                            }
                        }
                        None => row.extend(std::iter::repeat_n(String::new(), 5)),
                    }
                    row.push(s.ops.to_string());
                    row.push(s.errors.to_string());
                }
                None => row.extend(std::iter::repeat_n(String::new(), 16)),
            }
            out.push_str(&row.join(","));
            out.push('\n');
        }
        Ok(out.into_bytes())
    }
}
