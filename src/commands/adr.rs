//! `asynclab adr DIR [--out FILE]`: writes an architecture decision record (MADR layout) from
//! a run's results.json — the rendering is [`crate::export::adr`]; this file picks the paths
//! and links the charts `asynclab report` draws into DIR/charts/, relative to the record.

use std::path::{Component, Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::analysis;
use crate::export::adr;
use crate::export::markup::Markdown;
use crate::export::write_atomic;

/// `asynclab adr`.
#[derive(Debug, Args, Clone)]
pub struct AdrArgs {
    /// A results folder holding results.json (or the results.json itself).
    pub dir: PathBuf,
    /// Where to write the record (default: DIR/adr.md).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// The results folder of a folder or results.json path.
pub fn results_dir(dir_or_file: &Path) -> PathBuf {
    if dir_or_file.is_dir() {
        dir_or_file.to_path_buf()
    } else {
        dir_or_file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    }
}

/// `to` relative to the folder `from` (both made absolute first), with `/` separators.
pub fn relative(from: &Path, to: &Path) -> anyhow::Result<String> {
    let abs = |p: &Path| {
        p.canonicalize()
            .with_context(|| format!("cannot resolve {}", p.display()))
    };
    let (from, to) = (abs(from)?, abs(to)?);
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); f.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Ok(parts.join("/"))
}

/// Writes the record; prints where, and a note when the charts are not drawn yet.
pub fn execute(a: &AdrArgs) -> anyhow::Result<i32> {
    let results = crate::analysis::summary::load(&a.dir)?;
    let dir = results_dir(&a.dir);
    let out = a.out.clone().unwrap_or_else(|| dir.join("adr.md"));
    let out_dir = results_dir(&out);
    let report = analysis::analyze(&results);
    let charts_dir = dir.join("charts");
    let prefix = if charts_dir.is_dir() {
        relative(&out_dir, &charts_dir)?
    } else {
        eprintln!(
            "note: {} has no charts yet; `asynclab report {}` draws the ones the record links to",
            dir.display(),
            dir.display()
        );
        relative(&out_dir, &dir)? + "/charts"
    };
    let links = adr::chart_links(&report, prefix.trim_start_matches("./"));
    let text = Markdown::render(&adr::build(&report, &links));
    write_atomic(&out, text.as_bytes())?;
    println!("decision record written to {}", out.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_paths_are_relative_to_the_record() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("results/run1");
        std::fs::create_dir_all(run.join("charts")).unwrap();
        std::fs::create_dir_all(tmp.path().join("docs/adr")).unwrap();
        assert_eq!(relative(&run, &run.join("charts")).unwrap(), "charts");
        assert_eq!(
            relative(&tmp.path().join("docs/adr"), &run.join("charts")).unwrap(),
            "../../results/run1/charts"
        );
    }
}
