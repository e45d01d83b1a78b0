//! Fuzzing the results loader: arbitrary text and bytes, and mutated copies of the committed
//! results documents (tests/data/results/*.json), must never panic; every rejection is one line
//! naming the document. 256 cases per property by default;
//! `PROPTEST_CASES=20000 cargo test --release --test fuzz_results` for a longer run.

use crate::common;

use asynclab::results::Results;
use proptest::prelude::*;
use serde_json::Value;

const DOCS: &[&str] = &[
    "quick.json",
    "two_pythons.json",
    "asyncio_ops_four_pythons.json",
];

const SHOWN: &str = "fuzz/results.json";

/// The committed documents' text, read once.
fn doc_text(i: usize) -> &'static str {
    static TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let texts = TEXTS.get_or_init(|| {
        DOCS.iter()
            .map(|d| {
                std::fs::read_to_string(common::root().join("tests/data/results").join(d)).unwrap()
            })
            .collect()
    });
    &texts[i]
}

fn check(text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = Results::parse(text, SHOWN) {
        let line = format!("{e:#}");
        prop_assert!(!line.contains('\n'), "a rejection is one line: {:?}", line);
        prop_assert!(line.contains(SHOWN), "names the document: {}", line);
    }
    Ok(())
}

/// A value to put where another was: every JSON type, with edge cases of each.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(0)),
        Just(serde_json::json!(1e308)),
        ".{0,8}".prop_map(Value::String),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!([[]])),
    ]
}

/// One structural edit: walk `path` (each step picks a child by index modulo its count), then
/// replace that node, delete it from its parent, or duplicate an array element.
#[derive(Debug, Clone)]
enum Edit {
    Replace(Vec<usize>, Value),
    Delete(Vec<usize>),
    Grow(Vec<usize>),
}

fn edit() -> impl Strategy<Value = Edit> {
    let path = proptest::collection::vec(any::<usize>(), 0..8);
    prop_oneof![
        (path.clone(), value()).prop_map(|(p, v)| Edit::Replace(p, v)),
        path.clone().prop_map(Edit::Delete),
        path.prop_map(Edit::Grow),
    ]
}

fn child(v: &mut Value, step: usize) -> Option<&mut Value> {
    match v {
        Value::Array(a) if !a.is_empty() => {
            let n = a.len();
            a.get_mut(step % n)
        }
        Value::Object(o) if !o.is_empty() => {
            let n = o.len();
            o.values_mut().nth(step % n)
        }
        _ => None,
    }
}

fn apply(doc: &mut Value, edit: &Edit) {
    let (path, last) = match edit {
        Edit::Replace(p, _) | Edit::Delete(p) | Edit::Grow(p) => match p.split_last() {
            Some((last, rest)) => (rest, *last),
            None => {
                if let Edit::Replace(_, v) = edit {
                    *doc = v.clone();
                }
                return;
            }
        },
    };
    let mut node = doc;
    for step in path {
        let is_leaf = !matches!(node, Value::Array(a) if !a.is_empty())
            && !matches!(node, Value::Object(o) if !o.is_empty());
        if is_leaf {
            break;
        }
        node = child(node, *step).unwrap();
    }
    match (edit, node) {
        (Edit::Replace(_, v), n) => {
            if let Some(c) = child(n, last) {
                *c = v.clone();
            } else {
                *n = v.clone();
            }
        }
        (Edit::Delete(_), Value::Array(a)) if !a.is_empty() => {
            let n = a.len();
            a.remove(last % n);
        }
        (Edit::Delete(_), Value::Object(o)) if !o.is_empty() => {
            let key = o.keys().nth(last % o.len()).unwrap().clone();
            o.remove(&key);
        }
        (Edit::Grow(_), Value::Array(a)) if !a.is_empty() => {
            let n = a.len();
            let copy = a[last % n].clone();
            a.push(copy);
        }
        _ => {}
    }
}

/// A byte-level edit of the text: delete, insert or overwrite a short run.
fn text_edit(text: &str, at: f64, cut: usize, insert: &str) -> String {
    let mut i = ((text.len() as f64) * at) as usize;
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    let mut j = (i + cut).min(text.len());
    while !text.is_char_boundary(j) {
        j += 1;
    }
    format!("{}{insert}{}", &text[..i], &text[j..])
}

#[test]
fn the_committed_documents_load() {
    for (i, name) in DOCS.iter().enumerate() {
        Results::parse(doc_text(i), name).unwrap();
    }
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC*") {
        check(&text)?;
    }

    #[test]
    fn arbitrary_json_like_text_never_panics(text in "[\\[\\]{}\",:0-9eE.+\\-a-z \\n]{0,200}") {
        check(&text)?;
        check(&format!("{{\"schema_version\": 1, {text}"))?;
    }

    #[test]
    fn arbitrary_bytes_from_a_file_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("results.json"), &bytes).unwrap();
        if let Err(e) = Results::load(dir.path()) {
            let line = format!("{e:#}");
            prop_assert!(!line.contains('\n'), "{:?}", line);
            prop_assert!(line.contains("results.json"), "{}", line);
        }
    }

    #[test]
    fn structurally_mutated_documents_never_panic(
        which in 0..DOCS.len(),
        edits in proptest::collection::vec(edit(), 1..5),
    ) {
        let mut doc: Value = serde_json::from_str(doc_text(which)).unwrap();
        for e in &edits {
            apply(&mut doc, e);
        }
        check(&doc.to_string())?;
    }

    #[test]
    fn textually_mutated_documents_never_panic(
        which in 0..DOCS.len(),
        at in 0.0..1.0f64,
        cut in 0..20usize,
        insert in "[\\[\\]{}\",:0-9.\\-a-z]{0,6}",
    ) {
        check(&text_edit(doc_text(which), at, cut, &insert))?;
    }
}
