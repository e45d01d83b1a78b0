//! Measuring cells: the matrix, the interleaving scheduler, the executor, the /proc sampler and
//! the interference each run met.

pub mod ceiling;
pub mod checks;
pub mod clock;
pub mod executor;
pub mod interference;
pub mod matrix;
pub mod process;
pub mod sampler;
pub mod scheduler;
pub mod sweep;
pub mod tally;
