//! The committed JSON Schema follows the Rust types: every field the results types serialize
//! is described in `schema/results.schema.json`, every property the schema describes is one the
//! types serialize, and the documents validate. Checked on each committed document in
//! `tests/data/results/` read through the types, and on one with every optional part filled in.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use asynclab::extras::{CorrectnessRow, Extras, OpFigure, PyperfBenchmark};
use asynclab::results::{
    Interference, Knee, Results, ScenarioInfo, ScenarioPlan, Sweep, SweepPoint,
};
use asynclab::stats::{hdr, summarize};
use common::*;
use serde_json::Value;

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("schema/results.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Each committed results document, read through the types.
fn committed() -> Vec<(String, Results)> {
    let mut docs: Vec<(String, Results)> = std::fs::read_dir(root().join("tests/data/results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let r = Results::load(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), r)
        })
        .collect();
    docs.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(docs.len() >= 3, "committed documents missing");
    docs
}

/// A document in which every optional part of every type is present: a sweep, per-round
/// percentile spreads, further latency sets, histograms, per-scenario plans, services, the
/// catalogue's words, interference, contaminated runs and every typed kind of `extra`.
fn fully_populated() -> Results {
    let mut r = Results::load(&root().join("tests/data/results/two_pythons.json")).unwrap();
    r.env.postgres = Some("postgresql 16 (container postgres:16)".into());
    r.env.mock_http = Some("http://127.0.0.1:8080".into());
    r.env.load_avg_after = Some([1.0, 1.0, 1.0]);
    r.method.cpus = vec![0];
    r.method.placement = Some(asynclab::results::PlacementRecord {
        policy: asynclab::results::PlacementPolicy::Shared,
        effective: asynclab::results::PlacementPolicy::Shared,
        service_cpus: vec![0],
        service_worker_cpus: vec![0],
        other_worker_cpus: vec![],
        not_placed: Some("PostgreSQL in a container".into()),
    });
    let study = asynclab::study::Study::parse(
        "scenarios = ['io_http']\nvariants = ['sync', 'asyncio']\npython = ['3.12']\nloops = ['asyncio']\npg = 'auto'\n\
         pg_image = 'postgres:16'\nhosts = 'containers'\ndatabase_host = 'tcp://10.0.0.7:2375'\nrounds = 3\nmax_rounds = 8\nbudget = '10m'\nwarmups = 1\nquick = true\ncpus = [0]\nplacement = 'shared'\n\
         rates = [10, 20]\nstrict = false\nmax_foreign_cores = 0.1\nrepeats = 3\nnoise_threshold = 0.03\nalpha = 0.05\n\
         [thresholds]\nio_http = ['asyncio/sync >= 5']\n[params]\nconcurrency = [10, 100]\ndelay_ms = 20\n[plans.cpu]\nrounds = 2\nwarmups = 0\n",
        "fully populated",
    )
    .unwrap();
    r.invocation = Some(asynclab::results::Invocation {
        argv: vec!["asynclab".into(), "run".into()],
        cwd: "/tmp".into(),
        study,
    });
    r.scenarios.insert(
        "io_http".into(),
        ScenarioInfo {
            title: "HTTP calls".into(),
            question: "Does asyncio beat threads?".into(),
            baseline: Some("sync".into()),
            contrasts: vec![asynclab::catalogue::Contrast {
                new: "asyncio".into(),
                base: "threads".into(),
                figure: asynclab::catalogue::ContrastFigure::P99,
                row: Some(asynclab::catalogue::FrameworkRow::StrictP99),
            }],
        },
    );
    for p in r.env.pythons.iter_mut() {
        p.gil_disabled_build = Some(false);
        p.gil_enabled = Some(true);
        p.provenance =
            "Debian package python3.14 3.14.10-1 (debian_version forky/sid), prefix /usr".into();
    }
    r.method.delay_lines = vec![asynclab::results::DelayLineRecord {
        service: "postgres".into(),
        rtt_ms: 5.0,
        jitter_ms: 0.5,
    }];
    let role = |role: &str, cpus: Vec<usize>| asynclab::results::RoleRecord {
        role: role.into(),
        container: format!("asynclab-0123abcd-{role}"),
        image: "asynclab/postgres:15-debian".into(),
        image_id: "sha256:b112".into(),
        address: "172.18.0.2".into(),
        cpus,
    };
    r.cells[0].runs[0].roles = vec![asynclab::results::RoleUsage {
        role: "server".into(),
        cpu_s: 0.12,
        pss_mib: 9.5,
    }];
    let timeline = asynclab::results::Timeline {
        spawned_s: 1.0,
        ready_s: 1.2,
        go_s: 1.25,
        done_s: 2.25,
        exited_s: 2.4,
    };
    r.cells[0].runs[0].timeline = Some(timeline);
    r.cells[0].warmup_timelines = vec![timeline];
    r.method.hosts = Some(asynclab::results::HostsRecord {
        mode: "containers".into(),
        engine: "unix:///var/run/docker.sock".into(),
        network: "asynclab-0123abcd".into(),
        roles: vec![
            role("client", vec![0]),
            role("server", vec![1]),
            role("database", vec![1]),
        ],
        round_trips: vec![asynclab::results::RoundTripRecord {
            from: "client".into(),
            to: "server".into(),
            probe: "64-byte TCP echo ping-pong".into(),
            samples: 200,
            median_ms: 0.02,
            p90_ms: 0.03,
            max_ms: 0.05,
        }],
    });
    r.method.wake_hold =
        Some("held at 0 µs through /dev/cpu_dma_latency: idle CPUs poll instead of halting".into());
    r.skipped = vec![asynclab::results::SkippedScenario {
        scenario: "db".into(),
        service: "postgres".into(),
        reason: "PostgreSQL server binaries not found".into(),
    }];
    r.skipped_pythons = vec![asynclab::results::SkippedPython {
        python: "3.14".into(),
        reason: "--python 3.14: interpreter not found".into(),
    }];
    r.ceilings = vec![asynclab::results::CeilingRecord {
        scenario: "db_remote".into(),
        params: BTreeMap::from([("rtt_ms".to_string(), Value::from(5))]),
        client: "tokio-postgres".into(),
        runs: vec![asynclab::reference::CeilingRun {
            ops: 10,
            errors: 1,
            wall_s: 0.5,
            throughput_per_s: 20.0,
            latency_p50_ms: 15.0,
            latency_p99_ms: 16.0,
            checksum: 12345,
            worker_threads: 1,
            first_error: Some("id 7: connection reset".into()),
        }],
        throughput_per_s: Some(asynclab::stats::summarize(&[20.0, 21.0])),
        failure: Some("a failure".into()),
    }];
    r.method.noise_threshold = Some(0.03);
    r.method.alpha = Some(0.05);
    r.method.adaptive = Some("Adaptive rounds: 3 to 8".into());
    r.method.budget_s = Some(600.0);
    r.method.interference = Some(asynclab::results::InterferencePolicy {
        max_foreign_cores: 0.1,
        floor_s: 0.05,
        repeats: 3,
        probe: Some("a walk".into()),
    });
    r.method.scenario_plans.insert(
        "cpu".into(),
        ScenarioPlan {
            rounds: 3,
            warmups: 0,
        },
    );
    let cell = r
        .cells
        .iter_mut()
        .find(|c| c.summary.as_ref().is_some_and(|s| s.latency_ms.is_some()))
        .expect("a cell with latencies");
    cell.group = "concurrency=50".into();
    cell.decide_by = asynclab::catalogue::DecideBy::Throughput;
    cell.failure = Some("a failure".into());
    cell.adaptive = Some(asynclab::results::AdaptiveRounds {
        min_rounds: 3,
        max_rounds: 8,
        stop: Some(asynclab::results::RoundsStop {
            rounds: 4,
            cause: asynclab::results::StopCause::Settled,
            reason: "asyncio vs sync: different".into(),
        }),
    });
    let run = &mut cell.runs[0];
    run.memory_metric = "rss-hwm".into();
    run.server_requests = Some(50);
    run.latency_sets_ms
        .insert("uncorrected".into(), vec![1.0, 2.0]);
    run.interference = Some(Interference {
        foreign_cpu_s: 0.5,
        foreign_cores: 0.25,
        steal_s: 0.0,
        kernel_cpu_s: 0.01,
        involuntary_switches: 3,
        probe_before_ms: 1.0,
        probe_after_ms: 1.1,
        contaminated: true,
        reason: Some("busy".into()),
    });
    let other = || BTreeMap::from([("kept".to_string(), Value::from(1))]);
    run.extra = Extras {
        ops: Some(BTreeMap::from([(
            "sleep0".to_string(),
            OpFigure {
                ns_per_op_median: Some(50.0),
                ns_per_op_stddev: Some(1.0),
                ratio_to_plain_call: Some(2.0),
                doubling_change: Some(0.01),
                timing_ok: Some(true),
                flag: None,
                other: other(),
            },
        )])),
        benchmarks: Some(BTreeMap::from([(
            "sleep0".to_string(),
            PyperfBenchmark {
                median_ns: Some(50.0),
                mean_ns: Some(51.0),
                stdev_ns: Some(1.0),
                other: other(),
            },
        )])),
        rows: Some(asynclab::extras::Rows::Checked(vec![CorrectnessRow {
            case: Value::from("cancel"),
            expected: Value::from("cancelled"),
            observed: Value::from("cancelled"),
            ok: true,
            other: other(),
        }])),
        elapsed_ms: Some(10.0),
        achieved_rate_per_s: Some(10.0),
        abandoned: Some(0),
        workers: Some(2),
        worker_start_ms: Some(80.0),
        call_overhead_us: Some(200.0),
        server: Some(asynclab::extras::ServerFigures {
            name: "uvicorn".into(),
            kind: "async".into(),
            workers: 1,
            threads: 1,
            db_pool_per_worker: 10,
            upstream_pool_per_worker: 100,
            cpus: vec![1],
            cpu_s: 1.5,
            cpu_ms_per_request: 0.3,
            rss_mib: 40.0,
            processes: 1,
            rss_per_process_mib: vec![40.0],
        }),
        client: Some(asynclab::extras::ClientFigures {
            connections: 100,
            connects: 100,
            cpu_s: 0.5,
            cpu_share: 0.1,
            max_start_lag_ms: 0.4,
        }),
        held: Some(asynclab::extras::HeldFigures {
            asked: 1000,
            failed: 1,
            error_samples: vec!["timeout".into()],
            open_s: 0.3,
            idle_s: 1.0,
            open_after_idle: 999,
            open_at_end: 998,
            rss_before_mib: 40.0,
            rss_after_mib: 47.5,
            kib_per_connection: Some(7.7),
        }),
        fanout: Some(asynclab::extras::FanoutFigures {
            clients: 100,
            joined: 99,
            failed: 1,
            error_samples: vec!["handshake: refused".into()],
            join_s: 0.1,
            idle_s: 1.0,
            in_room_after_idle: 99,
            closed_at_end: 0,
            rss_before_mib: 30.0,
            rss_after_mib: 31.2,
            kib_per_connection: Some(12.4),
            rate_per_s: 10.0,
            sent: 50,
            send_errors: 0,
            expected: 4950,
            delivered: 4950,
            missing: 0,
            delivered_per_s: 990.0,
            delivery_ms: Some(asynclab::extras::Percentiles {
                p50: 1.5,
                p99: 3.0,
                max: 4.0,
            }),
            from_stamp_ms: Some(asynclab::extras::Percentiles {
                p50: 1.0,
                p99: 2.5,
                max: 3.5,
            }),
            sampled_clients: 99,
            bound_ms: 100.0,
            broadcast_delay_ms: 0.0,
        }),
        slow_consumer: Some(asynclab::extras::SlowConsumerFigures {
            slow_clients: 1,
            message_bytes: 32768,
            owed: 100,
            owed_mib: 3.125,
            received: 40,
            dropped: 1,
            endings: vec!["closed by the server: 1011 keepalive ping timeout".into()],
            rss_start_mib: 30.0,
            rss_end_mib: 31.0,
            rss_peak_mib: 33.0,
            first_late_s: Some(2.5),
            per_second: asynclab::extras::PerSecond {
                max_delivery_ms: vec![Some(2.0), None],
                missing: vec![0, 99],
                rss_mib: vec![Some(30.5), None],
            },
        }),
        other: other(),
    };
    let summary = cell.summary.as_mut().unwrap();
    summary.contaminated_runs = 1;
    summary.rounds_without_clean_run = 1;
    let spread = summarize(&[1.0, 2.0, 3.0]);
    let latency = summary.latency_ms.as_mut().unwrap();
    latency.p50_over_rounds = Some(spread.clone());
    latency.p99_over_rounds = Some(spread);
    let latency = latency.clone();
    summary
        .latency_sets_ms
        .insert("uncorrected".into(), latency);
    let hist = hdr::record("service", &[1.0, 2.0, 3.0]).unwrap();
    summary.latency_hist = Some(hist.clone());
    summary.latency_sets_hist.insert("uncorrected".into(), hist);
    let id = cell.id.clone();
    r.sweeps.push(Sweep {
        scenario: "io_http".into(),
        variant: "asyncio".into(),
        python: "3.12.1".into(),
        params: BTreeMap::from([("concurrency".into(), Value::from(50))]),
        reference_ms: Some(100.0),
        points: vec![SweepPoint {
            cell_id: id,
            offered_rate_per_s: 10.0,
            achieved_rate_per_s: Some(10.0),
            corrected_p50_ms: Some(100.0),
            corrected_p99_ms: Some(101.0),
            corrected_p99_9_ms: Some(101.5),
            uncorrected_p50_ms: Some(100.0),
            uncorrected_p99_ms: Some(100.5),
            abandoned: 0,
            saturated: false,
            reason: Some("kept up".into()),
        }],
        knee: Knee::NotReached,
        knee_rate_per_s: Some(10.0),
        saturated_rate_per_s: None,
    });
    // Every cell with its A/A twin (the schema describes both lists with one cell type, and a
    // twin's `twin_of` names its original); one cell also stands as a twin in `cells`, so the
    // field shows there as it would in a document read by an older lab.
    r.twins = r
        .cells
        .iter()
        .map(|c| {
            let mut t = c.clone();
            t.twin_of = Some(c.id.clone());
            t.id = format!("{}/twin", c.id);
            t
        })
        .collect();
    r.cells[0].twin_of = Some(r.cells[0].id.clone());
    r
}

/// The concrete schema nodes `node` stands for: `$ref`s resolved, `oneOf`/`anyOf`/`allOf`
/// branches flattened.
fn branches<'a>(root: &'a Value, node: &'a Value) -> Vec<&'a Value> {
    if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        let target = root
            .pointer(reference.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("dangling $ref {reference}"));
        let mut out = branches(root, target);
        out.push(node);
        return out;
    }
    let mut out = vec![node];
    for key in ["oneOf", "anyOf", "allOf"] {
        for b in node
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(branches(root, b));
        }
    }
    out
}

