//! The HTTP reference client: reqwest GETs of one URL (the mock server's `/delay/{ms}?bytes=N`),
//! the same op as workloads/io_http.py.
//!
//! One [`reqwest::Client`] whose pool keeps `concurrency` idle HTTP/1.1 keep-alive connections
//! per host (never timed out), no proxy (environment proxies would put another hop on
//! loopback), `TCP_NODELAY` on. Warm-up sends `concurrency` requests at once, so each opens its
//! own connection before the clock starts. An op is one GET, timed from send until the body has
//! been read to its end; a status other than 2xx fails it, its body still counted in the checksum.

use std::time::Duration;

use reqwest::{Client, Url};
use tokio::task::JoinSet;

use super::{closed_loop, root_cause, runtime, CeilingRun, ClosedLoop, OpResult, Worker};

/// Longest one request may take, like io_http.py's default `timeout_s`.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest a TCP connect may take (loopback answers at once; a black hole should not hang).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs `load.ops` GETs of `url` from `load.concurrency` concurrent tasks and measures them.
///
/// Errors (one line, naming the URL and the fix): a URL that is not `http://`, and a warm-up
/// request that gets no HTTP response (nothing listening, connection reset, timeout). Failed ops
/// inside the timed region are counted in [`CeilingRun::errors`] instead.
pub fn http(url: &str, load: ClosedLoop) -> anyhow::Result<CeilingRun> {
    let parsed = Url::parse(url).map_err(|e| {
        anyhow::anyhow!(
            "reference client: invalid URL '{url}': {e}; expected e.g. \
             http://127.0.0.1:PORT/delay/10?bytes=1024"
        )
    })?;
    if parsed.scheme() != "http" {
        anyhow::bail!(
            "reference client: {url}: only http:// is supported (built without TLS); \
             use the mock server's http:// URL"
        );
    }
    let (rt, threads) = runtime(load)?;
    let client = Client::builder()
        .pool_max_idle_per_host(load.concurrency)
        .pool_idle_timeout(None)
        .no_proxy()
        .tcp_nodelay(true)
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
        .map_err(|e| anyhow::anyhow!("reference client: cannot build the HTTP client: {e}"))?;
    rt.block_on(async {
        warm_up(&client, &parsed, load.concurrency).await?;
        let workers = (0..load.concurrency)
            .map(|_| HttpWorker {
                client: client.clone(),
                url: parsed.clone(),
            })
            .collect();
        closed_loop(workers, load.ops, threads).await
    })
}

/// One request per connection slot, all at once, so the pool holds `n` open connections. Any
/// HTTP response will do (the timed ops check the status); no response is an error.
async fn warm_up(client: &Client, url: &Url, n: usize) -> anyhow::Result<()> {
    let mut requests = JoinSet::new();
    for _ in 0..n {
        let (client, url) = (client.clone(), url.clone());
        requests.spawn(async move {
            let mut resp = client.get(url).send().await?;
            while resp.chunk().await?.is_some() {}
            Ok::<(), reqwest::Error>(())
        });
    }
    while let Some(joined) = requests.join_next().await {
        let result =
            joined.map_err(|e| anyhow::anyhow!("reference client: a warm-up task failed: {e}"))?;
        if let Err(e) = result {
            let what = if e.is_connect() {
                "cannot connect to"
            } else if e.is_timeout() {
                "no answer in time from"
            } else {
                "warm-up request failed for"
            };
            anyhow::bail!(
                "reference client: {what} {url}: {}; is the mock server running \
                 (asynclab mock-server) and the URL right?",
                root_cause(&e)
            );
        }
    }
    Ok(())
}

/// A timed-region task: the shared client (its pool hands each task a connection) and the URL.
struct HttpWorker {
    client: Client,
    url: Url,
}

impl Worker for HttpWorker {
    async fn op(&mut self, _index: u64) -> OpResult {
        let mut resp = match self.client.get(self.url.clone()).send().await {
            Ok(resp) => resp,
            Err(e) => {
                return OpResult {
                    checksum: 0,
                    outcome: Err(root_cause(&e)),
                }
            }
        };
        let status = resp.status();
        let mut bytes = 0u64;
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => bytes += chunk.len() as u64,
                Ok(None) => break,
                Err(e) => {
                    return OpResult {
                        checksum: bytes,
                        outcome: Err(format!("reading the body: {}", root_cause(&e))),
                    }
                }
            }
        }
        OpResult {
            checksum: bytes,
            outcome: if status.is_success() {
                Ok(())
            } else {
                Err(format!("HTTP {}", status.as_u16()))
            },
        }
    }
}
