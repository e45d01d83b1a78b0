//! The tests that measure: times, rates, ratios and memory, held to bounds that another test
//! beside them would break. One binary, and one test at a time: each takes the machine with
//! `common::alone()` first (cargo runs test binaries one after another, and the tests of one
//! binary on as many threads as there are cores).

mod common;

#[path = "asyncio_ops.rs"]
mod asyncio_ops;
#[path = "delay_line.rs"]
mod delay_line;
#[path = "fanout.rs"]
mod fanout;
#[path = "held_connections.rs"]
mod held_connections;
#[path = "interference.rs"]
mod interference;
#[path = "interpreters.rs"]
mod interpreters;
#[path = "io_http.rs"]
mod io_http;
#[path = "loadgen.rs"]
mod loadgen;
#[path = "mock_http.rs"]
mod mock_http;
#[path = "open_loop.rs"]
mod open_loop;
#[path = "own_workload.rs"]
mod own_workload;
#[path = "python_root.rs"]
mod python_root;
#[path = "reference_client.rs"]
mod reference_client;
#[path = "remote_db.rs"]
mod remote_db;
#[path = "service_db.rs"]
mod service_db;
#[path = "services.rs"]
mod services;
#[path = "slow_consumer.rs"]
mod slow_consumer;
#[path = "study.rs"]
mod study;
