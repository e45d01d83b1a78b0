//! The `asynclab` binary: parse, run, print the error chain on one line, exit.

fn main() {
    let opts = asynclab::Opts::parse_quoting_catalogue();
    match asynclab::run(opts) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("Error: {e:#}");
            // Stopped by a signal: the shell's 128 + N (130 for Ctrl-C, 143 for SIGTERM).
            let code = asynclab::interrupt::received().map_or(2, |s| s.exit_code());
            std::process::exit(code);
        }
    }
}
