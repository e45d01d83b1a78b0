//! `asynclab report` on saved results: summary.md, report.html and the charts are rebuilt
//! byte-identically, and report.html shows every chart in headless Chromium (Debian's
//! `chromium`; `.ci/run` installs it).
//!
//! Visibility is checked two ways. (1) A probe copy of the page, with a script appended at
//! the end of `<body>` (the report itself has none), records each chart's laid-out box and
//! computed visibility; `chromium --dump-dom` returns it. (2) A screenshot of the unmodified
//! report, as tall as the page, must show drawn pixels — not just background — inside each
//! of those boxes, including coloured ones (bars and curves).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const WIDTH: u32 = 1200;

/// Copies a fixture to `dir/results.json` and runs `asynclab report dir`.
fn report(fixture: &str, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(
        root().join("tests/data/results").join(fixture),
        dir.join("results.json"),
    )
    .unwrap();
    bin().arg("report").arg(dir).assert().success();
}

/// Every file the report writes, with its bytes, sorted by path.
fn outputs(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<PathBuf> = ["summary.md", "report.html", "results.csv"]
        .iter()
        .map(|f| dir.join(f))
        .collect();
    for e in std::fs::read_dir(dir.join("charts")).unwrap() {
        files.push(e.unwrap().path());
    }
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

/// Chart names (file stems) of `dir/charts/*.svg`, sorted.
fn chart_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("charts"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "svg").then(|| p.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    names.sort();
    names
}

#[test]
fn report_is_rebuilt_byte_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    report("two_pythons.json", &dir);
    let first = outputs(&dir);
    bin().arg("report").arg(&dir).assert().success();
    let second = outputs(&dir);
    assert_eq!(first.len(), second.len());
    for ((p, a), (_, b)) in first.iter().zip(&second) {
        assert!(a == b, "{} differs on the second call", p.display());
    }
    // Throughput, latency and memory for both scenarios, grouped-by-python for both (two
    // interpreters); each as SVG and PNG.
    let names = chart_names(&dir);
    for kind in ["throughput", "latency", "memory", "grouped-python"] {
        for scenario in ["io_http", "cpu"] {
            let name = format!("{kind}-{scenario}");
            assert!(names.contains(&name), "{name} missing from {names:?}");
            let png = std::fs::read(dir.join("charts").join(format!("{name}.png"))).unwrap();
            assert_eq!(&png[1..4], b"PNG", "{name}.png is not a PNG");
        }
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(!html.contains("<script") && !html.contains("http://www.w3.org/1999/xlink"));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
}

/// The committed results documents' file names, sorted.
fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("tests/data/results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

#[test]
fn report_never_rewrites_results_json() {
    let tmp = tempfile::tempdir().unwrap();
    for fixture in fixtures() {
        let dir = tmp.path().join(&fixture);
        report(&fixture, &dir);
        let committed = std::fs::read(root().join("tests/data/results").join(&fixture)).unwrap();
        let after = std::fs::read(dir.join("results.json")).unwrap();
        assert!(committed == after, "{fixture}: results.json changed");
        assert!(dir.join("summary.md").is_file(), "{fixture}: no report");
    }
}

#[test]
fn outputs_get_the_usual_mode_not_a_temp_files_0600() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    for (umask, mode) in [("022", 0o644), ("027", 0o640)] {
        let dir = tmp.path().join(umask);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            root().join("tests/data/results/quick.json"),
            dir.join("results.json"),
        )
        .unwrap();
        // The umask a user's shell would set, then `asynclab report DIR`.
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" report \"$1\" >/dev/null"
            ))
            .arg(assert_cmd::cargo::cargo_bin("asynclab"))
            .arg(&dir)
            .current_dir(root())
            .status()
            .unwrap();
        assert!(status.success());
        let mut files = vec![
            dir.join("summary.md"),
            dir.join("results.csv"),
            dir.join("report.html"),
        ];
        files.extend(
            std::fs::read_dir(dir.join("charts"))
                .unwrap()
                .map(|e| e.unwrap().path()),
        );
        for f in files {
            let got = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
            assert_eq!(got, mode, "{} under umask {umask}: {got:o}", f.display());
        }
    }
}

#[test]
fn single_interpreter_runs_have_no_grouped_chart_and_mark_each_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    report("quick.json", &dir);
    let names = chart_names(&dir);
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("grouped")), "{names:?}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    // 3 rounds decide, paired by round: every non-baseline row carries a verdict (a marked
    // ratio), and none is "too few rounds".
    assert_eq!(html.matches("too few rounds)</td>").count(), 0);
    let marked = html.matches("class=\"sig\"").count() + html.matches("class=\"ns\"").count();
    assert!(marked >= 6, "{marked} marked ratios");
}

