//! Reads the TOML files users write (study files, catalogues) into typed structs, and says
//! where one is wrong: the line and the exact key path (`plans.cpu.rounds`, `scenario[2].rounds`)
//! from `serde_path_to_error`, and whether the fault is the syntax, an unknown key or a value.
//! Each caller words its own one-line error from that, with its own fixes.

use serde::de::DeserializeOwned;

/// What is wrong with a TOML file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlError {
    /// 1-based line of the fault, where the parser knows it.
    pub line: Option<usize>,
    /// The keys from the top of the document to the fault (array positions left out):
    /// `["plans", "cpu", "rounds"]`. Empty for a syntax error.
    pub keys: Vec<String>,
    /// The full path, array positions included (`scenario[2].rounds`); empty for a syntax error.
    pub path: String,
    /// Which kind of fault.
    pub kind: Fault,
    /// The parser's own words, on one line.
    pub message: String,
}

/// The kinds of fault a TOML file can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Not TOML at all: the key path is unknown.
    Syntax,
    /// A key the struct does not have.
    UnknownKey,
    /// A key the struct needs is not there (the path is of the table that lacks it).
    MissingKey,
    /// A value of the wrong type or range.
    Value,
}

impl TomlError {
    /// Where the fault is: `line 3: plans.cpu.rounds`, `line 3` for a syntax error, the path
    /// alone where the line is unknown.
    pub fn place(&self) -> String {
        match (self.line, self.path.is_empty()) {
            (Some(l), false) => format!("line {l}: {}", self.path),
            (Some(l), true) => format!("line {l}"),
            (None, false) => self.path.clone(),
            (None, true) => "not a TOML file".to_string(),
        }
    }
}

/// Folds newlines and runs of spaces into single spaces.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parses `text` as a `T`. Never panics.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, TomlError> {
    serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
        let path = e.path();
        let keys: Vec<String> = path
            .iter()
            .filter_map(|s| match s {
                serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                _ => None,
            })
            .collect();
        let path = if path.iter().next().is_some() {
            path.to_string()
        } else {
            String::new()
        };
        let inner = e.into_inner();
        let line = inner
            .span()
            .map(|s| text.get(..s.start).unwrap_or("").matches('\n').count() + 1);
        let message = one_line(inner.message());
        // The whole text is parsed before any key is read, so a fault outside every key is
        // the syntax.
        let kind = if path.is_empty() {
            Fault::Syntax
        } else if message.starts_with("unknown field") {
            Fault::UnknownKey
        } else if message.starts_with("missing field") {
            Fault::MissingKey
        } else {
            Fault::Value
        };
        TomlError {
            line,
            keys,
            path,
            kind,
            message,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        #[serde(default)]
        n: Option<u32>,
        #[serde(default)]
        plans: BTreeMap<String, Plan>,
        #[serde(default)]
        item: Vec<Plan>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Plan {
        rounds: Option<u32>,
        #[serde(default)]
        name: Option<String>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Named {
        name: String,
    }

    fn err(text: &str) -> TomlError {
        parse::<Doc>(text).unwrap_err()
    }

    #[test]
    fn faults_carry_the_line_and_the_exact_path() {
        let e = err("n = 1\n[plans.cpu]\nrounds = -1\n");
        assert_eq!((e.kind, e.line), (Fault::Value, Some(3)));
        assert_eq!(e.path, "plans.cpu.rounds");
        assert_eq!(e.keys, ["plans", "cpu", "rounds"]);
        assert_eq!(e.place(), "line 3: plans.cpu.rounds");

        let e = err("[plans.cpu]\nroundz = 1\n");
        assert_eq!(
            (e.kind, e.path.as_str()),
            (Fault::UnknownKey, "plans.cpu.roundz")
        );

        let e = err("[[item]]\nrounds = 1\n[[item]]\nrounds = \"x\"\n");
        assert_eq!((e.path.as_str(), e.line), ("item[1].rounds", Some(4)));
        assert_eq!(e.keys, ["item", "rounds"]);

        let e = parse::<BTreeMap<String, Named>>("[a]\nname = 'x'\n[b]\nnome = 'y'\n").unwrap_err();
        assert_eq!((e.kind, e.path.as_str()), (Fault::MissingKey, "b"));

        let e = err("n = [1,\n= 2");
        assert_eq!((e.kind, e.path.as_str()), (Fault::Syntax, ""));
        assert!(!e.message.contains('\n'));
        assert!(e.place().starts_with("line "), "{}", e.place());
    }
}
