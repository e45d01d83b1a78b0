//! Your own workload, end to end: `new-scenario` writes a script and catalogue entry in a
//! folder outside the repository, `run --catalogue` measures it beside the built-in catalogue,
//! and its cells reach results.json and summary.md. Bad names, clashes and broken catalogues
//! get one line and exit 2; a scenario's own `requirements` are installed once.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;

/// `asynclab new-scenario NAME --dir DIR`, which must succeed.
fn new_scenario(name: &str, dir: &Path) -> String {
    let out = bin()
        .args(["new-scenario", name, "--dir"])
        .arg(dir)
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// The one-line error of a command that must fail with exit 2.
fn one_line_error(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn a_new_scenario_outside_the_repository_runs_with_catalogue_and_reaches_the_report() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    assert!(!tmp.path().starts_with(root()), "outside the repository");
    let mine = tmp.path().join("mine");
    let said = new_scenario("my_work", &mine);
    assert!(
        said.contains("--catalogue"),
        "says what to run next: {said}"
    );
    let catalogue = mine.join("catalogue.toml");
    assert!(mine.join("my_work.py").is_file());

    let listed = bin()
        .arg("list")
        .arg("--catalogue")
        .arg(&catalogue)
        .assert()
        .success();
    let listed = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    assert!(
        listed.contains("io_http"),
        "built-in scenarios stay: {listed}"
    );
    let line = listed.lines().find(|l| l.starts_with("my_work")).unwrap();
    assert!(
        line.contains("catalogue.toml"),
        "says where it came from: {line}"
    );

    let dir = tmp.path().join("run");
    bin()
        .args(["run", "--scenario", "my_work", "--quick", "--rounds", "1"])
        .args(["--warmups", "0", "--python", "3.12", "--catalogue"])
        .arg(&catalogue)
        .arg("--out")
        .arg(&dir)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let r = results(&dir);
    let cells = r["cells"].as_array().unwrap();
    let variants: Vec<&str> = cells
        .iter()
        .filter(|c| c["scenario"] == "my_work")
        .map(|c| c["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["sync", "threads", "asyncio", "multiprocessing"]);
    for c in cells {
        assert_eq!(c["status"], "ok", "{}: {}", c["id"], c["failure"]);
        assert_eq!(c["params"]["operations"], 8, "the quick table applies");
        assert_eq!(c["summary"]["errors"], 0, "{}", c["id"]);
        assert_eq!(c["summary"]["ops"], 8, "{}", c["id"]);
    }
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("my_work"), "{md}");
    for v in [
        "| sync |",
        "| threads |",
        "| asyncio |",
        "| multiprocessing |",
    ] {
        assert!(md.contains(v), "{v} has its row: {md}");
    }
}

#[test]
fn a_second_scenario_is_appended_and_a_name_taken_is_refused() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    new_scenario("first_one", tmp.path());
    new_scenario("second_one", tmp.path());
    let text = std::fs::read_to_string(tmp.path().join("catalogue.toml")).unwrap();
    assert_eq!(text.matches("[[scenario]]").count(), 2, "{text}");
    let listed = bin()
        .arg("list")
        .arg("--catalogue")
        .arg(tmp.path().join("catalogue.toml"))
        .assert()
        .success();
    let listed = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    assert!(listed.contains("first_one") && listed.contains("second_one"));

    std::fs::remove_file(tmp.path().join("first_one.py")).unwrap();
    let err = one_line_error(
        bin()
            .args(["new-scenario", "first_one", "--dir"])
            .arg(tmp.path()),
    );
    assert!(err.contains("already has a scenario 'first_one'"), "{err}");
    let err = one_line_error(
        bin()
            .args(["new-scenario", "second_one", "--dir"])
            .arg(tmp.path()),
    );
    assert!(err.contains("second_one.py already exists"), "{err}");
}

#[test]
fn bad_names_are_one_line_and_exit_2() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    for (name, needle) in [
        ("2fast", "not an identifier"),
        ("my-work", "not an identifier"),
        ("io_http", "is a built-in scenario"),
        ("openloop", "which the worker imports too"),
        ("asyncio", "standard library"),
        ("requests", "lab's requirements"),
    ] {
        let err = one_line_error(bin().args(["new-scenario", name, "--dir"]).arg(tmp.path()));
        assert!(err.contains(needle), "{name}: {err}");
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn clashing_missing_and_malformed_user_catalogues_are_one_line_and_exit_2() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let f = tmp.path().join(name);
        std::fs::write(&f, text).unwrap();
        f
    };
    std::fs::write(tmp.path().join("s.py"), "").unwrap();
    std::fs::write(tmp.path().join("harness.py"), "").unwrap();
    let entry = |name: &str, script: &str| {
        format!("[[scenario]]\nname = \"{name}\"\nscript = \"{script}\"\ntitle = \"t\"\nvariants = [\"a\"]\n")
    };
    let clash = write("clash.toml", &entry("cpu", "s.py"));
    let module = write("module.toml", &entry("mine", "harness.py"));
    let twice = write("twice.toml", &entry("mine", "s.py"));
    let broken = write("broken.toml", "[[scenario]\nname = ");
    let no_script = write("no_script.toml", &entry("mine", "missing.py"));
    let cases = [
        (
            vec![clash],
            "scenario 'cpu' has the name of a built-in scenario",
        ),
        (vec![module], "has the module name of"),
        (vec![twice.clone(), twice], "has the name of a scenario in"),
        (vec![broken], "malformed catalogue"),
        (vec![no_script], "script \"missing.py\" not found"),
        (vec![tmp.path().join("absent.toml")], "cannot read it"),
    ];
    for (files, needle) in cases {
        for sub in ["list", "run"] {
            let mut cmd = bin();
            cmd.arg(sub);
            if sub == "run" {
                cmd.args(["--scenario", "cpu"]);
            }
            for f in &files {
                cmd.arg("--catalogue").arg(f);
            }
            let err = one_line_error(&mut cmd);
            assert!(err.contains(needle), "{sub} {files:?}: {err}");
            assert!(
                err.contains(files[0].file_name().unwrap().to_str().unwrap()),
                "names the file: {err}"
            );
        }
    }
}

