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
    // Each run starts one line numbered `[n/total]`. A run spoiled by other programs is repeated
    // (`--repeats`), which adds one to the total: the numbers still count 1, 2, 3… and the last
    // run is numbered with the final total.
    let starts: Vec<(usize, usize)> = err
        .lines()
        .filter(|l| l.contains("round 1/1") && !l.contains(" repeated ("))
        .filter_map(|l| {
            let (n, rest) = l.split_once('[')?.1.split_once('/')?;
            Some((n.parse().ok()?, rest.split_once(']')?.0.parse().ok()?))
        })
        .collect();
    let numbers: Vec<usize> = starts.iter().map(|s| s.0).collect();
    assert_eq!(numbers, (1..=starts.len()).collect::<Vec<_>>(), "{err}");
    assert!(starts.len() >= 5, "{err}");
    assert_eq!(starts.last().map(|s| s.1), Some(starts.len()), "{err}");
    for variant in [
        "interpreters",
        "multiprocessing",
        "threads",
        "asyncio",
        "sync",
    ] {
        let first = format!("] round 1/1: cpu/{variant}/");
        let runs = err
            .lines()
            .filter(|l| l.contains(&first) && !l.contains(" repeated ("));
        assert_eq!(runs.count(), 1, "{variant}: {err}");
    }
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
    assert!(shown.contains("0/5 runs"), "no done/total display: {shown}");
    // A run spoiled by other programs is repeated and adds one to the total, so the bar ends
    // at its final total, whatever that became.
    let last = shown
        .rsplit(" runs,")
        .nth(1)
        .and_then(|before| before.rsplit(' ').next())
        .and_then(|n| n.split_once('/'))
        .map(|(done, total)| (done.to_string(), total.to_string()));
    let ends = last
        .as_ref()
        .is_some_and(|(done, total)| done == total && total.parse::<usize>().is_ok_and(|t| t >= 5));
    assert!(ends, "the bar ends at the total ({last:?}): {shown}");
    assert!(shown.contains("left"), "no time left shown: {shown}");
    assert!(
        !shown.contains("[1/5]"),
        "plain lines on a terminal: {shown}"
    );
}
