//! WebSocket fan-out, checked against a known answer: with a deliberate 10 ms sleep in each
//! room's broadcast path (`broadcast_delay_ms`), the median delivery latency rises by 10 ms
//! ± 1 ms on every server of the `fanout` scenario (the lab's own Rust room too), every
//! delivery arrives, the document
//! meets its schema, and the run leaves no server behind.

use crate::common;

use common::*;

/// The deliberate delay, ms.
const DELAY_MS: f64 = 10.0;
/// How far the rise may be from it, ms (the bound).
const TOLERANCE_MS: f64 = 1.0;

#[test]
fn a_ten_millisecond_sleep_in_the_broadcast_path_adds_ten_milliseconds_to_the_median() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    bin()
        .args(["run", "--scenario", "fanout", "--python", "3.12"])
        .args(["--rounds", "1", "--param", "clients=100"])
        .args(["--param", &format!("broadcast_delay_ms=0,{DELAY_MS}")])
        .args(["--param", "duration_s=3", "--max-foreign-cores", "100"])
        .arg("--out")
        .arg(&dir)
        .timeout(std::time::Duration::from_secs(600))
        .assert()
        .success();
    assert_eq!(
        wait_for_none(std::time::Duration::from_secs(10)),
        Vec::<i32>::new(),
        "server processes left behind after the run"
    );
    let doc = results(&dir);
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8, "every server, with and without the delay");
    let p50 = |variant: &str, delay: f64| -> f64 {
        let cell = cells
            .iter()
            .find(|c| {
                c["variant"] == variant && c["params"]["broadcast_delay_ms"].as_f64() == Some(delay)
            })
            .unwrap_or_else(|| panic!("no cell {variant} with broadcast_delay_ms={delay}"));
        let run = cell["runs"].as_array().unwrap().last().unwrap();
        let f = &run["extra"]["fanout"];
        assert_eq!(f["joined"], 100, "{variant}: every client joined: {f}");
        assert_eq!(f["missing"], 0, "{variant}: every delivery arrived: {f}");
        assert!(
            f["delivered"].as_u64().unwrap() >= 100 * 30,
            "{variant}: {f}"
        );
        f["delivery_ms"]["p50"].as_f64().unwrap()
    };
    for variant in [
        "ws_flask_sock",
        "ws_uvicorn",
        "ws_websockets",
        "ws_rust_reference",
    ] {
        let (without, with) = (p50(variant, 0.0), p50(variant, DELAY_MS));
        let rise = with - without;
        assert!(
            (rise - DELAY_MS).abs() <= TOLERANCE_MS,
            "{variant}: median delivery {without:.3} ms without the delay, {with:.3} ms with it: a rise of {rise:.3} ms, not {DELAY_MS} ± {TOLERANCE_MS}"
        );
    }
}