/// A user catalogue with one scenario on the test workloads' harness requiring `requirement`.
fn catalogue_requiring(dir: &Path, requirement: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("needs.py"), "").unwrap();
    let file = dir.join("catalogue.toml");
    let text = format!(
        "[[scenario]]\nname = \"needs\"\nscript = \"needs.py\"\ntitle = \"t\"\nvariants = [\"a\"]\nrequirements = [\"{requirement}\"]\n"
    );
    std::fs::write(&file, text).unwrap();
    file
}

/// `asynclab envs` on the package-free test workloads, in a fresh environments folder, with
/// uv offline (the wheel it installs comes from uv's cache; nothing is fetched).
fn envs(venvs: &Path, catalogue: &Path) -> assert_cmd::Command {
    let mut cmd = bin();
    cmd.args([
        "envs",
        "--workloads",
        "tests/data/workloads",
        "--python",
        "3.12",
    ])
    .arg("--venvs")
    .arg(venvs)
    .arg("--catalogue")
    .arg(catalogue)
    .env("UV_OFFLINE", "1")
    .timeout(Duration::from_secs(300));
    cmd
}

#[test]
fn a_scenarios_requirements_are_installed_once_and_a_bad_one_is_one_line() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    let venvs = tmp.path().join("venvs");
    // The lab's own pin of idna (a dependency-free wheel that uv has cached after `make envs`).
    let pin = std::fs::read_to_string(root().join("workloads/requirements/py311plus.txt"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("idna=="))
        .unwrap()
        .to_string();
    let cat = catalogue_requiring(tmp.path(), &pin);
    let first = envs(&venvs, &cat).assert().success();
    let said = String::from_utf8_lossy(&first.get_output().stderr).into_owned();
    assert!(
        said.contains(&format!("installing {pin} (scenario needs)")),
        "{said}"
    );
    let env = std::fs::read_dir(&venvs)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("cpython-3.12"))
        .unwrap()
        .path();
    let record = std::fs::read_to_string(env.join(".asynclab-scenario-requirements")).unwrap();
    assert_eq!(record.trim(), pin);
    let imported = std::process::Command::new(env.join("bin/python"))
        .args(["-c", "import idna"])
        .status()
        .unwrap();
    assert!(imported.success(), "the package is in the environment");

    let again = envs(&venvs, &cat).assert().success();
    let said = String::from_utf8_lossy(&again.get_output().stderr).into_owned();
    assert!(
        !said.contains("installing"),
        "a rerun installs nothing: {said}"
    );

    let bad = catalogue_requiring(tmp.path(), "asynclab-no-such-package==0.0.1");
    let out = envs(&venvs, &bad).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("asynclab: "))
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "one line beside the progress line: {stderr}"
    );
    let err = errors[0];
    assert!(
        err.contains(
            "scenario needs: requirement 'asynclab-no-such-package==0.0.1' did not install"
        ),
        "{err}"
    );
    assert!(err.contains("fix it in the `requirements` of"), "{err}");
}

