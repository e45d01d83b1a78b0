//! Python 3.14 from Debian's unstable suite in a Debian root (`asynclab pythons add 3.14`): the
//! root is made (or reused), its environment built, and a real io_http run on it is measured
//! like any other worker: within Little's law, with its CPU, memory and the interpreter's
//! provenance and GIL state recorded.

use crate::common;

use std::time::Duration;

use common::*;

#[test]
fn io_http_on_python_3_14_in_a_debian_root_meets_littles_law() {
    let _alone = alone();
    let add = bin()
        .args(["pythons", "add", "3.14"])
        .timeout(Duration::from_secs(900))
        .assert()
        .success();
    let said = String::from_utf8_lossy(&add.get_output().stdout).to_string();
    assert!(said.contains("Python 3.14."), "{said}");

    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args([
            "run",
            "--scenario",
            "io_http",
            "--python",
            "3.14",
            "--param",
            "delay_ms=50",
            "--param",
            "requests=20",
            "--rounds",
            "2",
            "--warmups",
            "0",
            "--max-foreign-cores",
            "100",
            "--out",
        ])
        .arg(&dir)
        .timeout(Duration::from_secs(900))
        .assert()
        .success();
    let r = results(&dir);
    let py = &r["env"]["pythons"][0];
    assert!(py["version"].as_str().unwrap().starts_with("3.14."), "{py}");
    assert!(
        py["provenance"]
            .as_str()
            .unwrap()
            .starts_with("Debian package python3.14 "),
        "{py}"
    );
    assert_eq!(py["gil_enabled"], true);
    assert_eq!(py["gil_disabled_build"], false);
    assert!(
        py["packages"]["zuvloop"].is_string(),
        "zuvloop in the 3.14 environment"
    );
    for c in r["cells"].as_array().unwrap() {
        assert_eq!(c["status"], "ok", "{}: {}", c["id"], c["failure"]);
        let s = &c["summary"];
        let concurrency = c["params"]["concurrency"].as_f64().unwrap();
        // Little's law: requests in flight ÷ 50 ms; at least 60% of it on a busy machine.
        let bound = concurrency.min(20.0) / 0.050;
        let t = s["throughput_per_s"]["median"].as_f64().unwrap();
        assert!(
            t <= bound * 1.02 && t >= bound * 0.6,
            "{}: {t}/s, bound {bound}/s",
            c["id"]
        );
        // Measured from outside like any worker: the memory of its own process (an
        // interpreter's tens of MiB, not the launcher's shell) and the requests it made.
        for run in c["runs"].as_array().unwrap() {
            assert!(
                run["baseline_rss_mib"].as_f64().unwrap() > 15.0,
                "{}",
                c["id"]
            );
            assert_eq!(run["server_requests"], 20);
        }
    }
    // CPU time is read in clock ticks (10 ms), so one short asyncio run may read 0; the sync
    // variant's 20 blocking requests never do.
    let sync_cpu: f64 = r["cells"][0]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["cpu_s"].as_f64().unwrap())
        .sum();
    assert!(sync_cpu > 0.0, "sync CPU {sync_cpu}");
}

#[test]
fn versions_debian_does_not_provide_get_one_line() {
    let _alone = alone();
    let assert = bin()
        .args(["pythons", "add", "3.13", "--venvs", "target/no-roots"])
        .timeout(Duration::from_secs(60))
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(err.contains("3.14 and 3.15"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
