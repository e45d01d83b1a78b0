//! The catalogue's services under test (`[[server]]`): Python web servers a `driver =
//! "loadgen"` scenario names as its variants, each an app folder and a start command.

use serde::{Deserialize, Serialize};

/// Which side of the sync/async question a server stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// Blocking handlers: a request holds a worker process or thread until it is answered.
    Sync,
    /// Coroutines on an event loop: a worker serves many requests at once.
    Async,
    /// The lab's own server in Rust, beside the others to show what the generator measures of
    /// a server that costs next to nothing; never a side of the sync/async question.
    Reference,
}

impl ServerKind {
    /// Its catalogue name.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Sync => "sync",
            ServerKind::Async => "async",
            ServerKind::Reference => "reference",
        }
    }
}

/// A worker count: a number, or a rule on the CPUs the server gets (`"2*cores+1"`, `"cores"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Count {
    /// This many.
    Fixed(usize),
    /// `A*cores+B`, `cores`, `cores+B` or `A*cores`.
    Rule(String),
}

impl Count {
    /// The count for a server given `cores` CPUs; `None` for a rule that does not parse.
    pub fn resolve(&self, cores: usize) -> Option<usize> {
        match self {
            Count::Fixed(n) => Some(*n),
            Count::Rule(r) => {
                let r: String = r.chars().filter(|c| !c.is_whitespace()).collect();
                let (mul, add) = r.split_once("cores")?;
                let mul = match mul {
                    "" => 1,
                    m => m.strip_suffix('*')?.parse().ok()?,
                };
                let add = match add {
                    "" => 0,
                    a => a.strip_prefix('+')?.parse().ok()?,
                };
                Some(mul * cores + add)
            }
        }
    }
}

/// One service under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Server {
    /// Its name, which a scenario lists as a variant.
    pub name: String,
    /// One line saying what it is (framework, server, worker model).
    pub title: String,
    /// `sync` or `async`: the side it stands on when the report looks for a crossover;
    /// `reference` for the lab's own servers, on no side.
    pub kind: ServerKind,
    /// The start command; `{python}`, `{port}`, `{workers}` and `{threads}` are filled in, and
    /// `{asynclab}` (the lab's own binary, for its reference servers).
    /// It must serve the endpoints of `workloads/services/README.md` on {host}:{port}.
    pub command: Vec<String>,
    /// Folder the command runs in (its app modules), relative to the catalogue's folder.
    #[serde(default = "default_dir")]
    pub dir: String,
    /// Worker processes (the parameter `workers` overrides it).
    pub workers: Count,
    /// Threads per worker (the parameter `threads` overrides it).
    #[serde(default = "one")]
    pub threads: Count,
    /// Database connections per worker process (the parameter `db_pool` overrides it).
    #[serde(default = "one")]
    pub db_pool: Count,
    /// Keep-alive connections to the upstream per worker process (the parameter
    /// `upstream_pool` overrides it); default: one per thread.
    #[serde(default)]
    pub upstream_pool: Option<Count>,
    /// Arguments appended when the scenario sets `keep_alive_s` (how long an idle keep-alive
    /// connection is kept), `{keep_alive_s}` filled in; empty: the server has no such setting
    /// (gunicorn's sync workers close every connection after its answer).
    #[serde(default)]
    pub keep_alive: Vec<String>,
    /// The catalogue file it came from, for messages; `None`: the built-in one.
    #[serde(skip)]
    pub catalogue: Option<std::path::PathBuf>,
}

/// The running lab's own binary, for `{asynclab}` (the name alone when it cannot be found,
/// which the server's start then reports).
fn asynclab_binary() -> String {
    std::env::current_exe().map_or_else(|_| "asynclab".into(), |p| p.display().to_string())
}

fn default_dir() -> String {
    "services".into()
}

fn one() -> Count {
    Count::Fixed(1)
}

/// The placeholders a command may hold.
pub const PLACEHOLDERS: [&str; 6] = [
    "{python}",
    "{host}",
    "{port}",
    "{workers}",
    "{threads}",
    "{asynclab}",
];
/// The placeholder of the `keep_alive` arguments.
pub const KEEP_ALIVE: &str = "{keep_alive_s}";

/// The placeholders in `arg`, each with its braces.
fn placeholders(arg: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = arg;
    while let Some(i) = rest.find('{') {
        let tail = &rest[i..];
        let end = tail.find('}').map_or(tail.len(), |e| e + 1);
        found.push(&tail[..end]);
        rest = &tail[end..];
    }
    found
}

