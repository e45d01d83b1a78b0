//! The README and the book (docs/): every relative link and anchor resolves, every page is in
//! the book's table of contents, and every findings page is what the lab renders from the
//! results document committed beside it, byte for byte.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The Markdown files a reader follows links in: the README and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let root = common::root();
    let mut out = vec![root.join("README.md")];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The text outside fenced code blocks and inline code spans, line by line.
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop `code` spans: what they hold is not a link.
        let mut kept = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                kept.push_str(part);
            }
        }
        out.push(kept);
    }
    out
}

/// The targets of `[text](target)` and `![alt](target)` links.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    out
}

/// A heading's anchor as GitHub and mdBook make it: lower case, letters, digits, `-` and `_`
/// kept, spaces to `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings.
fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    prose(&text)
        .iter()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !resolved.exists() {
                broken.push(format!("{}: {target} (no such file)", page.display()));
                continue;
            }
            if let Some(a) = anchor {
                if resolved.extension().is_some_and(|x| x == "md")
                    && !anchors(&resolved).contains(a)
                {
                    broken.push(format!("{}: {target} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_links_check_sees_links_and_anchors() {
    let text = "see [a](x.md#one-two) and ![c](charts/a.svg)\n`[not](code.md)`\n```\n[no](fenced.md)\n```\n";
    assert_eq!(links(text), ["x.md#one-two", "charts/a.svg"]);
    assert_eq!(
        slug("Python 3.14 and 3.15: a Debian root"),
        "python-314-and-315-a-debian-root"
    );
}

#[test]
fn every_page_of_the_book_is_in_its_table_of_contents() {
    let docs = common::root().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    let missing: Vec<String> = pages()
        .iter()
        .filter_map(|p| p.strip_prefix(&docs).ok())
        .map(|p| p.display().to_string())
        .filter(|p| p != "SUMMARY.md" && !listed.contains(p))
        .collect();
    assert!(
        missing.is_empty(),
        "pages under docs/ that docs/SUMMARY.md does not list (mdBook would not build them): {missing:?}"
    );
}

/// `results.json` of a findings folder, unpacked into `into` (the large ones are committed
/// as `results.json.xz`).
fn findings_document(dir: &Path, into: &Path) {
    std::fs::write(into.join("results.json"), common::findings_json(dir)).unwrap();
}

#[test]
fn every_findings_page_is_what_the_lab_renders_from_its_committed_document() {
    let findings = common::root().join("docs/findings");
    let mut checked = 0;
    for e in std::fs::read_dir(&findings).unwrap().flatten() {
        let dir = e.path();
        if !dir.is_dir() {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        findings_document(&dir, tmp.path());
        common::bin()
            .arg("report")
            .arg(tmp.path())
            .assert()
            .success();
        let page = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        let rendered = std::fs::read_to_string(tmp.path().join("summary.md")).unwrap();
        assert!(
            page == rendered,
            "{}/summary.md is not what `asynclab report` renders from its results document: copy the rendered one over it",
            dir.display()
        );
        // Every chart committed beside it is the lab's chart of that document.
        for c in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = c.path();
            if p.extension().is_some_and(|x| x == "svg") {
                let drawn = tmp.path().join("charts").join(p.file_name().unwrap());
                assert!(
                    std::fs::read(&p).unwrap() == std::fs::read(&drawn).unwrap_or_default(),
                    "{} is not the chart `asynclab report` draws from the committed document",
                    p.display()
                );
            }
        }
        checked += 1;
    }
    assert!(
        checked >= 2,
        "expected the committed findings, found {checked}"
    );
}

/// What `asynclab report` prints on the terminal for a committed findings page (its one line
/// of timing dropped).
fn printed_report(dir: &Path) -> String {
    let tmp = tempfile::tempdir().unwrap();
    findings_document(dir, tmp.path());
    let out = common::bin()
        .arg("report")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "report {} failed", dir.display());
    let printed: Vec<&str> = std::str::from_utf8(&out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("report regenerated in "))
        .collect();
    printed.join("\n")
}

/// What an HTML comment line `<!-- KIND WHAT -->` names, for the given KIND.
fn marker<'a>(line: &'a str, kind: &str) -> Option<&'a str> {
    line.trim()
        .strip_prefix("<!-- ")?
        .strip_prefix(kind)?
        .strip_prefix(' ')?
        .strip_suffix(" -->")
}