/// What an object node allows: described properties, and the schema of map values.
fn object_parts<'a>(
    root: &'a Value,
    node: &'a Value,
) -> (BTreeMap<&'a str, &'a Value>, Option<&'a Value>) {
    let mut props = BTreeMap::new();
    let mut values = None;
    for n in branches(root, node) {
        if let Some(p) = n.get("properties").and_then(Value::as_object) {
            props.extend(p.iter().map(|(k, v)| (k.as_str(), v)));
        }
        if let Some(a) = n.get("additionalProperties").filter(|a| a.is_object()) {
            values = Some(a);
        }
    }
    (props, values)
}

/// Walks a serialized document along the schema: records the property paths it uses and
/// reports fields the schema does not describe. Objects the schema leaves free-form (no
/// properties, no value schema: `params`, `extra`) are not entered.
fn walk(
    root: &Value,
    node: &Value,
    value: &Value,
    path: &str,
    seen: &mut BTreeSet<String>,
    errors: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            let (props, values) = object_parts(root, node);
            if props.is_empty() && values.is_none() {
                return;
            }
            for (k, v) in map {
                if let Some(sub) = props.get(k.as_str()) {
                    let p = format!("{path}.{k}");
                    walk(root, sub, v, &p, seen, errors);
                    seen.insert(p);
                } else if let Some(sub) = values {
                    walk(root, sub, v, &format!("{path}.*"), seen, errors);
                } else {
                    errors.push(format!(
                        "{path}.{k}: the types serialize it, the schema does not describe it"
                    ));
                }
            }
        }
        Value::Array(items) => {
            let item_nodes: Vec<&Value> = branches(root, node)
                .into_iter()
                .filter_map(|n| n.get("items"))
                .collect();
            for item in items {
                for n in &item_nodes {
                    walk(root, n, item, &format!("{path}[]"), seen, errors);
                }
            }
        }
        _ => {}
    }
}

