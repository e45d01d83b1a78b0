//! A server run in the background: bound here, served on its own named runtime thread, shut
//! down and joined when its guard drops. The mock HTTP server and the echo server are both one.
//!
//! Like mini-redis, a server is an `async fn` taking an already-bound [`TcpListener`] and a
//! shutdown future; [`BackgroundServer::start`] binds (port 0 for any free port), hands both to
//! it and returns once the port is ready. The accept loop both servers share is here too
//! ([`accept_until`]), with its backoff on resource errors.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// Worker threads of the runtime a background server runs on.
pub const WORKER_THREADS: usize = 2;

/// Listen backlog: large, so a thousand clients connecting at once are not dropped into SYN
/// retries (a 1 s stall that would show up as client latency). The kernel caps it at somaxconn.
const LISTEN_BACKLOG: u32 = 4096;

/// First backoff after a failed `accept`.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(1);

/// The shutdown future a [`BackgroundServer`] hands its server: resolves when the guard drops.
#[derive(Debug)]
pub struct Shutdown(oneshot::Receiver<()>);

impl Future for Shutdown {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // A sent `()` and a dropped sender both mean "stop".
        Pin::new(&mut self.0).poll(cx).map(|_| ())
    }
}

/// A server running on its own multi-thread runtime ([`WORKER_THREADS`] workers) in a thread of
/// its own; dropping it fires the server's shutdown future and joins the thread (mini-redis
/// style guard). A server that failed or panicked is reported on stderr then.
#[derive(Debug)]
pub struct BackgroundServer {
    /// What the server is, for messages ("mock HTTP server").
    label: &'static str,
    /// The address actually bound (the real port when 0 was asked for).
    addr: SocketAddr,
    /// Fires the shutdown future; `None` once used.
    shutdown: Option<oneshot::Sender<()>>,
    /// The thread running the runtime; `None` once joined.
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl BackgroundServer {
    /// Binds `bind` and runs `serve(listener, shutdown)` on a runtime thread called `name`
    /// (its runtime's workers are called that too); `label` names the server in messages.
    ///
    /// Binding happens before this returns, so the port is ready for clients and a port in use is
    /// reported here, as one line naming the address and the fix ([`bind_error`]).
    pub fn start<S, F>(
        name: &'static str,
        label: &'static str,
        bind: SocketAddr,
        serve: S,
    ) -> anyhow::Result<BackgroundServer>
    where
        S: FnOnce(TcpListener, Shutdown) -> F + Send + 'static,
        F: Future<Output = io::Result<()>>,
    {
        let runtime = service_runtime(name)?;
        let listener = {
            let _entered = runtime.enter();
            bind_listener(bind)?
        };
        let addr = listener.local_addr()?;
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || runtime.block_on(serve(listener, Shutdown(shutdown_rx))))
            .map_err(|e| anyhow::anyhow!("cannot start the {label} thread: {e}"))?;
        Ok(BackgroundServer {
            label,
            addr,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for BackgroundServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            match thread.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => eprintln!("{} on {} failed: {e}", self.label, self.addr),
                Err(_) => eprintln!("{} on {} panicked", self.label, self.addr),
            }
        }
    }
}

/// Accepts connections on `listener` until `shutdown` completes, spawning `connection(stream)`
/// into `conns` for each and reaping finished ones as it goes; then closes the listener (new
/// connections are refused) and returns, leaving the open connections in `conns` to the caller.
///
/// Errors from `accept` go through [`accept_error_backoff`] (`what` names the server there); an
/// error is returned only once it gives up.
pub(crate) async fn accept_until<C, F>(
    what: &str,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    conns: &mut JoinSet<()>,
    mut connection: C,
) -> io::Result<()>
where
    C: FnMut(TcpStream) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let mut backoff = ACCEPT_BACKOFF;
    let mut result = Ok(());
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    backoff = ACCEPT_BACKOFF;
                    conns.spawn(connection(stream));
                }
                Err(err) => {
                    if let Err(err) = accept_error_backoff(what, err, &mut backoff).await {
                        result = Err(err);
                        break;
                    }
                }
            },
            // Reap finished connection tasks so the set does not grow with every connection.
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    result
}

/// Handles an `accept` error: retries quietly after a reset/abort, backs off (and says so on
/// stderr) on resource errors such as `EMFILE`, and gives up once the backoff passes ~1 s.
async fn accept_error_backoff(
    what: &str,
    err: io::Error,
    backoff: &mut Duration,
) -> io::Result<()> {
    match err.kind() {
        io::ErrorKind::ConnectionAborted
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::Interrupted => Ok(()),
        _ if *backoff > Duration::from_secs(1) => Err(err),
        _ => {
            eprintln!(
                "{what}: accept failed: {err}; retrying in {} ms \
                 (if this says 'Too many open files', raise `ulimit -n`)",
                backoff.as_millis()
            );
            tokio::time::sleep(*backoff).await;
            *backoff *= 2;
            Ok(())
        }
    }
}

/// Turns a bind failure into one line naming the address and the fix.
pub fn bind_error(addr: SocketAddr, err: &io::Error) -> anyhow::Error {
    let (ip, port) = (addr.ip(), addr.port());
    match err.kind() {
        io::ErrorKind::AddrInUse => anyhow::anyhow!(
            "port {port} on {ip} is in use: choose another with --port, or 0 for any free port"
        ),
        io::ErrorKind::AddrNotAvailable => anyhow::anyhow!(
            "cannot listen on {addr}: {ip} is not an address of this machine; \
             use --host 127.0.0.1"
        ),
        io::ErrorKind::PermissionDenied => anyhow::anyhow!(
            "cannot listen on {addr}: permission denied (ports below 1024 need privileges); \
             choose another with --port, or 0 for any free port"
        ),
        _ => anyhow::anyhow!("cannot listen on {addr}: {err}"),
    }
}

/// Binds a listener with `SO_REUSEADDR` and a large backlog. Must run inside a tokio runtime
/// (enter one with `Runtime::enter`); errors are one line from [`bind_error`].
pub(crate) fn bind_listener(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    let socket = match addr.ip() {
        IpAddr::V4(_) => TcpSocket::new_v4(),
        IpAddr::V6(_) => TcpSocket::new_v6(),
    }
    .map_err(|e| anyhow::anyhow!("cannot create a socket for {addr}: {e}"))?;
    socket
        .set_reuseaddr(true)
        .map_err(|e| anyhow::anyhow!("cannot set SO_REUSEADDR for {addr}: {e}"))?;
    socket.bind(addr).map_err(|e| bind_error(addr, &e))?;
    socket
        .listen(LISTEN_BACKLOG)
        .map_err(|e| bind_error(addr, &e))
}

/// The multi-thread runtime a service runs on, its threads named after the service.
pub(crate) fn service_runtime(name: &str) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the {name} runtime: {e}"))
}