/// A page's pasted terminal summaries: each `<!-- asynclab report docs/findings/NAME -->` line
/// and the fenced block after it, as (findings page, block).
fn pastes(text: &str) -> Vec<(String, String)> {
    fenced_after(text, "asynclab report")
}

/// Each `<!-- KIND WHAT -->` line of a page and the fenced block after it, as (WHAT, block).
fn fenced_after(text: &str, kind: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(page) = marker(line, kind) else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "the line after '{line}' opens no fenced block"
        );
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        out.push((page.to_string(), block.join("\n")));
    }
    out
}

/// Where a findings page's terminal summary must be pasted: (file, page).
const REQUIRED_PASTES: [(&str, &str); 4] = [
    ("README.md", "docs/findings/paterson"),
    ("README.md", "docs/findings/at_scale"),
    ("README.md", "docs/findings/roles_loopback"),
    ("README.md", "docs/findings/roles_containers"),
];

#[test]
fn pasted_summaries_are_what_the_lab_prints_for_their_committed_runs() {
    let root = common::root();
    let mut found = BTreeSet::new();
    let mut stale = Vec::new();
    for file in pages() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        for (page, block) in pastes(&text) {
            let printed = printed_report(&root.join(&page));
            if block != printed {
                stale.push(format!(
                    "{name}'s paste of {page}; `asynclab report {page}` prints now:\n{printed}"
                ));
            }
            found.insert((name.clone(), page));
        }
    }
    for (file, page) in REQUIRED_PASTES {
        assert!(
            found.contains(&(file.to_string(), page.to_string())),
            "{file} pastes no summary of {page} (a `<!-- asynclab report {page} -->` line before a fenced block)"
        );
    }
    assert!(
        stale.is_empty(),
        "pastes that are not what the lab prints:\n{}",
        stale.join("\n\n")
    );
}

/// The decision record `asynclab adr` writes for a committed findings page.
fn written_adr(dir: &Path) -> String {
    let tmp = tempfile::tempdir().unwrap();
    findings_document(dir, tmp.path());
    common::bin().arg("adr").arg(tmp.path()).assert().success();
    std::fs::read_to_string(tmp.path().join("adr.md")).unwrap()
}

