//! What a correct answer of each endpoint of the services under test is
//! (`workloads/services/handlers.py` computes them; this checks them), so a server that
//! answers wrongly is counted as failing, not as fast.

use serde::Deserialize;

/// The seeded table's value for `id` (`src/services/postgres/seed.sql`).
pub fn item_value(id: i64) -> i64 {
    (id * 7919) % 100_000
}

/// The endpoints every service under test serves, with what their answers must hold.
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    /// `/plain`: the body `Hello, World!`.
    Plain,
    /// `/db` (one object) or `/db?queries=N` (a list of N): rows `{"id", "value"}` of the
    /// seeded table.
    Db { queries: Option<usize> },
    /// `/upstream?delay_ms=D&bytes=B`: `{"status": 200, "bytes": B}`.
    Upstream { delay_ms: f64, bytes: usize },
    /// `/cpu?items=K`: `{"items": K, "checksum": sum of item_value(1..=K)}`.
    Cpu { items: usize },
    /// Any path whose answer is checked by its status alone (the mock HTTP server's `/delay`,
    /// in the generator's own tests and self-check).
    Status { path: String },
}

impl Endpoint {
    /// The endpoint `name` (`plain`, `db`, `upstream`, `cpu`) with the cell's parameters.
    pub fn new(
        name: &str,
        queries: usize,
        delay_ms: f64,
        bytes: usize,
        items: usize,
    ) -> Option<Endpoint> {
        Some(match name {
            "plain" => Endpoint::Plain,
            "db" => Endpoint::Db {
                queries: (queries > 1).then_some(queries),
            },
            "upstream" => Endpoint::Upstream { delay_ms, bytes },
            "cpu" => Endpoint::Cpu { items },
            _ => return None,
        })
    }

    /// The names [`Endpoint::new`] takes.
    pub const NAMES: [&'static str; 4] = ["plain", "db", "upstream", "cpu"];

    /// Path and query of its requests.
    pub fn path(&self) -> String {
        match self {
            Endpoint::Plain => "/plain".into(),
            Endpoint::Db { queries: None } => "/db".into(),
            Endpoint::Db { queries: Some(n) } => format!("/db?queries={n}"),
            Endpoint::Upstream { delay_ms, bytes } => {
                format!("/upstream?delay_ms={delay_ms}&bytes={bytes}")
            }
            Endpoint::Cpu { items } => format!("/cpu?items={items}"),
            Endpoint::Status { path } => path.clone(),
        }
    }

    /// Whether `body` is a correct answer; the error names what is wrong.
    pub fn check(&self, body: &[u8]) -> Result<(), String> {
        if let Endpoint::Status { .. } = self {
            return Ok(());
        }
        if let Endpoint::Plain = self {
            return if body == b"Hello, World!" {
                Ok(())
            } else {
                Err(format!("wrong answer: /plain gave {}", preview(body)))
            };
        }
        // Typed reads: the fields checked are parsed, the rest skipped, no JSON tree built.
        let ok = match self {
            Endpoint::Plain | Endpoint::Status { .. } => unreachable!("answered above"),
            Endpoint::Db { queries: None } => parse::<Row>(body)?.is_right(),
            Endpoint::Db { queries: Some(n) } => {
                let rows: Vec<Row> = parse(body)?;
                rows.len() == *n && rows.iter().all(Row::is_right)
            }
            Endpoint::Upstream { bytes, .. } => {
                let a: UpstreamAnswer = parse(body)?;
                a.status == Some(200) && a.bytes == Some(*bytes as i64)
            }
            Endpoint::Cpu { items } => {
                let a: CpuAnswer = parse(body)?;
                let want: i64 = (1..=*items as i64).map(item_value).sum();
                a.items == Some(*items as i64) && a.checksum == Some(want)
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "wrong answer: {} gave {}",
                self.path(),
                preview(body)
            ))
        }
    }
}

/// A row of `/db`.
#[derive(Deserialize)]
struct Row {
    id: Option<i64>,
    value: Option<i64>,
}

impl Row {
    fn is_right(&self) -> bool {
        matches!((self.id, self.value), (Some(id), Some(value)) if (1..=100_000).contains(&id) && value == item_value(id))
    }
}

#[derive(Deserialize)]
struct UpstreamAnswer {
    status: Option<i64>,
    bytes: Option<i64>,
}

#[derive(Deserialize)]
struct CpuAnswer {
    items: Option<i64>,
    checksum: Option<i64>,
}

/// `body` read as `T`; an answer that is not JSON of that shape is a wrong answer.
fn parse<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, String> {
    serde_json::from_slice(body)
        .map_err(|_| format!("wrong answer: not the JSON asked for: {}", preview(body)))
}

fn preview(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(80)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correct_answers_pass_and_wrong_ones_name_the_endpoint() {
        assert!(Endpoint::Plain.check(b"Hello, World!").is_ok());
        assert!(Endpoint::Plain.check(b"Hello").is_err());
        let db = Endpoint::Db { queries: None };
        assert!(db.check(br#"{"id": 2, "value": 15838}"#).is_ok());
        assert!(db
            .check(br#"{"id": 2, "value": 1}"#)
            .unwrap_err()
            .contains("/db"));
        let dbn = Endpoint::Db { queries: Some(2) };
        assert!(dbn
            .check(br#"[{"id": 1, "value": 7919}, {"id": 3, "value": 23757}]"#)
            .is_ok());
        assert!(dbn.check(br#"[{"id": 1, "value": 7919}]"#).is_err());
        let cpu = Endpoint::Cpu { items: 3 };
        assert!(cpu
            .check(br#"{"items": 3, "checksum": 47514, "bytes": 9}"#)
            .is_ok());
        let up = Endpoint::Upstream {
            delay_ms: 10.0,
            bytes: 64,
        };
        assert!(up.check(br#"{"status": 200, "bytes": 64}"#).is_ok());
        assert!(up.check(br#"{"status": 503, "bytes": 64}"#).is_err());
    }
}
