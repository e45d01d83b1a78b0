//! Measuring cells: the matrix, the interleaving scheduler, the executor and the /proc sampler.

pub mod checks;
pub mod executor;
pub mod matrix;
pub mod process;
pub mod sampler;
pub mod scheduler;
pub mod summarize;
pub mod sweep;
