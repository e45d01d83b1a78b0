//! Progress while `run` measures: on a pseudo-terminal a live `done/total runs` bar; under
//! `CI` (or without a terminal) plain lines prefixed `[n/total]`.

use crate::common;

use std::time::Duration;

use common::*;

/// Arguments of a tiny CPU run into `out`: 5 cells × 1 round = 5 runs (the last, `interpreters`,
/// is skipped before Python 3.14, still counted as started).
fn tiny(out: &std::path::Path) -> Vec<String> {
    [
        "run",
        "--scenario",
        "cpu",
        "--rounds",
        "1",
        "--warmups",
        "0",
        "--param",
        "n=2000",
        "--param",
        "jobs=2",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([out.display().to_string()])
    .collect()
}

#[test]
fn ci_gets_plain_numbered_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bin()
        .args(tiny(&tmp.path().join("r")))
        .env("CI", "1")
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for n in 1..=5 {
        assert!(
            err.contains(&format!("[{n}/5] round 1/1: cpu/")),
            "{n}: {err}"
        );
    }
    assert!(!err.contains("[6/5]"), "{err}");
}

#[test]
fn a_terminal_gets_a_progress_bar() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("asynclab");
    let args: Vec<String> = tiny(&tmp.path().join("r"));
    let cmd = std::iter::once(exe.display().to_string())
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ");
    // util-linux `script` runs the command on a pseudo-terminal and copies what it shows.
    let out = std::process::Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .current_dir(root())
        .env_remove("CI")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .output()
        .expect("script (util-linux) runs");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("/5 runs"), "no done/total display: {shown}");
    assert!(
        shown.contains("5/5 runs"),
        "the bar ends at the total: {shown}"
    );
    assert!(shown.contains("left"), "no time left shown: {shown}");
    assert!(
        !shown.contains("[1/5]"),
        "plain lines on a terminal: {shown}"
    );
}
