//! The study parser never panics: arbitrary text and mutated copies of the example study file
//! give a study or an error of one line. Rerun for longer with
//! `PROPTEST_CASES=100000 cargo test --release --test fuzz_study`.

use crate::common;

use asynclab::study::Study;
use proptest::prelude::*;

fn example() -> String {
    std::fs::read_to_string(common::root().join("workloads/studies/example.toml")).unwrap()
}

/// Parses and checks the outcome: an error is one line naming the source; a study survives
/// a round trip through its own TOML.
fn check(text: &str) -> Result<(), TestCaseError> {
    match Study::parse(text, "fuzz.toml") {
        Ok(s) => {
            let again = Study::parse(&s.to_toml(), "again.toml");
            prop_assert_eq!(again.as_ref().ok(), Some(&s), "{}", s.to_toml());
        }
        Err(e) => {
            let line = e.to_string();
            prop_assert!(!line.contains('\n'), "{}", line);
            prop_assert!(line.starts_with("fuzz.toml: "), "{}", line);
        }
    }
    Ok(())
}

/// One edit of a text: delete, insert or replace characters at a position.
#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, String),
    Replace(usize, String),
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        let n = chars.len().max(1);
        match e {
            Edit::Delete(at, len) => {
                let at = at % n;
                let end = (at + len).min(chars.len());
                if at < end {
                    chars.drain(at..end);
                }
            }
            Edit::Insert(at, s) => {
                let at = (at % n).min(chars.len());
                chars.splice(at..at, s.chars());
            }
            Edit::Replace(at, s) => {
                let at = at % n;
                let end = (at + s.chars().count()).min(chars.len());
                if at <= end {
                    chars.splice(at..end, s.chars());
                }
            }
        }
    }
    chars.into_iter().collect()
}

fn edit() -> impl Strategy<Value = Edit> {
    let piece = prop_oneof![
        Just("=".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\"".to_string()),
        Just("\n".to_string()),
        Just("[[x]]".to_string()),
        Just("-1".to_string()),
        Just("1e999".to_string()),
        Just("nan".to_string()),
        Just("é".to_string()),
        Just("{a=1}".to_string()),
        Just("1979-05-27".to_string()),
        "\\PC{0,6}",
    ];
    prop_oneof![
        (any::<usize>(), 0usize..20).prop_map(|(a, l)| Edit::Delete(a, l)),
        (any::<usize>(), piece.clone()).prop_map(|(a, s)| Edit::Insert(a, s)),
        (any::<usize>(), piece).prop_map(|(a, s)| Edit::Replace(a, s)),
    ]
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        check(&text)?;
    }

    #[test]
    fn toml_like_text_never_panics(text in "([a-z_]{1,12} = |\\[[a-z_.]{0,12}\\]\n|[0-9\\-.e]{1,6}|\"[^\"\n]{0,8}\"|true|\\[|\\]|, |\n|#.*\n|\\{|\\}){0,40}") {
        check(&text)?;
    }

    #[test]
    fn mutated_examples_never_panic(edits in prop::collection::vec(edit(), 1..8)) {
        check(&apply(&example(), &edits))?;
    }
}

#[test]
fn the_example_round_trips() {
    check(&example()).unwrap();
    assert!(Study::parse(&example(), "example").is_ok());
}
