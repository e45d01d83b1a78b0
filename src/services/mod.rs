//! Real services the workloads run against: a mock HTTP server, a TCP echo server and PostgreSQL,
//! and the delay line that can put a network distance in front of any of them.

pub mod background;
pub mod delay_check;
pub mod delay_line;
pub mod echo;
pub mod mock_http;
pub mod postgres;
pub mod precise_timer;
pub mod room;
pub mod selfcheck;
pub mod under_test;
pub mod wake_hold;
