//! `asynclab pythons add VERSION` and `asynclab pythons list`: interpreters the host cannot run
//! as they are (3.14, 3.15 from Debian's unstable suite), provisioned as Debian roots in the
//! environments folder (src/python/roots.rs), cached until `--rebuild`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::python::roots;

/// `asynclab pythons`.
#[derive(Debug, Args)]
pub struct PythonsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// The `pythons` actions.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Make the Debian root for VERSION (3.14 or 3.15) with debootstrap, so that
    /// `--python VERSION` runs workers inside it; reused unless --rebuild.
    Add {
        /// The minor version, e.g. 3.14.
        version: String,
        /// Make the root again even when it exists.
        #[arg(long)]
        rebuild: bool,
        /// Folder for the environments (the roots go in its `roots/`).
        #[arg(long, default_value = ".venvs")]
        venvs: PathBuf,
    },
    /// List the roots made so far and the interpreter in each.
    List {
        /// Folder for the environments.
        #[arg(long, default_value = ".venvs")]
        venvs: PathBuf,
    },
}

/// Runs the action; 0 on success.
pub fn execute(args: &PythonsArgs) -> anyhow::Result<i32> {
    match &args.action {
        Action::Add {
            version,
            rebuild,
            venvs,
        } => {
            let minor = version.trim().trim_start_matches("python");
            let folder = roots::add(minor, venvs, *rebuild)?;
            let interp = crate::python::find_interpreter_in(minor, venvs)?;
            println!(
                "Python {} ready in the Debian {} root {} (use --python {minor})",
                interp.version,
                roots::SUITE,
                folder.display()
            );
            Ok(0)
        }
        Action::List { venvs } => {
            let made = roots::list(venvs);
            if made.is_empty() {
                println!(
                    "no Debian roots in {}; make one with `asynclab pythons add 3.14`",
                    venvs.join("roots").display()
                );
            }
            for (minor, folder) in made {
                match crate::python::find_interpreter_in(&minor, venvs) {
                    Ok(i) => println!("python{minor}  {}  {}", i.version, folder.display()),
                    Err(e) => println!("python{minor}  broken: {e:#}"),
                }
            }
            Ok(0)
        }
    }
}
