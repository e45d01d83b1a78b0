//! Real services the workloads run against: a mock HTTP server and PostgreSQL.

pub mod echo;
pub mod mock_http;
pub mod postgres;
pub mod selfcheck;