/// Every block after `<!-- lines of asynclab adr docs/findings/NAME -->` holds only whole lines
/// of the record the lab writes for that committed run: an excerpt, never a typed figure.
#[test]
fn excerpts_of_a_decision_record_are_lines_the_lab_writes() {
    let root = common::root();
    let mut wrong = Vec::new();
    let mut count = 0;
    for file in pages() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        for (page, block) in fenced_after(&text, "lines of asynclab adr") {
            let written = written_adr(&root.join(&page));
            let before = wrong.len();
            for line in block.lines() {
                count += 1;
                if !written.lines().any(|l| l == line) {
                    wrong.push(format!("{name}: {line:?}"));
                }
            }
            if wrong.len() > before {
                wrong.push(format!("`asynclab adr {page}` writes now:\n{written}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "excerpts that are not lines of the record the lab writes:\n{}",
        wrong.join("\n")
    );
    assert!(
        count >= 1,
        "no excerpt of a decision record found: docs/reading.md has one"
    );
}

/// A page's quotes of committed files: each `<!-- quoted from PATH -->` line and the `> `
/// lines or table rows (`|`) after it, as (path, quoted lines).
fn quotes(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(path) = marker(line, "quoted from") else {
            continue;
        };
        let mut quoted = Vec::new();
        let quoted_line = |l: &str| -> Option<String> {
            l.strip_prefix("> ")
                .or(l.starts_with('|').then_some(l))
                .map(String::from)
        };
        while let Some(q) = lines.peek().and_then(|l| quoted_line(l)) {
            quoted.push(q);
            lines.next();
        }
        out.push((path.to_string(), quoted));
    }
    out
}

/// Every quote of a committed findings file is in that file, word for word (a table as one
/// block): a page may quote a figure from a run, never type one.
#[test]
fn quoted_lines_are_in_the_files_they_quote() {
    let root = common::root();
    let mut wrong = Vec::new();
    let mut count = 0;
    for file in pages() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (path, quoted) in quotes(&text) {
            let source = std::fs::read_to_string(root.join(&path)).unwrap_or_default();
            if quoted.is_empty() {
                wrong.push(format!(
                    "{}: a quote of {path} with no '> ' line after it",
                    file.display()
                ));
            }
            // A table is quoted whole: its rows, in order, as one block of the source.
            let table = quoted.first().is_some_and(|q| q.starts_with('|'));
            if table && !source.contains(&quoted.join("\n")) {
                wrong.push(format!(
                    "{}: this table is not one of {path}'s; paste it again from there:\n{}",
                    file.display(),
                    quoted.join("\n")
                ));
            }
            for q in quoted {
                if !table && !source.contains(&q) {
                    wrong.push(format!("{}: not in {path}: {q}", file.display()));
                }
                count += 1;
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "quotes that their sources do not hold:\n{}",
        wrong.join("\n")
    );
    assert!(
        count >= 1,
        "no quote of a committed file found: the roles figures in README.md are one"
    );
}

#[test]
fn the_paste_and_quote_checks_see_their_markers() {
    let text = "a\n<!-- asynclab report docs/findings/x -->\n```\nl1\nl2\n```\n<!-- quoted from docs/f.md -->\n> one\n> two\nafter\n<!-- quoted from docs/g.md -->\n| a | b |\n|---|---|\n\n| not |\n";
    assert_eq!(
        pastes(text),
        [("docs/findings/x".to_string(), "l1\nl2".to_string())]
    );
    let excerpt = "<!-- lines of asynclab adr docs/findings/y -->\n```\nl3\n```\n";
    assert_eq!(
        fenced_after(excerpt, "lines of asynclab adr"),
        [("docs/findings/y".to_string(), "l3".to_string())]
    );
    assert!(pastes(excerpt).is_empty());
    assert_eq!(
        quotes(text),
        [
            (
                "docs/f.md".to_string(),
                vec!["one".to_string(), "two".to_string()]
            ),
            (
                "docs/g.md".to_string(),
                vec!["| a | b |".to_string(), "|---|---|".to_string()]
            )
        ]
    );
}

#[test]
fn the_self_check_output_quoted_in_the_docs_is_a_committed_runs() {
    let findings = common::root().join("docs/findings");
    let committed: String = ["self-check.txt", "self-check-no-wake-hold.txt"]
        .iter()
        .map(|f| std::fs::read_to_string(findings.join(f)).unwrap())
        .collect();
    let page = std::fs::read_to_string(common::root().join("docs/delay-line.md")).unwrap();
    let mut fenced = false;
    for line in page.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        assert!(
            !fenced || committed.lines().any(|l| l == line),
            "docs/delay-line.md quotes a self-check line that no committed output under docs/findings/ holds: {line:?}"
        );
    }
    // Elsewhere an excerpt names its file: `<!-- self-check docs/findings/FILE -->`, then the
    // fenced block.
    let services = std::fs::read_to_string(common::root().join("docs/services.md")).unwrap();
    let excerpts = fenced_after(&services, "self-check");
    assert!(
        !excerpts.is_empty(),
        "docs/services.md quotes no self-check output"
    );
    for (file, block) in excerpts {
        let output = std::fs::read_to_string(common::root().join(&file))
            .unwrap_or_else(|e| panic!("docs/services.md quotes {file}: {e}"));
        for line in block.lines() {
            assert!(
                output.lines().any(|l| l == line),
                "docs/services.md quotes a line {file} does not hold: {line:?}"
            );
        }
    }
}

/// Each findings folder with a second run beside its first (`second/`): the pair reproduces, or
/// docs/findings.md names each comparison it does not, and its `reproduce.txt` is what
/// `asynclab compare FIRST SECOND --reproduce` prints.
#[test]
fn every_findings_pair_reproduces_as_its_reproduce_txt_says() {
    let findings = common::root().join("docs/findings");
    let index = std::fs::read_to_string(common::root().join("docs/findings.md")).unwrap();
    let not_reproduced = index
        .split_once("## Where a pair does not reproduce")
        .map_or("", |(_, rest)| rest.split("\n## ").next().unwrap_or(""));
    let mut pairs = 0;
    for e in std::fs::read_dir(&findings).unwrap().flatten() {
        let dir = e.path();
        if !dir.join("second").is_dir() {
            continue;
        }
        let rel = dir.strip_prefix(common::root()).unwrap().to_path_buf();
        // The documents unpacked under the same relative paths (the large ones are committed
        // as results.json.xz), so the output names the folders as reproduce.txt does.
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join(&rel);
        std::fs::create_dir_all(copy.join("second")).unwrap();
        findings_document(&dir, &copy);
        findings_document(&dir.join("second"), &copy.join("second"));
        let out = common::bin()
            .current_dir(tmp.path())
            .args(["compare", "--reproduce"])
            .arg(&rel)
            .arg(rel.join("second"))
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        // A comparison the second run did not reproduce is published only as that: named,
        // with the reason, under docs/findings.md's "Where a pair does not reproduce".
        let unexplained: Vec<&str> = printed
            .lines()
            .filter_map(|l| l.strip_prefix("  FAIL "))
            .filter(|what| !not_reproduced.contains(&format!("{}: {what}", rel.display())))
            .collect();
        assert!(
            out.status.success() || unexplained.is_empty(),
            "{} does not reproduce, and docs/findings.md does not say so (paste each as \"{0}: COMPARISON\" under \"Where a pair does not reproduce\", with the reason):\n{}\n\n{printed}",
            rel.display(),
            unexplained.join("\n")
        );
        let committed = std::fs::read_to_string(dir.join("reproduce.txt")).unwrap_or_default();
        assert!(
            committed == printed,
            "{}/reproduce.txt is not what `asynclab compare {0} {0}/second --reproduce` prints now; paste it:\n{printed}",
            rel.display()
        );
        pairs += 1;
    }
    assert!(pairs >= 1, "no findings pair under docs/findings");
}

/// Two findings pages that compare the same two cells (same scenario, variants, parameters and
/// interpreter) reach the same verdict class, or docs/findings.md says why they differ (the
/// line, pasted, under its "Where pages differ" heading).
#[test]
fn findings_pages_agree_on_what_they_both_compare_or_say_why() {
    let findings = common::root().join("docs/findings");
    let mut docs = Vec::new();
    for e in std::fs::read_dir(&findings).unwrap().flatten() {
        let dir = e.path();
        if dir.is_dir() {
            let json = common::findings_json(&dir);
            let doc: asynclab::results::Results = serde_json::from_slice(&json).unwrap();
            docs.push((dir.file_name().unwrap().to_string_lossy().to_string(), doc));
        }
    }
    docs.sort_by(|a, b| a.0.cmp(&b.0));
    let index = std::fs::read_to_string(common::root().join("docs/findings.md")).unwrap();
    let unexplained: Vec<String> = asynclab::compare::reproduce::disagreements(&docs)
        .into_iter()
        .filter(|d| !index.contains(d.as_str()))
        .collect();
    assert!(
        unexplained.is_empty(),
        "findings pages disagree and docs/findings.md does not say why (paste each line under \"Where pages differ\" with the reason):\n{}",
        unexplained.join("\n")
    );
}
