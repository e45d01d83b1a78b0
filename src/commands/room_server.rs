//! `asynclab room-server` (hidden): the lab's own WebSocket chat room
//! ([`crate::services::room`]), the fan-out scenario's reference server, until SIGTERM or
//! Ctrl-C.

use clap::Args;

/// `asynclab room-server`.
#[derive(Debug, Args, Clone)]
pub struct RoomServerArgs {
    /// Port (0 picks a free one).
    #[arg(long)]
    pub port: u16,
    /// Address to bind; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
}

/// Serves until SIGTERM or SIGINT; the deliberate delay comes from
/// `ASYNCLAB_BROADCAST_DELAY_MS`, as for the Python rooms.
pub fn execute(args: &RoomServerArgs) -> anyhow::Result<i32> {
    let delay_ms: f64 = std::env::var("ASYNCLAB_BROADCAST_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .unwrap_or(0.0);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let addr = std::net::SocketAddr::new(args.host, args.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("room-server: cannot bind {addr}: {e}"))?;
        println!("asynclab room-server: ws://{}/ws", listener.local_addr()?);
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let stop = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        };
        crate::services::room::serve(
            listener,
            std::time::Duration::from_secs_f64(delay_ms / 1000.0),
            stop,
        )
        .await;
        Ok(0)
    })
}
