//! A room's slow consumers ([`super::fanout`]), once the schedule is over: what each found
//! when it finally read (how many timed messages, and whether the server had closed its
//! connection), and the schedule second by second as the reading clients received it.

use std::time::Duration;

use futures_util::stream::StreamExt;
use tokio_tungstenite::tungstenite::Message;

use super::fanout::{Joined, Seq};

/// The timed schedule second by second, as the reading clients received it.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// When the first message that reached a reading client late (its latency above the
    /// bound) or not at all was intended, s from the schedule's start; None: none did.
    pub first_late_s: Option<f64>,
    /// Per second of the schedule: the largest delivery latency of its messages, ms (None:
    /// none of them was delivered).
    pub max_ms: Vec<Option<f64>>,
    /// Per second of the schedule: deliveries of its messages not received.
    pub missing: Vec<u64>,
}

/// The timeline of `scheduled` messages sent at `rate_per_s` to `reading` clients, from what
/// they received (`per_seq`); messages in `unsent` (ascending) were never sent and are skipped.
pub fn timeline(
    per_seq: &[Seq],
    scheduled: usize,
    unsent: &[usize],
    reading: u64,
    rate_per_s: f64,
    bound_ms: f64,
) -> Timeline {
    let second = |i: usize| (i as f64 / rate_per_s).floor() as usize;
    let seconds = if scheduled == 0 {
        0
    } else {
        second(scheduled - 1) + 1
    };
    let mut out = Timeline {
        first_late_s: None,
        max_ms: vec![None; seconds],
        missing: vec![0; seconds],
    };
    for i in (0..scheduled).filter(|i| unsent.binary_search(i).is_err()) {
        let one = per_seq.get(i).copied().unwrap_or_default();
        let s = second(i);
        out.missing[s] += reading.saturating_sub(one.count);
        if one.count > 0 {
            let ms = one.max_us as f64 / 1000.0;
            out.max_ms[s] = Some(out.max_ms[s].map_or(ms, |m: f64| m.max(ms)));
        }
        let late = one.count < reading || one.max_us as f64 / 1000.0 > bound_ms;
        if late && out.first_late_s.is_none() {
            out.first_late_s = Some(i as f64 / rate_per_s);
        }
    }
    out
}

/// How a slow consumer's connection stood when it finally read.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Still open: nothing more arrived for a while, and no close.
    Open,
    /// The server closed it (a close frame, or the end of the stream), with what it said.
    Closed(String),
    /// It failed (a reset, a protocol error), with the error.
    Failed(String),
}

impl Ending {
    /// Whether the server ended the connection.
    pub fn dropped(&self) -> bool {
        !matches!(self, Ending::Open)
    }

    /// What happened, in a few words.
    pub fn detail(&self) -> String {
        match self {
            Ending::Open => "open".into(),
            Ending::Closed(why) => format!("closed by the server: {why}"),
            Ending::Failed(e) => format!("failed: {e}"),
        }
    }
}

/// What one slow consumer found when it read.
#[derive(Debug, Clone, PartialEq)]
pub struct Fate {
    /// Timed messages it received.
    pub received: u64,
    /// How its connection stood.
    pub ending: Ending,
}

/// Each slow consumer reads what reaches it until its connection ends, nothing arrives for
/// `idle`, or `within` has passed (the last two: still open).
pub async fn fates(joined: &mut Joined, idle: Duration, within: Duration) -> Vec<Fate> {
    let until = tokio::time::Instant::now() + within;
    let reads = joined.slow.iter_mut().map(|ws| async move {
        let mut received = 0;
        loop {
            let next = tokio::time::timeout(idle, ws.next());
            let ending = match tokio::time::timeout_at(until, next).await {
                Err(_) | Ok(Err(_)) => Ending::Open,
                Ok(Ok(None)) => Ending::Closed("the stream ended".into()),
                Ok(Ok(Some(Err(e)))) => Ending::Failed(e.to_string()),
                Ok(Ok(Some(Ok(Message::Close(frame))))) => {
                    Ending::Closed(frame.map_or("no close code".into(), |f| {
                        format!("{} {}", f.code, f.reason)
                    }))
                }
                Ok(Ok(Some(Ok(Message::Text(t))))) => {
                    received += u64::from(!is_warm(&t));
                    continue;
                }
                // Pings (whose payload may read as text), pongs and frames: not messages.
                Ok(Ok(Some(Ok(_)))) => continue,
            };
            return Fate { received, ending };
        }
    });
    futures_util::future::join_all(reads).await
}

/// Whether a delivered text is a warm-up message (`<server_ns> w<seq> …`).
fn is_warm(text: &str) -> bool {
    text.split(' ')
        .nth(1)
        .is_some_and(|seq| seq.starts_with('w'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warm_up_message_is_told_by_its_seq() {
        assert!(is_warm("99 w3 1 xx"));
        assert!(!is_warm("99 3 1 xx"));
    }

    #[test]
    fn the_timeline_finds_the_first_late_message_and_counts_what_is_missing() {
        let seq = |count, ms: u64| Seq {
            count,
            max_us: ms * 1000,
        };
        // Four messages a second to 3 readers: the second second's first message is late, its
        // third reached one reader only, its fourth was never sent.
        let per_seq = [
            seq(3, 5),
            seq(3, 6),
            seq(3, 7),
            seq(3, 8),
            seq(3, 150),
            seq(3, 9),
            seq(1, 9),
        ];
        let t = timeline(&per_seq, 8, &[7], 3, 4.0, 100.0);
        assert_eq!(t.first_late_s, Some(1.0));
        assert_eq!(t.max_ms, vec![Some(8.0), Some(150.0)]);
        assert_eq!(t.missing, vec![0, 2]);
        let quiet = timeline(&per_seq[..4], 4, &[], 3, 4.0, 100.0);
        assert_eq!(quiet.first_late_s, None);
        let lost = timeline(&[], 2, &[], 3, 4.0, 100.0);
        assert_eq!((lost.first_late_s, lost.max_ms), (Some(0.0), vec![None]));
    }
}
