//! `asynclab load URL`: the lab's load generator alone against any HTTP/1.1 address, as oha
//! or wrk2 would be run, one JSON line of what it saw on stdout; `make bench` runs it beside
//! them (src/commands/self_check/generators.rs).

use std::net::ToSocketAddrs;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use crate::loadgen::{self, Endpoint, Load};
use crate::stats::percentile::percentile;

/// `asynclab load`.
#[derive(Debug, Args, Clone)]
pub struct LoadArgs {
    /// Where to send `GET`s: `http://HOST:PORT/PATH` (plain HTTP/1.1).
    pub url: String,
    /// Requests per second, open loop (latency from each request's intended start); 0: closed
    /// loop, each connection back to back.
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
    /// Keep-alive connections.
    #[arg(long, default_value_t = 10)]
    pub connections: usize,
    /// Seconds of load.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Seconds a request may take before it counts as failed.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
}

/// The address and path of `http://HOST:PORT/PATH`.
fn split_url(url: &str) -> anyhow::Result<(std::net::SocketAddr, String)> {
    let bad = || anyhow::anyhow!("{url:?} is not an http://HOST:PORT/PATH address");
    let rest = url.strip_prefix("http://").ok_or_else(bad)?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let host = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:80")
    };
    let addr = host
        .to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("{url}: {e}"))?
        .next()
        .ok_or_else(bad)?;
    Ok((addr, path))
}

/// Drives the address and prints what the generator saw.
pub fn execute(args: &LoadArgs) -> anyhow::Result<i32> {
    let (addr, path) = split_url(&args.url)?;
    for (name, v, least) in [
        ("--duration", args.duration, 0.001),
        ("--timeout", args.timeout, 0.001),
    ] {
        if !(v.is_finite() && v >= least) {
            anyhow::bail!("{name} {v}: give a number of seconds above 0");
        }
    }
    if !(args.rate.is_finite() && args.rate >= 0.0) {
        anyhow::bail!(
            "--rate {}: give requests per second, or 0 for a closed loop",
            args.rate
        );
    }
    if args.connections == 0 {
        anyhow::bail!("--connections 0: give 1 or more");
    }
    let load = Load {
        addr,
        endpoint: Endpoint::Status { path },
        connections: args.connections,
        rate_per_s: args.rate,
        duration: Duration::from_secs_f64(args.duration),
        timeout: Duration::from_secs_f64(args.timeout),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let out = rt.block_on(loadgen::run(&load));
    let pct = |mut v: Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| percentile(&v, p))
    };
    let corrected: Vec<f64> = out.samples.iter().map(|s| s.corrected_ms()).collect();
    let uncorrected: Vec<f64> = out.samples.iter().map(|s| s.service_ms()).collect();
    println!(
        "{}",
        json!({
            "answered": out.samples.len(),
            "errors": out.errors,
            "abandoned": out.abandoned,
            "first_error": out.error_samples.first(),
            "sent_per_s": out.achieved_rate_per_s(&load),
            "connects": out.connects,
            "elapsed_s": out.elapsed.as_secs_f64(),
            "latency_kind": if load.rate_per_s > 0.0 { "corrected (from the intended start)" } else { "closed loop (from the send)" },
            "p50_ms": pct(corrected.clone(), 50.0),
            "p99_ms": pct(corrected, 99.0),
            "uncorrected_p99_ms": pct(uncorrected, 99.0),
        })
    );
    Ok(if out.errors + out.abandoned > 0 { 1 } else { 0 })
}
