//! `asynclab mock-server`: the mock HTTP server (and, with `--echo-port`, the TCP echo server
//! beside it), until Ctrl-C; what the server role of `run --hosts containers` runs.

use clap::Args;

use crate::services;

/// `asynclab mock-server`.
#[derive(Debug, Args, Clone)]
pub struct MockServerArgs {
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to bind; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Also serve the TCP echo server on this port of the same address.
    #[arg(long)]
    pub echo_port: Option<u16>,
}

/// Serves until interrupted; a port in use is an error naming the address.
pub fn execute(args: &MockServerArgs) -> anyhow::Result<i32> {
    let hold = crate::services::wake_hold::WakeHold::acquire();
    eprintln!("asynclab: CPU wake-up latency {}", hold.detail);
    let _echo = match args.echo_port {
        Some(port) => {
            let echo =
                services::echo::EchoServer::start(std::net::SocketAddr::new(args.host, port))?;
            println!("echo server listening on {}", echo.addr());
            Some(echo)
        }
        None => None,
    };
    services::mock_http::run_standalone(std::net::SocketAddr::new(args.host, args.port))?;
    Ok(0)
}
