//! The PostgreSQL reference client: tokio-postgres point selects on `asynclab.items`, the same
//! op as workloads/db.py.
//!
//! `concurrency` connections, one per task (as the Python variants with `pool_size` =
//! concurrency), each opened, given the prepared statement and warmed with one select before the
//! clock starts. Op `i` fetches id `(i * 7919) % 100000 + 1` (workloads/dbutil.py's `item_id`)
//! and adds its `value` to the checksum, so a test can check every row came back.

use tokio_postgres::{Client, Statement};

use super::{closed_loop, runtime, CeilingRun, ClosedLoop, OpResult, Worker};
use crate::services::postgres::external::{self, redacted_target};
use crate::services::postgres::seed::ITEMS_ROWS;
use crate::services::postgres::{one_line, DATABASE_URL_ENV};

/// The point select every database workload runs (workloads/dbutil.py's `ITEM_SQL_DOLLAR`).
pub const ITEM_SQL: &str = "SELECT id, name, value FROM asynclab.items WHERE id = $1";

/// The stride of the id sequence: a prime, so ids do not repeat within 100,000 ops.
pub const STRIDE: u64 = 7919;

/// The id op `index` fetches: `(index * 7919) % 100000 + 1`, as in every Python variant.
pub fn item_id(index: u64) -> i32 {
    ((index.wrapping_mul(STRIDE)) % ITEMS_ROWS as u64 + 1) as i32
}

/// The `value` the seed stored for `id`: `(id * 7919) % 100000`.
pub fn item_value(id: i32) -> u64 {
    (id as u64 * STRIDE) % ITEMS_ROWS as u64
}

/// Runs `load.ops` point selects on `load.concurrency` connections to `database_url` and
/// measures them.
///
/// Errors (one line, naming the server without its password, and the fix): connecting, preparing
/// the statement (an unseeded database) or the warm-up select. Failed queries inside the timed
/// region are counted in [`CeilingRun::errors`] instead.
pub fn postgres(database_url: &str, load: ClosedLoop) -> anyhow::Result<CeilingRun> {
    requests(database_url, load, 1)
}

/// [`postgres`] with each op a request of `per_request` point selects run one after another on
/// the worker's connection (workloads/db.py's `queries_per_request`): op `i` fetches the ids
/// of query indexes `i * per_request ..` onwards, and its latency runs from the first send to
/// the last row.
pub fn requests(
    database_url: &str,
    load: ClosedLoop,
    per_request: u64,
) -> anyhow::Result<CeilingRun> {
    anyhow::ensure!(
        per_request >= 1,
        "reference client: queries_per_request must be at least 1"
    );
    let (rt, threads) = runtime(load)?;
    let target = redacted_target(database_url);
    rt.block_on(async {
        let mut workers = Vec::with_capacity(load.concurrency);
        for _ in 0..load.concurrency {
            workers.push(PgWorker::open(database_url, &target, per_request).await?);
        }
        closed_loop(workers, load.ops, threads).await
    })
}

/// A timed-region task: its own connection and the statement prepared on it.
struct PgWorker {
    client: Client,
    statement: Statement,
    per_request: u64,
}

impl PgWorker {
    /// Connects (the service's bounded connect, its connection driven on this runtime),
    /// prepares [`ITEM_SQL`] and runs it once.
    async fn open(url: &str, target: &str, per_request: u64) -> anyhow::Result<PgWorker> {
        let client = external::connect(url)
            .await
            .map_err(|e| anyhow::anyhow!("reference client: {e:#}"))?;
        let statement = client.prepare(ITEM_SQL).await.map_err(|e| {
            anyhow::anyhow!(
                "reference client: cannot prepare the point select on {target}: {}; is \
                 asynclab.items seeded? Use a server the lab provided ({DATABASE_URL_ENV} or \
                 --pg), which it seeds",
                one_line(&e)
            )
        })?;
        client.query_one(&statement, &[&1i32]).await.map_err(|e| {
            anyhow::anyhow!(
                "reference client: the warm-up select on {target} failed: {}; is asynclab.items \
                 seeded with ids 1..={ITEMS_ROWS}?",
                one_line(&e)
            )
        })?;
        Ok(PgWorker {
            client,
            statement,
            per_request,
        })
    }
}

impl Worker for PgWorker {
    async fn op(&mut self, index: u64) -> OpResult {
        let mut checksum = 0;
        for j in 0..self.per_request {
            let id = item_id(index * self.per_request + j);
            let outcome = self
                .client
                .query_one(&self.statement, &[&id])
                .await
                .and_then(|row| row.try_get::<_, i32>(2));
            match outcome {
                Ok(value) => checksum += value.max(0) as u64,
                Err(e) => {
                    return OpResult {
                        checksum,
                        outcome: Err(format!("id {id}: {}", one_line(&e))),
                    }
                }
            }
        }
        OpResult {
            checksum,
            outcome: Ok(()),
        }
    }
}