#[test]
fn per_operation_runs_get_the_ops_chart_instead_of_throughput_bars() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    report("asyncio_ops_four_pythons.json", &dir);
    let names = chart_names(&dir);
    assert_eq!(
        names,
        ["memory-asyncio_ops", "ops-python-asyncio-asyncio_ops"],
        "one interpreter chart for the one loop; no throughput bars, which mean nothing here"
    );
    let svg =
        std::fs::read_to_string(dir.join("charts/ops-python-asyncio-asyncio_ops.svg")).unwrap();
    for needle in [
        "relative to Python 3.10.13",
        "create_task + await",
        "TCP echo round trip",
        "Python 3.13.0",
    ] {
        assert!(svg.contains(needle), "{needle:?} missing");
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("ops-python-asyncio-asyncio_ops") || html.contains("cost per operation"));
}

/// The Chromium binary: `$CHROMIUM` or `chromium` on PATH.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return p.into();
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
        .expect("headless Chromium is needed for this test: apt-get install -y chromium (.ci/run does it)")
}

/// Runs headless Chromium with `args` on `page`; its stdout. Killed after 90 s.
fn run_chromium(profile: &Path, args: &[String], page: &Path) -> String {
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--disable-dev-shm-usage",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium exited with {status}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// Appended to the probe copy: each chart's box in page coordinates and its visibility.
const PROBE: &str = r#"<script>
(function () {
  var out = [];
  document.querySelectorAll("figure > svg").forEach(function (s) {
    var r = s.getBoundingClientRect(), cs = getComputedStyle(s);
    out.push([s.parentNode.id, Math.round(r.left + scrollX), Math.round(r.top + scrollY),
      Math.round(r.width), Math.round(r.height),
      cs.display !== "none" && cs.visibility === "visible" && cs.opacity !== "0"]);
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify({height: document.documentElement.scrollHeight, charts: out});
  document.body.appendChild(pre);
})();
</script>"#;

/// One chart's laid-out box.
#[derive(Debug)]
struct BoxInfo {
    id: String,
    x: u32,
    y: u32,
    w: u32,
    h: u32,
    visible: bool,
}

fn probe(dir: &Path, profile: &Path) -> (u32, Vec<BoxInfo>) {
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let probe_page = dir.join("probe.html");
    std::fs::write(
        &probe_page,
        html.replace("</body>", &format!("{PROBE}</body>")),
    )
    .unwrap();
    let dom = run_chromium(
        profile,
        &[format!("--window-size={WIDTH},900"), "--dump-dom".into()],
        &probe_page,
    );
    let json = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("probe output missing from the DOM dump:\n{dom}"));
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let boxes = v["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| BoxInfo {
            id: c[0].as_str().unwrap().to_string(),
            x: c[1].as_u64().unwrap() as u32,
            y: c[2].as_u64().unwrap() as u32,
            w: c[3].as_u64().unwrap() as u32,
            h: c[4].as_u64().unwrap() as u32,
            visible: c[5].as_bool().unwrap(),
        })
        .collect();
    (v["height"].as_u64().unwrap() as u32, boxes)
}

#[test]
fn every_chart_is_visible_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    report("two_pythons.json", &dir);
    let profile = tmp.path().join("chromium-profile");
    let (height, boxes) = probe(&dir, &profile);

    // Every chart file is in the page, laid out with a real size, and visible.
    let mut ids: Vec<String> = boxes
        .iter()
        .map(|b| b.id.trim_start_matches("chart-").to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, chart_names(&dir));
    for b in &boxes {
        assert!(b.visible, "{b:?} is hidden");
        assert!(b.w >= 300 && b.h >= 150, "{b:?} is too small to read");
        assert!(
            b.x + b.w <= WIDTH && b.y + b.h <= height,
            "{b:?} lies outside the page"
        );
    }

    // A screenshot of the report itself (no probe), tall enough for the whole page.
    let shot = tmp.path().join("report.png");
    run_chromium(
        &profile,
        &[
            format!("--window-size={WIDTH},{height}"),
            format!("--screenshot={}", shot.display()),
        ],
        &dir.join("report.html"),
    );
    let png = resvg::tiny_skia::Pixmap::load_png(&shot).expect("chromium wrote a PNG");
    assert_eq!(png.width(), WIDTH);
    assert!(png.height() >= height, "{} < {height}", png.height());
    for b in &boxes {
        let (mut drawn, mut coloured, mut total) = (0u64, 0u64, 0u64);
        for y in b.y..(b.y + b.h).min(png.height()) {
            for x in b.x..(b.x + b.w).min(png.width()) {
                let p = png.pixel(x, y).unwrap();
                let (r, g, bl) = (p.red() as i32, p.green() as i32, p.blue() as i32);
                total += 1;
                if r.min(g).min(bl) < 235 {
                    drawn += 1;
                }
                if r.max(g).max(bl) - r.min(g).min(bl) > 60 {
                    coloured += 1;
                }
            }
        }
        let (drawn, coloured) = (drawn as f64 / total as f64, coloured as f64 / total as f64);
        assert!(
            drawn > 0.02,
            "{}: only {:.2}% of its pixels are drawn",
            b.id,
            drawn * 100.0
        );
        assert!(
            coloured > 0.002,
            "{}: only {:.3}% of its pixels are coloured (no bars or curves?)",
            b.id,
            coloured * 100.0
        );
    }
}
