//! Statistics over rounds: summaries, percentiles, bootstrap intervals, significance, outliers.
//!
//! Everything here is deterministic: bootstrap resampling uses the seeded generator in
//! [`rng`], so regenerating a report from the same measurements gives byte-identical output.
//!
//! * [`mod@percentile`] — [`median`], [`percentile()`] (numpy's default linear interpolation) and
//!   [`percentiles_sorted`] for large pre-sorted latency arrays.
//! * [`summary`] — [`summarize`]: n, median with a bootstrap 95 % interval, min, max, mean,
//!   standard deviation, coefficient of variation.
//! * [`bootstrap`] — the bootstrap intervals, including [`paired_ratio`], which resamples
//!   rounds as pairs because rounds interleave the variants.
//! * [`paired`] — [`paired_log_ratio`]: the per-round log ratios of two cells of one run, with
//!   a t test and interval, and the [`paired::resolution`] such rounds give.
//! * [`significance`] — [`mann_whitney`] and [`min_possible_p`], for samples that share no
//!   rounds (two runs); the verdict built on both is `analysis::comparison`'s.
//! * [`sequential`] — [`Looks`]: how adaptive rounds split α over their looks.
//! * [`outliers`] — [`modified_z_outliers`] and the report's [`warnings`].
//! * [`hdr`] — latency distributions as HdrHistograms (µs, 3 significant digits, V2 base64).

pub mod bootstrap;
pub mod hdr;
pub mod outliers;
pub mod paired;
pub mod percentile;
pub mod rng;
pub mod sequential;
pub mod serde_nan;
pub mod significance;
pub mod summary;

#[cfg(test)]
mod props;

pub use bootstrap::{independent_ratio, paired_ratio, RatioEstimate, RESAMPLES};
pub use outliers::{
    modified_z_outliers, round_warnings, warnings, Cause, RoundWarning, OUTLIER_THRESHOLD,
};
pub use paired::{paired_log_ratio, PairedTest, MIN_PAIRED_ROUNDS, PAIRED_T};
pub use percentile::{median, percentile, percentiles_sorted};
pub use sequential::Looks;
pub use significance::{
    mann_whitney, min_possible_p, valid_noise_threshold, RankTest, ALPHA, DEFAULT_NOISE_THRESHOLD,
};
pub use summary::{mean, stddev, summarize, Summary};
