//! Serde helper for statistics that can be undefined: NaN/±inf are written as JSON `null` and
//! `null` reads back as NaN, so documents with such values survive a round trip.
//!
//! Use with `#[serde(with = "crate::stats::serde_nan")]` on an `f64` field.

use serde::{Deserialize, Deserializer, Serializer};

/// Writes a finite value as a number and NaN or ±inf as `null`.
pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_none()
    }
}

/// Reads a number, or `null` as NaN.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
