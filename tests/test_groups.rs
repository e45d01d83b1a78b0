//! The test binaries' rules: with `autotests = false`, a file of tests/ runs only when
//! Cargo.toml names it as a `[[test]]` or one of those includes it, so every file must be one
//! of the two; and every test of `measuring.rs`'s files takes the machine (`alone()`) first.

use crate::common::root;

/// The `path` of every `[[test]]` in Cargo.toml.
fn test_targets() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let manifest: toml::Value = text.parse().unwrap();
    manifest["test"]
        .as_array()
        .expect("Cargo.toml lists its [[test]] targets")
        .iter()
        .map(|t| t["path"].as_str().unwrap().to_string())
        .collect()
}

/// The files a group file includes with `#[path = "..."]`, as tests/ paths.
fn included(group: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(group)).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("#[path = \""))
        .map(|l| format!("tests/{}", l.trim_end_matches("\"]")))
        .collect()
}

#[test]
fn every_file_of_tests_runs_in_one_binary() {
    let targets = test_targets();
    let mut runs: Vec<String> = targets.clone();
    for t in &targets {
        runs.extend(included(t));
    }
    let mut files: Vec<String> = std::fs::read_dir(root().join("tests"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".rs"))
        .map(|n| format!("tests/{n}"))
        .collect();
    files.sort();
    for f in &files {
        let times = runs.iter().filter(|r| *r == f).count();
        assert_eq!(
            times, 1,
            "{f} runs in {times} test binaries: name it once, as a [[test]] in Cargo.toml or in a group file (tests/measuring.rs, tests/behaviour.rs)"
        );
    }
}

#[test]
fn every_measuring_test_takes_the_machine_first() {
    for file in included("tests/measuring.rs") {
        let text = std::fs::read_to_string(root().join(&file)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim();
            if t != "#[test]" && !t.starts_with("#[tokio::test") {
                continue;
            }
            // The function's first statement, past its other attributes and its signature.
            let open = (i..lines.len())
                .find(|&j| lines[j].trim_end().ends_with('{'))
                .unwrap();
            assert_eq!(
                lines[open + 1].trim(),
                "let _alone = alone();",
                "{file}:{}: a measuring test starts with `let _alone = alone();`",
                open + 1
            );
        }
    }
}
