//! What `asynclab run` shows while it measures: on a terminal (stderr is one, and neither
//! `CI` nor `NO_COLOR` is set) a progress bar with runs done of the total, the current cell,
//! elapsed and estimated time left; otherwise one plain line per event, prefixed `[n/total]`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::runner::tally::{Event, Tally};

/// The progress display of one run.
pub enum Display {
    /// A live bar on the terminal.
    Bar(ProgressBar),
    /// Plain lines on stderr.
    Lines,
}

/// Whether stderr is a terminal a person watches: not CI, and colour is not refused.
pub fn interactive() -> bool {
    std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none()
        && std::env::var_os("NO_COLOR").is_none()
}

impl Display {
    /// A bar when [`interactive`], else lines; `total` is the runs planned.
    pub fn new(total: usize) -> Display {
        if !interactive() {
            return Display::Lines;
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:24}] {pos}/{len} runs, ~{eta} left  {wide_msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(500));
        Display::Bar(bar)
    }

    /// Shows one event of the scheduler.
    pub fn show(&mut self, t: &Tally, e: Event<'_>) {
        match self {
            Display::Bar(bar) => {
                bar.set_length(t.total as u64);
                bar.set_position(t.done as u64);
                match e {
                    Event::Start { label, cell } => bar.set_message(format!("{label}: {cell}")),
                    Event::Note(line) => bar.println(format!("asynclab: {line}")),
                }
            }
            Display::Lines => match e {
                Event::Start { label, cell } => {
                    eprintln!("asynclab: [{}/{}] {label}: {cell}", t.done + 1, t.total)
                }
                Event::Note(line) => eprintln!("asynclab: [{}/{}] {line}", t.done, t.total),
            },
        }
    }

    /// Ends the display with the runs done.
    pub fn finish(&self, t: &Tally) {
        if let Display::Bar(bar) = self {
            bar.set_length(t.total as u64);
            bar.set_position(t.done as u64);
            bar.finish_with_message("done");
        }
    }
}
