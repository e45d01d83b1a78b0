//! `asynclab cost`: prints the asyncio time per request that `analysis::cost` computes from a
//! run's per-operation figures.

use std::fmt::Write;
use std::path::Path;

pub use crate::analysis::cost::{cost_rows, CostRow, MixCosts, RequestMix};

/// The cost table as Markdown.
pub fn render(rows: &[CostRow], mix: RequestMix, request_ms: f64, source: &str) -> String {
    let num = crate::format::num;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "asyncio time per request = {} × create_task + await + {} × Queue put/get + {} × TCP echo round trip, from the median per-op figures in {source}.\n",
        mix.tasks, mix.queue_ops, mix.round_trips
    );
    let _ = writeln!(out, "| python | loop | create_task + await µs | Queue put/get µs | TCP echo µs | asyncio per request µs | vs base | saved per request µs | share of a {} ms request |", num(request_ms));
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let vs = if r.python == r.base_python {
            "base".to_string()
        } else {
            r.base_python.clone()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {vs} | {} | {:.2}% |",
            r.python,
            r.event_loop,
            num(r.costs.task_ns / 1000.0),
            num(r.costs.queue_ns / 1000.0),
            num(r.costs.echo_ns / 1000.0),
            num(r.per_request_us),
            num(r.saved_us),
            r.saved_share * 100.0
        );
    }
    for r in rows.iter().filter(|r| !r.flagged.is_empty()) {
        let _ = writeln!(
            out,
            "\n⚠ {} {}: a set-up check flagged {} in some run (see summary.md); treat those figures with care.",
            r.python,
            r.event_loop,
            r.flagged.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nInterpreters built differently are compared as builds, not as language versions (see each build's compiler and configure flags in results.json `env.pythons`)."
    );
    out
}

/// `asynclab cost`: loads `dir` (a results folder or results.json) and prints the table for
/// `mix` in a request of `request_ms` milliseconds (> 0), upgrades measured from `base`.
pub fn run(
    dir: &Path,
    mix: RequestMix,
    request_ms: f64,
    base: Option<&str>,
) -> anyhow::Result<i32> {
    let path = crate::results::json_path(dir);
    let results = crate::analysis::summary::load(&path)?;
    let rows = cost_rows(&results.cells, mix, request_ms, base)?;
    print!(
        "{}",
        render(&rows, mix, request_ms, &path.display().to_string())
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_example_renders() {
        let costs = |task_ns, queue_ns, echo_ns| MixCosts {
            task_ns,
            queue_ns,
            echo_ns,
        };
        let mix = RequestMix {
            tasks: 20,
            queue_ops: 40,
            round_trips: 3,
        };
        let row = |python: &str, c: MixCosts, saved_us: f64| CostRow {
            python: python.into(),
            event_loop: "asyncio".into(),
            per_request_us: mix.per_request_us(&c),
            costs: c,
            base_python: "3.10.13".into(),
            saved_us,
            saved_share: saved_us / 20_000.0,
            flagged: vec![],
        };
        let rows = [
            row("3.10.13", costs(13_500.0, 890.0, 24_600.0), 0.0),
            row("3.14.0", costs(3_200.0, 410.0, 19_800.0), 239.6),
        ];
        let text = render(&rows, mix, 20.0, "service");
        assert!(
            text.contains(
                "| 3.14.0 | asyncio | 3.20 | 0.410 | 19.8 | 140 | 3.10.13 | 240 | 1.20% |"
            ),
            "{text}"
        );
    }
}
