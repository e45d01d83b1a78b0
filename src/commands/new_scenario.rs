//! `asynclab new-scenario NAME`: writes a workload script of your own (NAME.py, on the lab's
//! harness) and its catalogue entry (appended to catalogue.toml), to run with `--catalogue`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::catalogue::{is_identifier, Catalogue};
use crate::error::UsageError;
use crate::python::is_stdlib_module;
use crate::python::scenario_requirements::package_name;

/// The script template: sync, threads, asyncio and multiprocessing variants of one operation.
const SCRIPT_TEMPLATE: &str = include_str!("../../workloads/templates/scenario.py");

/// The catalogue entry template, appended to `DIR/catalogue.toml`.
const ENTRY_TEMPLATE: &str = include_str!("../../workloads/templates/scenario.toml");

/// `asynclab new-scenario`.
#[derive(Debug, Args, Clone)]
pub struct NewScenarioArgs {
    /// The scenario's name (and its script's module name): letters, digits and _.
    pub name: String,
    /// Folder to write NAME.py and catalogue.toml in (created if missing).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// The lab's workloads folder, whose scenario and module names NAME may not take.
    #[arg(long, default_value = "workloads")]
    pub workloads: PathBuf,
}

/// Checks the name, writes the script and adds the catalogue entry.
pub fn execute(args: &NewScenarioArgs) -> anyhow::Result<i32> {
    let name = args.name.as_str();
    check_name(name, &args.workloads)?;
    let script = args.dir.join(format!("{name}.py"));
    let catalogue = args.dir.join("catalogue.toml");
    if script.exists() {
        return Err(name_error(format!(
            "{} already exists; pick another name or another --dir",
            script.display()
        )));
    }
    let existing = match std::fs::read_to_string(&catalogue) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => anyhow::bail!("cannot read {}: {e}", catalogue.display()),
    };
    if let Some(text) = &existing {
        check_not_listed(name, text, &catalogue)?;
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let shown = std::path::absolute(&catalogue)?;
    let entry = ENTRY_TEMPLATE
        .replace("__NAME__", name)
        .replace("__CATALOGUE__", &shown.display().to_string());
    let mut text = existing.clone().unwrap_or_else(|| {
        "# Scenarios of my own, for `asynclab run --catalogue THIS_FILE` (and `list`, `envs`).\n"
            .into()
    });
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&entry);
    std::fs::write(&script, SCRIPT_TEMPLATE.replace("__NAME__", name))
        .with_context(|| format!("cannot write {}", script.display()))?;
    std::fs::write(&catalogue, text)
        .with_context(|| format!("cannot write {}", catalogue.display()))?;
    println!(
        "wrote {} (the workload: set-up, then the timed operation)",
        script.display()
    );
    let verb = if existing.is_some() {
        "added to"
    } else {
        "wrote"
    };
    println!(
        "{verb} {} (scenario {name}: variants, parameters)",
        catalogue.display()
    );
    println!(
        "next, from the asynclab checkout: asynclab run --catalogue {} --scenario {name} --quick",
        shown.display()
    );
    Ok(0)
}

/// The usage error of a bad NAME.
fn name_error(message: String) -> anyhow::Error {
    UsageError::Flag {
        flag: "new-scenario NAME",
        message,
    }
    .into()
}

/// NAME must be an identifier, and neither a built-in scenario nor a module the worker imports
/// (a workloads module, the standard library, a package of the lab's requirements).
fn check_name(name: &str, workloads: &Path) -> anyhow::Result<()> {
    if !is_identifier(name) {
        return Err(name_error(format!(
            "{name:?} is not an identifier; use letters, digits and _ (not first a digit), e.g. my_workload"
        )));
    }
    let builtin = Catalogue::load(workloads)?;
    if builtin.names().iter().any(|n| n == name) {
        return Err(name_error(format!(
            "'{name}' is a built-in scenario (see `asynclab list`); pick another name"
        )));
    }
    if workloads.join(format!("{name}.py")).exists() {
        return Err(name_error(format!(
            "'{name}' is the name of {}/{name}.py, which the worker imports too; pick another name",
            workloads.display()
        )));
    }
    if is_stdlib_module(name) {
        return Err(name_error(format!(
            "'{name}' is a module of Python's standard library, which the script would shadow; pick another name"
        )));
    }
    if requirement_modules(workloads).iter().any(|m| m == name) {
        return Err(name_error(format!(
            "'{name}' is a package of the lab's requirements ({}/requirements), which the script would shadow; pick another name",
            workloads.display()
        )));
    }
    Ok(())
}

/// The module-like names (`-` as `_`) of every package in `WORKLOADS/requirements/*.txt`.
fn requirement_modules(workloads: &Path) -> Vec<String> {
    let Ok(files) = std::fs::read_dir(workloads.join("requirements")) else {
        return Vec::new();
    };
    files
        .flatten()
        .filter_map(|f| std::fs::read_to_string(f.path()).ok())
        .flat_map(|text| {
            text.lines()
                .filter(|l| !l.starts_with(['#', ' ', '-']))
                .map(|l| package_name(l).replace('-', "_"))
                .collect::<Vec<_>>()
        })
        .filter(|m| !m.is_empty())
        .collect()
}

/// Refuses a NAME the existing catalogue already lists (read as plain TOML, so a catalogue
/// whose scripts are not written yet still answers).
fn check_not_listed(name: &str, text: &str, catalogue: &Path) -> anyhow::Result<()> {
    let doc: toml::Value = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not valid TOML ({}); fix it or pick another --dir",
            catalogue.display(),
            e.message()
        )
    })?;
    let listed = doc
        .get("scenario")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .any(|s| s.get("name").and_then(toml::Value::as_str) == Some(name));
    if listed {
        return Err(name_error(format!(
            "{} already has a scenario '{name}'; pick another name or edit that entry",
            catalogue.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workloads() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads")
    }

    #[test]
    fn names_that_would_clash_or_shadow_are_refused() {
        for (name, why) in [
            ("9lives", "not an identifier"),
            ("my-thing", "not an identifier"),
            ("cpu", "built-in scenario"),
            ("harness", "which the worker imports too"),
            ("harness_models", "which the worker imports too"),
            ("harness_outcome", "which the worker imports too"),
            ("json", "standard library"),
            ("aiohttp", "lab's requirements"),
            ("sqlalchemy", "lab's requirements"),
        ] {
            let err = check_name(name, &workloads()).unwrap_err().to_string();
            assert!(err.contains(why), "{name}: {err}");
            assert!(!err.contains('\n'), "{name}: one line: {err}");
        }
        check_name("my_workload", &workloads()).unwrap();
    }

    #[test]
    fn the_templates_form_a_valid_catalogue_entry() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.py"), SCRIPT_TEMPLATE).unwrap();
        let text = ENTRY_TEMPLATE.replace("__NAME__", "mine");
        let cat = Catalogue::parse(&text, dir.path()).unwrap();
        assert_eq!(cat.names(), ["mine"]);
        assert_eq!(cat.scenarios[0].variants.len(), 4);
        for variant in &cat.scenarios[0].variants {
            assert!(
                SCRIPT_TEMPLATE.contains(&format!("\"{variant}\": harness.")),
                "{variant} is in the script's VARIANTS"
            );
        }
    }
}
