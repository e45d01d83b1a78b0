//! Latency distributions in HdrHistogram form: values in microseconds with 3 significant
//! digits, so every percentile read back (p50 … p99.99, max) is exact to 0.1% of its value,
//! and the whole histogram is kept (V2 encoding, base64) for anyone who wants to re-read it
//! with any HdrHistogram library (`Histogram::decode` here).

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Significant decimal digits the histograms keep.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Percentiles of a latency set read from its HdrHistogram, and the histogram itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyHistogram {
    /// What the latencies measure (as in the cell's latency summary).
    pub kind: String,
    /// Recorded values.
    pub count: u64,
    /// Unit of the recorded values: always "us" (microseconds, rounded).
    pub unit: String,
    /// Significant decimal digits kept: values within 10^-digits of their size.
    pub significant_digits: u8,
    /// Smallest value, ms.
    pub min_ms: f64,
    /// Mean, ms.
    pub mean_ms: f64,
    /// Median, ms.
    pub p50_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// 99.9th percentile, ms.
    pub p99_9_ms: f64,
    /// 99.99th percentile, ms (only meaningful with 10,000 values or more).
    pub p99_99_ms: f64,
    /// Largest value, ms (like every value here: the top of its bucket, within 0.1%).
    pub max_ms: f64,
    /// The histogram in HdrHistogram's V2 encoding (uncompressed), base64.
    pub v2_base64: String,
}

/// Microseconds (rounded) of a latency in ms; None for NaN or negative values.
fn to_us(ms: f64) -> Option<u64> {
    (ms.is_finite() && ms >= 0.0).then(|| (ms * 1000.0).round() as u64)
}

/// Records `latencies_ms` in a histogram; None when none is a valid latency.
pub fn record(kind: &str, latencies_ms: &[f64]) -> Option<LatencyHistogram> {
    let mut h = Histogram::<u64>::new(SIGNIFICANT_DIGITS).expect("3 significant digits is valid");
    for us in latencies_ms.iter().copied().filter_map(to_us) {
        h.record(us)
            .expect("an auto-resizing histogram takes any value");
    }
    if h.is_empty() {
        return None;
    }
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(&h, &mut bytes)
        .expect("serializing into a Vec cannot fail");
    let ms = |us: u64| us as f64 / 1000.0;
    Some(LatencyHistogram {
        kind: kind.to_string(),
        count: h.len(),
        unit: "us".into(),
        significant_digits: SIGNIFICANT_DIGITS,
        min_ms: ms(h.min()),
        mean_ms: h.mean() / 1000.0,
        p50_ms: ms(h.value_at_quantile(0.5)),
        p90_ms: ms(h.value_at_quantile(0.9)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        p99_9_ms: ms(h.value_at_quantile(0.999)),
        p99_99_ms: ms(h.value_at_quantile(0.9999)),
        max_ms: ms(h.max()),
        v2_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// Decodes a stored histogram (values in µs).
pub fn decode(v2_base64: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(v2_base64)?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("not an HdrHistogram V2 encoding: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_exact_to_three_digits_and_the_encoding_round_trips() {
        // 1..=10000 µs: the q-quantile is 10000·q µs, read back within 0.1%.
        let xs: Vec<f64> = (1..=10_000).map(|us| us as f64 / 1000.0).collect();
        let h = record("open-loop-corrected", &xs).unwrap();
        assert_eq!(h.count, 10_000);
        for (got, want) in [
            (h.p50_ms, 5.0),
            (h.p90_ms, 9.0),
            (h.p99_ms, 9.9),
            (h.p99_9_ms, 9.99),
            (h.max_ms, 10.0),
        ] {
            assert!((got - want).abs() <= want * 1e-3, "{got} vs {want}");
        }
        assert_eq!(h.min_ms, 0.001);
        let back = decode(&h.v2_base64).unwrap();
        assert_eq!(back.len(), 10_000);
        assert_eq!(back.value_at_quantile(0.999) as f64 / 1000.0, h.p99_9_ms);
        assert_eq!(
            record("open-loop-corrected", &xs).unwrap(),
            h,
            "deterministic"
        );
    }

    #[test]
    fn invalid_values_are_skipped() {
        assert!(record("k", &[]).is_none());
        assert!(record("k", &[f64::NAN, -1.0]).is_none());
        let h = record("k", &[0.0, 2.5, f64::INFINITY]).unwrap();
        assert_eq!((h.count, h.min_ms), (2, 0.0));
        // Values read back are the top of their bucket: within 0.1%.
        assert!((2.5..=2.5 * 1.001).contains(&h.max_ms), "{}", h.max_ms);
        assert!(decode("not base64!").is_err());
    }
}
