//! Real services the workloads run against: a mock HTTP server, a TCP echo server and PostgreSQL.

pub mod background;
pub mod echo;
pub mod mock_http;
pub mod postgres;
pub mod selfcheck;
