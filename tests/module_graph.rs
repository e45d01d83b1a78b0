//! Data flows one way: no file of `src/` imports, directly or through others, a file that
//! imports it; and no top-level module (a stage: `runner`, `results`, `analysis`, ...) uses,
//! directly or through others, one that uses it, counting every path into it, its `mod.rs`
//! included. Read from the source (`crate::`, `super::`, `self::` and child-module paths), test
//! modules left out. Between files, a folder's `mod.rs` declares its files and holds what they
//! share, so a file's use of its own folder module is not counted; `lib.rs` and `main.rs` are
//! the top. (`workloads/tests/test_module_graph.py` checks the Python modules the same way.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`["analysis", "sweep"]`) of every source file.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into()).collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            out.insert(parts, p);
        }
    }
    out
}

/// The source without `#[cfg(test)]` modules and comments.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Paths written in the code, as segments, with `use` groups expanded (`a::{b, c::d}`).
fn paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        if ident(chars[i]) && (i == 0 || !(ident(chars[i - 1]) || chars[i - 1] == ':')) {
            let mut found = Vec::new();
            let end = parse(&chars, i, &[], &mut found);
            out.extend(found);
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Parses `a::b::{c, d::e}` from `i`; pushes every full path (prefix + segments) to `out`.
fn parse(chars: &[char], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut segs = prefix.to_vec();
    loop {
        let start = i;
        while i < chars.len() && ident(chars[i]) {
            i += 1;
        }
        segs.push(chars[start..i].iter().collect());
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            if chars.get(i) == Some(&'{') {
                i += 1;
                loop {
                    while i < chars.len() && chars[i].is_whitespace() {
                        i += 1;
                    }
                    if chars.get(i) == Some(&'}') {
                        return i + 1;
                    }
                    if chars.get(i).is_some_and(|c| ident(*c)) {
                        i = parse(chars, i, &segs, out);
                    }
                    while i < chars.len() && chars[i] != ',' && chars[i] != '}' {
                        i += 1;
                    }
                    if chars.get(i) == Some(&',') {
                        i += 1;
                    }
                }
            }
            if !chars.get(i).is_some_and(|c| ident(*c)) {
                break;
            }
        } else {
            break;
        }
    }
    if segs.len() > 1 {
        out.push(segs);
    }
    i
}

/// The module file a path names from module `from` (the deepest module on the path), if any.
fn resolve(
    path: &[String],
    from: &[String],
    mods: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let (mut base, mut rest) = match path[0].as_str() {
        "crate" => (vec![], &path[1..]),
        "self" => (from.to_vec(), &path[1..]),
        "super" => (from[..from.len().saturating_sub(1)].to_vec(), &path[1..]),
        // A child module of this one, named without a prefix.
        first => {
            let mut child = from.to_vec();
            child.push(first.to_string());
            if !mods.contains_key(&child) {
                return None;
            }
            (from.to_vec(), path)
        }
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    let mut best = mods.contains_key(&base).then(|| base.clone());
    for s in rest {
        base.push(s.clone());
        if !mods.contains_key(&base) {
            break;
        }
        best = Some(base.clone());
    }
    best
}

/// Every resolved import between module files: (from, to), test modules left out.
fn imports(mods: &BTreeMap<Vec<String>, PathBuf>) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    for (m, file) in mods {
        if m.is_empty() {
            continue; // lib.rs and main.rs: the top, wiring every stage
        }
        let text = code(&std::fs::read_to_string(file).unwrap());
        for p in paths(&text) {
            if let Some(to) = resolve(&p, m, mods) {
                out.push((m.clone(), to));
            }
        }
    }
    out
}

type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// A cycle of `edges`, as the nodes along it (the first repeated at the end), if any.
fn find_cycle(edges: &Graph) -> Option<Vec<Vec<String>>> {
    fn visit(
        n: &Vec<String>,
        edges: &Graph,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for to in edges.get(n).into_iter().flatten() {
            match state.get(to) {
                Some(1) => {
                    let i = stack.iter().position(|s| s == to).unwrap();
                    let mut cycle = stack[i..].to_vec();
                    cycle.push(to.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(to, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n) {
            if let Some(cycle) = visit(n, edges, &mut state, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

fn assert_acyclic(edges: &Graph) {
    if let Some(cycle) = find_cycle(edges) {
        let text: Vec<String> = cycle.iter().map(|c| c.join("::")).collect();
        panic!("import cycle: {}", text.join(" -> "));
    }
}

#[test]
fn no_module_imports_one_that_imports_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mods = modules(&root.join("src"));
    let mut edges = Graph::new();
    for (m, to) in imports(&mods) {
        // A folder module (`mod.rs`) declares its files; a file using what its folder
        // shares is not a loop between stages, so edges to an ancestor are left out.
        if to != m && !to.is_empty() && !m.starts_with(&to) {
            edges.entry(m).or_default().insert(to);
        }
    }
    assert_acyclic(&edges);
}

#[test]
fn no_stage_uses_one_that_uses_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mods = modules(&root.join("src"));
    let mut edges = Graph::new();
    for (m, to) in imports(&mods) {
        let (from, to) = (m[..1].to_vec(), to[..1.min(to.len())].to_vec());
        if !to.is_empty() && from != to {
            edges.entry(from).or_default().insert(to);
        }
    }
    assert!(edges.len() > 10, "the stages were read: {edges:?}");
    assert_acyclic(&edges);
}

#[test]
fn a_cycle_through_a_parent_module_is_found() {
    let e = |a: &str, b: &str| (vec![a.to_string()], vec![b.to_string()]);
    let mut g = Graph::new();
    for (a, b) in [
        e("results", "reference"),
        e("reference", "runner"),
        e("runner", "results"),
    ] {
        g.entry(a).or_default().insert(b);
    }
    assert!(find_cycle(&g).is_some());
    g.remove(&vec!["runner".to_string()]);
    assert!(find_cycle(&g).is_none());
}

#[test]
fn the_parser_reads_use_groups() {
    let p = paths("use crate::analysis::{ops::loop_of, Report};\nfn f() { super::x::y(); }");
    assert!(p.contains(&vec![
        "crate".into(),
        "analysis".into(),
        "ops".into(),
        "loop_of".into()
    ]));
    assert!(p.contains(&vec!["crate".into(), "analysis".into(), "Report".into()]));
    assert!(p.contains(&vec!["super".into(), "x".into(), "y".into()]));
}
