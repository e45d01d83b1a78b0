//! The tests that check what the lab does and says, not how fast: one binary, its tests run
//! side by side. A test whose bound another test could break belongs in `measuring.rs`.

mod common;

#[path = "cli.rs"]
mod cli;
#[path = "compare.rs"]
mod compare;
#[path = "decision_record.rs"]
mod decision_record;
#[path = "docs.rs"]
mod docs;
#[path = "echo.rs"]
mod echo;
#[path = "faults.rs"]
mod faults;
#[path = "fuzz_catalogue.rs"]
mod fuzz_catalogue;
#[path = "fuzz_results.rs"]
mod fuzz_results;
#[path = "fuzz_study.rs"]
mod fuzz_study;
#[path = "module_graph.rs"]
mod module_graph;
#[path = "postgres_fixture.rs"]
mod postgres_fixture;
#[path = "progress.rs"]
mod progress;
#[path = "pyperf_export.rs"]
mod pyperf_export;
#[path = "report_html.rs"]
mod report_html;
#[path = "report_model.rs"]
mod report_model;
#[path = "schema.rs"]
mod schema;
#[path = "stopping_noise.rs"]
mod stopping_noise;
#[path = "study_files.rs"]
mod study_files;
#[path = "test_groups.rs"]
mod test_groups;
#[path = "user_scenario.rs"]
mod user_scenario;
