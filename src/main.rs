//! The `asynclab` binary: parse, run, print the error chain on one line, exit.

use clap::Parser;

fn main() {
    let opts = asynclab::Opts::parse();
    match asynclab::run(opts) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("Error: {e:#}");
            let code = if asynclab::interrupt::interrupted() {
                130
            } else {
                2
            };
            std::process::exit(code);
        }
    }
}