impl Server {
    /// Checks what parsing cannot: a command, its placeholders, rules that parse.
    pub fn check(&self) -> anyhow::Result<()> {
        if !super::is_identifier(&self.name) {
            anyhow::bail!(
                "server name {:?} is not an identifier: use letters, digits and _",
                self.name
            );
        }
        if self.command.is_empty() {
            anyhow::bail!(
                "server {}: command is empty; give the argv that starts it",
                self.name
            );
        }
        if !self.command.iter().any(|a| a.contains("{port}")) {
            anyhow::bail!(
                "server {}: command never says {{port}}; the lab picks the port",
                self.name
            );
        }
        for p in self.command.iter().flat_map(|a| placeholders(a)) {
            if !PLACEHOLDERS.contains(&p) {
                anyhow::bail!(
                    "server {}: unknown placeholder {p} in its command; known: {}",
                    self.name,
                    PLACEHOLDERS.join(" ")
                );
            }
        }
        for p in self.keep_alive.iter().flat_map(|a| placeholders(a)) {
            if p != KEEP_ALIVE {
                anyhow::bail!(
                    "server {}: unknown placeholder {p} in its keep_alive arguments; the one known: {KEEP_ALIVE}",
                    self.name
                );
            }
        }
        if !self.keep_alive.is_empty() && !self.keep_alive.iter().any(|a| a.contains(KEEP_ALIVE)) {
            anyhow::bail!(
                "server {}: keep_alive never says {KEEP_ALIVE}; give the arguments that set its idle keep-alive timeout, e.g. [\"--keep-alive\", \"{KEEP_ALIVE}\"]",
                self.name
            );
        }
        for (what, c) in [
            ("workers", &self.workers),
            ("threads", &self.threads),
            ("db_pool", &self.db_pool),
            (
                "upstream_pool",
                self.upstream_pool.as_ref().unwrap_or(&self.threads),
            ),
        ] {
            if c.resolve(1).is_none_or(|n| n < 1) {
                anyhow::bail!(
                    "server {}: {what} = {c:?}: give a number from 1, or a rule like \"2*cores+1\"",
                    self.name
                );
            }
        }
        Ok(())
    }

    /// Whether the lab chooses the address the server binds (its command says `{host}`): a
    /// server that binds a fixed one cannot answer from another role's container.
    pub fn binds_host(&self) -> bool {
        self.command.iter().any(|a| a.contains("{host}"))
    }

    /// The command with its placeholders filled, and its `keep_alive` arguments when
    /// `keep_alive_s` is given.
    pub fn argv(
        &self,
        python: &str,
        host: &str,
        port: u16,
        workers: usize,
        threads: usize,
        keep_alive_s: Option<u64>,
    ) -> Vec<String> {
        let mut argv: Vec<String> = self
            .command
            .iter()
            .map(|a| {
                a.replace("{python}", python)
                    .replace("{asynclab}", &asynclab_binary())
                    .replace("{host}", host)
                    .replace("{port}", &port.to_string())
                    .replace("{workers}", &workers.to_string())
                    .replace("{threads}", &threads.to_string())
            })
            .collect();
        if let Some(s) = keep_alive_s {
            argv.extend(
                self.keep_alive
                    .iter()
                    .map(|a| a.replace(KEEP_ALIVE, &s.to_string())),
            );
        }
        argv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_rules_resolve_on_the_cores_given() {
        let rule = |r: &str| Count::Rule(r.into());
        assert_eq!(rule("2*cores+1").resolve(1), Some(3));
        assert_eq!(rule("2 * cores + 1").resolve(4), Some(9));
        assert_eq!(rule("cores").resolve(2), Some(2));
        assert_eq!(rule("cores+2").resolve(2), Some(4));
        assert_eq!(Count::Fixed(7).resolve(2), Some(7));
        assert_eq!(rule("two").resolve(2), None);
        assert_eq!(rule("2cores").resolve(2), None);
    }

    fn server(command: &[&str], workers: Count) -> Server {
        Server {
            name: "s".into(),
            title: "t".into(),
            kind: ServerKind::Sync,
            command: command.iter().map(|a| a.to_string()).collect(),
            dir: default_dir(),
            workers,
            threads: one(),
            db_pool: one(),
            upstream_pool: None,
            keep_alive: Vec::new(),
            catalogue: None,
        }
    }

    #[test]
    fn a_bad_server_gets_one_line_naming_it_and_the_fix() {
        let ok = server(&["{python}", "app.py", "{port}"], Count::Fixed(1));
        assert!(ok.check().is_ok());
        assert!(!ok.binds_host());
        let bound = server(&["{python}", "app.py", "{host}:{port}"], Count::Fixed(1));
        assert!(bound.binds_host());
        assert_eq!(
            bound.argv("/py", "10.0.0.2", 80, 1, 1, None)[2],
            "10.0.0.2:80"
        );
        assert_eq!(
            ok.argv("/py", "127.0.0.1", 80, 3, 2, Some(60)),
            ["/py", "app.py", "80"].map(String::from)
        );
        let kept = Server {
            keep_alive: vec!["--keep-alive".into(), "{keep_alive_s}".into()],
            ..ok.clone()
        };
        assert!(kept.check().is_ok());
        assert_eq!(
            kept.argv("/py", "127.0.0.1", 80, 3, 2, Some(60))[3..],
            ["--keep-alive", "60"]
        );
        assert_eq!(kept.argv("/py", "127.0.0.1", 80, 3, 2, None).len(), 3);
        let no_value = Server {
            keep_alive: vec!["--keep-alive".into()],
            ..ok.clone()
        };
        assert!(no_value
            .check()
            .unwrap_err()
            .to_string()
            .contains("{keep_alive_s}"));
        let err = |s: Server| s.check().unwrap_err().to_string();
        assert!(err(server(&["{python}", "app.py"], Count::Fixed(1))).contains("{port}"));
        assert!(err(server(&["{python}", "{prot}", "{port}"], Count::Fixed(1))).contains("{prot}"));
        assert!(err(server(&["{port}"], Count::Rule("many".into()))).contains("2*cores+1"));
        assert!(err(server(&["{port}"], Count::Fixed(0))).contains("workers"));
    }
}
