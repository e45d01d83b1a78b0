//! summary.md and report.html render one report model: the same verdicts and numbers, and a
//! verdict's mark in HTML comes from the model, not from the words of the table.

use asynclab::analysis::{self, comparison::Verdict, scenario::VsBaseline};
use asynclab::export::markup::{Block, Html, Mark, Markdown};
use asynclab::export::{document, Exporter, HtmlExporter, MarkdownExporter, Outputs};
use asynclab::results::Results;

fn load(name: &str) -> Results {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/results")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every marked table cell of a document: (text, mark).
fn marked_cells(doc: &asynclab::export::markup::Doc) -> Vec<(String, Mark)> {
    doc.sections
        .iter()
        .flat_map(|s| s.blocks.iter())
        .filter_map(|b| match b {
            Block::Table(t) => Some(t.rows.iter().flatten()),
            _ => None,
        })
        .flatten()
        .filter(|c| c.mark != Mark::Plain)
        .map(|c| (c.text.clone(), c.mark))
        .collect()
}

#[test]
fn markdown_and_html_carry_the_same_verdicts_and_numbers() {
    for name in [
        "two_pythons.json",
        "quick.json",
        "asyncio_ops_four_pythons.json",
    ] {
        let results = load(name);
        let report = analysis::analyze(&results);
        let outputs = Outputs::new(&report);
        let md = String::from_utf8(MarkdownExporter.render(&outputs).unwrap()).unwrap();
        let html = String::from_utf8(HtmlExporter.render(&outputs).unwrap()).unwrap();
        // Every comparison the model decided is in both, with its numbers, marked in HTML.
        let mut compared = 0;
        for s in &report.scenarios {
            for row in &s.rows {
                let VsBaseline::Ratio(c) = &row.vs_baseline else {
                    continue;
                };
                compared += 1;
                let ratio = asynclab::format::num(c.ratio.ratio);
                let low = asynclab::format::num(c.ratio.ci95_low);
                let text = format!("{ratio}× [{low}–");
                assert!(md.contains(&text), "{name}: {text} not in summary.md");
                let class = if c.verdict == Verdict::Significant {
                    "sig"
                } else {
                    "ns"
                };
                assert!(
                    html.contains(&format!("<td class=\"{class}\">{text}")),
                    "{name}: {text} not marked {class} in report.html"
                );
            }
        }
        assert!(
            compared > 0 || name.contains("asyncio_ops"),
            "{name}: nothing compared"
        );
        // Every marked cell of the one document is in both outputs.
        for (text, mark) in marked_cells(&outputs.doc) {
            assert!(md.contains(&text), "{name}: {text:?} not in summary.md");
            let cell = format!(
                "<td class=\"{}\">{}</td>",
                mark.class().unwrap(),
                Html::inline(&text)
            );
            assert!(html.contains(&cell), "{name}: {cell:?} not in report.html");
        }
        // The decision table's rows are in both.
        for d in &report.decisions {
            let row = format!(
                "| {} | {} | {} |",
                d.scenario,
                if d.group.is_empty() { "–" } else { &d.group },
                d.python
            );
            assert!(
                md.contains(&row),
                "{name}: decision {row} not in summary.md"
            );
            assert!(
                html.contains(&format!("<td>{}</td>", d.winner)),
                "{name}: winner {} not in HTML",
                d.winner
            );
        }
    }
}

#[test]
fn renaming_a_verdicts_words_cannot_unmark_it() {
    let results = load("two_pythons.json");
    let report = analysis::analyze(&results);
    let mut doc = document::build(&report);
    let before = marked_cells(&doc);
    assert!(
        before.iter().any(|(_, m)| *m == Mark::NotSignificant),
        "the document marks verdicts"
    );
    // Change every marked cell's words to something no substring rule could recognise.
    for s in &mut doc.sections {
        for b in &mut s.blocks {
            if let Block::Table(t) = b {
                for c in t.rows.iter_mut().flatten() {
                    if c.mark != Mark::Plain {
                        c.text = "reworded".into();
                    }
                }
            }
        }
    }
    let mut html = String::new();
    for s in &doc.sections {
        for b in &s.blocks {
            Html::block(&mut html, b);
        }
    }
    for mark in [Mark::NotSignificant, Mark::Failed] {
        let expected = before.iter().filter(|(_, m)| *m == mark).count();
        let cell = format!("<td class=\"{}\">reworded</td>", mark.class().unwrap());
        assert_eq!(html.matches(&cell).count(), expected, "{mark:?}");
    }
    assert!(!Markdown::render(&doc).contains("not significant (too few rounds)"));
}
