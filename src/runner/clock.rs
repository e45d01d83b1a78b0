//! The driver's clock: seconds since its first reading, on a monotonic clock, so every run's
//! timeline in one results document shares an origin.

use std::sync::OnceLock;
use std::time::Instant;

static ORIGIN: OnceLock<Instant> = OnceLock::new();

/// Seconds from the clock's origin (its first reading in this process) to `at`.
pub fn seconds(at: Instant) -> f64 {
    at.saturating_duration_since(*ORIGIN.get_or_init(|| at))
        .as_secs_f64()
}

/// Seconds from the clock's origin to now; the first call sets the origin.
pub fn now_s() -> f64 {
    seconds(Instant::now())
}
