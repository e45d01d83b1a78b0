//! Fuzzing the catalogue parser: arbitrary text and bytes, and mutated copies of the real
//! workloads/catalogue.toml, must never panic; every rejection is one line. An accepted
//! catalogue must also expand into its matrix without panicking. 256 cases per property by
//! default; `PROPTEST_CASES=20000 cargo test --release --test fuzz_catalogue` for a longer run.

use crate::common;

use std::path::PathBuf;

use asynclab::catalogue::{is_identifier, Catalogue};
use asynclab::python::PythonEnv;
use asynclab::runner::matrix;
use proptest::prelude::*;

fn workloads() -> PathBuf {
    common::root().join("workloads")
}

/// The real catalogue's text, read once.
fn real_catalogue() -> String {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| std::fs::read_to_string(workloads().join("catalogue.toml")).unwrap())
        .clone()
}

/// Pieces of TOML (and of the catalogue's own vocabulary) a mutation splices in.
const TOKENS: &[&str] = &[
    "[[scenario]]\n",
    "[scenario.params]\n",
    "[scenario.quick]\n",
    "[scenario.variant_params.sync]\n",
    "[[scenario.exclude]]\n",
    "\n",
    "=",
    "\"",
    "'",
    "[",
    "]",
    "{",
    "}",
    ",",
    "#",
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e400",
    "18446744073709551616",
    "true",
    "[]",
    "[[]]",
    "{}",
    "\"\"",
    "name = \"cpu\"\n",
    "name = \"a b\"\n",
    "script = \"../Cargo.toml\"\n",
    "script = \"/\"\n",
    "variants = []\n",
    "variants = [\"sync\"]\n",
    "baseline = \"nobody\"\n",
    "timeout_s = 0\n",
    "timeout_s = nan\n",
    "timeout_s = 1e300\n",
    "rounds = 0\n",
    "warmups = -1\n",
    "decide_by = \"speed\"\n",
    "requirements = [\"-r x\"]\n",
    "requirements = [\"pkg==1.2\"]\n",
    "services = [\"ftp\"]\n",
    "concurrency = [1, [2]]\n",
    "concurrency = [1, 10, 100]\n",
    "variant = \"sync\"\n",
    "\u{0}",
    "é",
    "\u{feff}",
];

/// One edit of a document: where (a fraction of its length), what, and how much it removes.
#[derive(Debug, Clone)]
enum Edit {
    Delete(f64, usize),
    Insert(f64, String),
    Token(f64, usize, usize),
    DuplicateLine(f64),
    DropLine(f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = 0.0..1.0f64;
    prop_oneof![
        (at.clone(), 1..40usize).prop_map(|(a, n)| Edit::Delete(a, n)),
        (at.clone(), ".{0,12}").prop_map(|(a, s)| Edit::Insert(a, s)),
        (at.clone(), 0..TOKENS.len(), 0..8usize).prop_map(|(a, t, n)| Edit::Token(a, t, n)),
        at.clone().prop_map(Edit::DuplicateLine),
        at.prop_map(Edit::DropLine),
    ]
}

/// The char boundary nearest below `at` × the length.
fn boundary(text: &str, at: f64) -> usize {
    let mut i = ((text.len() as f64) * at) as usize;
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The line (start, end including its newline) around `at`.
fn line_at(text: &str, at: f64) -> (usize, usize) {
    let i = boundary(text, at);
    let start = text[..i].rfind('\n').map_or(0, |p| p + 1);
    let end = text[i..].find('\n').map_or(text.len(), |p| i + p + 1);
    (start, end)
}

fn apply(mut text: String, edits: &[Edit]) -> String {
    for e in edits {
        match e {
            Edit::Delete(at, n) => {
                let a = boundary(&text, *at);
                let b = boundary(&text, ((a + n) as f64 / text.len().max(1) as f64).min(1.0));
                text.replace_range(a..b.max(a), "");
            }
            Edit::Insert(at, s) => {
                let a = boundary(&text, *at);
                text.insert_str(a, s);
            }
            Edit::Token(at, t, n) => {
                let a = boundary(&text, *at);
                let b = boundary(&text, ((a + n) as f64 / text.len().max(1) as f64).min(1.0));
                text.replace_range(a..b.max(a), TOKENS[*t]);
            }
            Edit::DuplicateLine(at) => {
                let (a, b) = line_at(&text, *at);
                let line = text[a..b].to_string();
                text.insert_str(a, &line);
            }
            Edit::DropLine(at) => {
                let (a, b) = line_at(&text, *at);
                text.replace_range(a..b, "");
            }
        }
    }
    text
}

/// Parses `text` with the real workloads folder as the scripts' home: an error is one line;
/// an accepted catalogue keeps its promises and expands without panicking.
fn check(text: &str) {
    match Catalogue::parse(text, &workloads()) {
        Err(e) => {
            let line = format!("{e:#}");
            assert!(!line.contains('\n'), "a rejection is one line: {line:?}");
            assert!(!line.is_empty());
        }
        Ok(cat) => {
            let names = cat.names();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "names are unique: {names:?}");
            let pythons = [PythonEnv::fake("3.12.1")];
            for s in &cat.scenarios {
                assert!(is_identifier(&s.name), "{:?}", s.name);
                assert!(s.variants.contains(&s.baseline_variant().to_string()));
                let (rounds, _) = s.plan(None, None, true);
                assert!(rounds >= 1);
                let _ = s.param_names();
                for quick in [false, true] {
                    if let Err(e) = matrix::expand(s, &workloads(), &pythons, &[], quick) {
                        let line = format!("{e:#}");
                        assert!(!line.contains('\n'), "{line:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_real_catalogue_parses() {
    let cat = Catalogue::parse(&real_catalogue(), &workloads()).unwrap();
    assert!(cat.names().contains(&"io_http".to_string()));
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC*") {
        check(&text);
    }

    #[test]
    fn arbitrary_bytes_from_a_file_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("catalogue.toml");
        std::fs::write(&file, &bytes).unwrap();
        if let Err(e) = Catalogue::load_with(&workloads(), &[file]) {
            let line = format!("{e:#}");
            prop_assert!(!line.contains('\n'), "{:?}", line);
            prop_assert!(line.contains("catalogue.toml"), "names the file: {}", line);
        }
    }

    #[test]
    fn mutated_real_catalogues_never_panic(edits in proptest::collection::vec(edit(), 1..6)) {
        check(&apply(real_catalogue(), &edits));
    }

    #[test]
    fn mutated_single_scenarios_never_panic(edits in proptest::collection::vec(edit(), 1..4)) {
        let text = real_catalogue();
        let first = text.find("[[scenario]]").unwrap();
        let second = first + 1 + text[first + 1..].find("[[scenario]]").unwrap();
        check(&apply(text[first..second].to_string(), &edits));
    }
}