#[test]
fn a_time_budget_holds_and_stops_what_it_cannot_settle() {
    let _alone = alone();
    // Two variants doing the same thing, which only the budget may stop. With no noise band
    // they cannot settle as equal; and at α = 1e-9 no look before 18 rounds can call them
    // different (the smallest two-sided p of n rounds against n is 2 / C(2n, n), and the first
    // look that can reject spends 60% of α), while 18 rounds time 14.4 s of work (two runs of
    // 40 calls of 10 ms each), more than the 15 s budget leaves room for beside their starts.
    // At the default α, equal variants are called different in up to 5% of runs: a correct
    // lab this test would fail.
    let tmp = tempfile::tempdir().unwrap();
    let mine = tmp.path().join("mine");
    new_scenario("twins", &mine);
    let catalogue = mine.join("catalogue.toml");
    let text = std::fs::read_to_string(&catalogue).unwrap();
    let text = text.replace(
        r#"variants = ["sync", "threads", "asyncio", "multiprocessing"]"#,
        r#"variants = ["sync", "threads"]"#,
    ) + "\n[scenario.variant_params.threads]\nconcurrency = 1\n";
    std::fs::write(&catalogue, text).unwrap();
    let budget = 15.0;
    let dir = tmp.path().join("run");
    let start = std::time::Instant::now();
    bin()
        .args(["run", "--scenario", "twins", "--rounds", "3"])
        .args([
            "--max-rounds",
            "20",
            "--budget",
            "15s",
            "--noise-threshold",
            "0",
            "--alpha",
            "1e-9",
        ])
        // Budget mechanics, not interference: a round another program made busy would settle
        // the comparison as inconclusive.
        .args(["--max-foreign-cores", "100"])
        .args(["--python", "3.12", "--catalogue"])
        .arg(&catalogue)
        .arg("--out")
        .arg(&dir)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let took = start.elapsed().as_secs_f64();
    assert!(
        took <= budget * 1.1,
        "took {took:.1} s on a {budget} s budget"
    );
    let r = results(&dir);
    assert!(schema_errors(&r).is_empty(), "{:#?}", schema_errors(&r));
    assert_eq!(r["method"]["budget_s"], 15.0);
    for c in r["cells"].as_array().unwrap() {
        let stop = &c["adaptive"]["stop"];
        assert_eq!(stop["cause"], "budget", "{}: {stop}", c["id"]);
        let rounds = stop["rounds"].as_u64().unwrap();
        assert!((3..20).contains(&rounds), "{rounds} rounds");
        assert!(
            stop["reason"].as_str().unwrap().contains("threads vs sync"),
            "names the open comparison: {stop}"
        );
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("2 stopped by the time budget (15 s)"),
        "the report says so"
    );
}