/// Every property path the schema describes; `required` names it does not describe are errors.
fn schema_paths(
    root: &Value,
    node: &Value,
    path: &str,
    out: &mut BTreeSet<String>,
    errors: &mut Vec<String>,
) {
    assert!(path.len() < 400, "schema recursion at {path}");
    let (props, values) = object_parts(root, node);
    for n in branches(root, node) {
        for r in n
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = r.as_str().unwrap();
            if !props.contains_key(name) {
                errors.push(format!(
                    "{path}.{name}: required by the schema but not described in its properties"
                ));
            }
        }
        if let Some(items) = n.get("items") {
            schema_paths(root, items, &format!("{path}[]"), out, errors);
        }
    }
    for (k, sub) in props {
        let p = format!("{path}.{k}");
        out.insert(p.clone());
        schema_paths(root, sub, &p, out, errors);
    }
    if let Some(sub) = values {
        schema_paths(root, sub, &format!("{path}.*"), out, errors);
    }
}

#[test]
fn the_schema_describes_exactly_the_fields_the_types_serialize() {
    let root = schema();
    let mut docs = committed();
    docs.push(("fully populated".into(), fully_populated()));
    let mut seen = BTreeSet::new();
    // Each difference once, with the documents it shows in.
    let mut undescribed: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (name, doc) in &docs {
        let value = serde_json::to_value(doc).unwrap();
        let mut doc_errors = Vec::new();
        walk(&root, &root, &value, "", &mut seen, &mut doc_errors);
        for e in doc_errors {
            undescribed.entry(e).or_default().insert(name);
        }
    }
    let mut errors: Vec<String> = undescribed
        .into_iter()
        .map(|(e, names)| {
            let names: Vec<&str> = names.into_iter().collect();
            format!("{e} (in {})", names.join(", "))
        })
        .collect();
    let mut described = BTreeSet::new();
    schema_paths(&root, &root, "", &mut described, &mut errors);
    // Only the top of a subtree no type serializes.
    let mut unserialized: Vec<&String> = Vec::new();
    for p in described.difference(&seen) {
        let inside =
            |top: &&String| p.starts_with(&format!("{top}.")) || p.starts_with(&format!("{top}["));
        if !unserialized.iter().any(inside) {
            unserialized.push(p);
        }
    }
    for p in unserialized {
        errors.push(format!(
            "{p}: described by the schema, serialized by no type"
        ));
    }
    assert!(
        errors.is_empty(),
        "schema and types differ:\n{}",
        errors.join("\n")
    );
}

#[test]
fn documents_read_through_the_types_validate() {
    let root = schema();
    let validator = jsonschema::validator_for(&root).unwrap();
    let mut docs = committed();
    docs.push(("fully populated".into(), fully_populated()));
    for (name, doc) in &docs {
        let value = serde_json::to_value(doc).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}
