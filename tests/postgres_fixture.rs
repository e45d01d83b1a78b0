//! Integration tests of the PostgreSQL fixture: a real local cluster, seeding, teardown, errors.
//!
//! Each test starts its own cluster (own temp dir, own free port), so they run in parallel.
//! One test also kills a helper copy of this binary with SIGKILL, to leave a cluster dir behind.
//! Ignored tests named `helper_*` are such child processes, run by the test that names them;
//! run on their own they fail, since what their parent sets up is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::test_name;

use asynclab::services::postgres::orphans::{Owner, DIR_PREFIX, OWNER_FILE};
use asynclab::services::postgres::seed::{AUTHORS_ROWS, BOOKS_PER_AUTHOR, BOOKS_ROWS, ITEMS_ROWS};
use asynclab::services::postgres::{
    seed, server_settings, LocalCluster, PgBackend, Postgres, SeedOutcome,
};

/// Runs `sql` (a single-row query of i64 columns) against `url`.
fn query_i64s(url: &str, sql: &str) -> Vec<i64> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let row = client.query_one(sql, &[]).await.unwrap();
        (0..row.len()).map(|i| row.get::<_, i64>(i)).collect()
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn local_cluster_serves_seeds_and_cleans_up() {
    let started = Instant::now();
    let pg = Postgres::provide(PgBackend::Local).expect("local cluster");
    eprintln!(
        "initdb + start + seed: {:.2} s; {}",
        started.elapsed().as_secs_f64(),
        pg.describe()
    );
    assert_eq!(pg.kind(), "local");
    assert!(
        pg.url().starts_with("postgresql://asynclab@127.0.0.1:") && pg.url().ends_with("/asynclab"),
        "{}",
        pg.url()
    );
    let described = pg.describe();
    assert!(!described.contains('\n'), "{described}");
    assert!(
        described.contains("local") && described.contains("PostgreSQL"),
        "{described}"
    );
    assert_eq!(pg.seed_report().outcome, SeedOutcome::Seeded);

    // It answers.
    assert_eq!(query_i64s(pg.url(), "SELECT 1::bigint"), vec![1]);

    // Seeded counts.
    let counts = query_i64s(
        pg.url(),
        "SELECT (SELECT count(*) FROM asynclab.items),
                (SELECT count(*) FROM asynclab.authors),
                (SELECT count(*) FROM asynclab.books)",
    );
    assert_eq!(counts, vec![ITEMS_ROWS, AUTHORS_ROWS, BOOKS_ROWS]);
    assert_eq!(counts, vec![100_000, 100, 500]);
    let per_author = query_i64s(
        pg.url(),
        "SELECT min(n), max(n), count(*) FROM
           (SELECT count(*) AS n FROM asynclab.books GROUP BY author_id) t",
    );
    assert_eq!(
        per_author,
        vec![BOOKS_PER_AUTHOR, BOOKS_PER_AUTHOR, AUTHORS_ROWS]
    );
    assert_eq!(BOOKS_PER_AUTHOR, 5);

    // Seeding again is a no-op.
    let again = seed(pg.url()).expect("second seed");
    assert_eq!(again.outcome, SeedOutcome::AlreadySeeded);
    assert_eq!(
        (again.items, again.authors, again.books),
        (ITEMS_ROWS, AUTHORS_ROWS, BOOKS_ROWS)
    );

    // Settings for the results' environment block.
    let settings = server_settings(pg.url()).expect("settings");
    let names: Vec<&str> = settings.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "server_version",
            "max_connections",
            "fsync",
            "shared_buffers"
        ]
    );
    assert_eq!(settings[1].1, "250");
    assert_eq!(settings[2].1, "off");

    // The same server through the external path: reachable, already seeded, not owned.
    let ext = Postgres::external_from(pg.url()).expect("external against the local cluster");
    assert_eq!(ext.kind(), "external");
    assert_eq!(ext.seed_report().outcome, SeedOutcome::AlreadySeeded);
    assert!(ext.pid().is_none() && ext.dir().is_none());
    drop(ext);
    assert_eq!(query_i64s(pg.url(), "SELECT 1::bigint"), vec![1]);

    // Drop stops and reaps the server, then removes the directory.
    let pid = pg.pid().expect("pid of the local postmaster");
    let dir = pg.dir().expect("temp dir").to_path_buf();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    assert!(dir.join("data").is_dir());
    let stopping = Instant::now();
    drop(pg);
    eprintln!("stop: {:.2} s", stopping.elapsed().as_secs_f64());
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "postgres {pid} still there"
    );
    assert!(!dir.exists(), "{} still there", dir.display());
}

#[test]
fn broken_seed_is_recreated() {
    let pg = Postgres::provide(PgBackend::Local).expect("local cluster");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(pg.url(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
            .batch_execute("DELETE FROM asynclab.items WHERE id > 99990")
            .await
            .unwrap();
    });
    // Concurrent seeders (parallel runs on one DATABASE_URL): exactly one rebuilds.
    let reports: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3).map(|_| s.spawn(|| seed(pg.url()))).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().expect("reseed"))
            .collect()
    });
    let rebuilt = reports
        .iter()
        .filter(|r| r.outcome == SeedOutcome::Seeded)
        .count();
    assert_eq!(rebuilt, 1, "{reports:?}");
    assert!(reports.iter().all(|r| r.items == ITEMS_ROWS));
    let counts = query_i64s(pg.url(), "SELECT count(*) FROM asynclab.items");
    assert_eq!(counts, vec![ITEMS_ROWS]);
    assert_eq!(seed(pg.url()).unwrap().outcome, SeedOutcome::AlreadySeeded);
}

#[test]
fn external_closed_port_fails_fast_naming_the_address() {
    let port = free_port();
    let url = format!("postgresql://someone:secret@127.0.0.1:{port}/somedb");
    let start = Instant::now();
    let err = Postgres::external_from(&url).expect_err("nothing listens there");
    let elapsed = start.elapsed();
    let msg = format!("{err:#}");
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
    assert!(msg.contains("DATABASE_URL"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
    assert!(!msg.contains("secret"), "password leaked: {msg}");
}

#[test]
fn external_invalid_url_is_one_line() {
    let err = Postgres::external_from("postgresql://a:b@host:notaport/db").expect_err("bad port");
    let msg = format!("{err:#}");
    assert!(msg.contains("invalid PostgreSQL URL"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

/// Child half of [`external_without_database_url_names_it`]: runs with `DATABASE_URL` removed
/// from its environment (tests must not mutate their own).
#[test]
#[ignore = "helper: run by external_without_database_url_names_it without DATABASE_URL"]
fn helper_external_without_database_url() {
    assert!(
        std::env::var_os("DATABASE_URL").is_none(),
        "run this through external_without_database_url_names_it, which removes DATABASE_URL"
    );
    let err = Postgres::provide(PgBackend::External).expect_err("DATABASE_URL unset");
    let msg = format!("{err:#}");
    assert!(
        msg.contains("DATABASE_URL") && msg.contains("--pg local"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn external_without_database_url_names_it() {
    // In a child process without DATABASE_URL, so it runs whether or not this one has it.
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            test_name(module_path!(), "helper_external_without_database_url").as_str(),
            "--ignored",
            "--test-threads=1",
        ])
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Env var the parent sets for [`helper_owns_a_cluster_until_killed`] (which fails without it).
const HELPER_ENV: &str = "ASYNCLAB_TEST_CLUSTER_HELPER";

/// Not a test: the child [`orphaned_cluster_dirs_are_removed_by_the_next_start`] kills. Starts a
/// cluster, prints its directory and waits to be killed with SIGKILL (so no Drop guard runs).
#[test]
#[ignore = "helper: run by orphaned_cluster_dirs_are_removed_by_the_next_start, which kills it"]
fn helper_owns_a_cluster_until_killed() {
    assert!(
        std::env::var_os(HELPER_ENV).is_some(),
        "run this through orphaned_cluster_dirs_are_removed_by_the_next_start, which sets {HELPER_ENV}"
    );
    let cluster = LocalCluster::start().expect("helper's cluster");
    println!("cluster-dir {}", cluster.dir().display());
    std::io::Write::flush(&mut std::io::stdout()).unwrap();
    // Never outlive the test that spawned us by long, even if it forgets to kill us.
    std::thread::sleep(Duration::from_secs(120));
}

/// Starts [`helper_owns_a_cluster_until_killed`] in a child process and returns it with the
/// directory of its cluster.
fn spawn_cluster_owner() -> (std::process::Child, PathBuf) {
    use std::io::BufRead;
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            test_name(module_path!(), "helper_owns_a_cluster_until_killed").as_str(),
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_ENV, "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    for line in stdout.lines() {
        // libtest may have written "test NAME ... " before it on the same line.
        let line = line.unwrap();
        if let Some((_, dir)) = line.split_once("cluster-dir ") {
            return (child, PathBuf::from(dir));
        }
    }
    panic!(
        "the helper exited without starting a cluster: {:?}",
        child.wait()
    );
}

#[test]
fn orphaned_cluster_dirs_are_removed_by_the_next_start() {
    // A cluster whose owner (this test process) stays alive throughout.
    let live = LocalCluster::start().expect("live cluster");
    let live_pid = live.pid().unwrap() as i32;

    // A driver killed with SIGKILL: its postgres dies with it, its directory stays.
    let (mut owner, orphan) = spawn_cluster_owner();
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(owner.id() as i32, libc::SIGKILL);
    }
    owner.wait().unwrap();
    assert!(
        orphan.join("data").is_dir(),
        "{} left behind",
        orphan.display()
    );
    let dead_owner = Owner::read_from(&orphan).expect("the orphan names its owner");
    assert_eq!(dead_owner.pid, owner.id() as i32);
    assert!(!dead_owner.is_alive());

    // An orphan with a "postgres" still running from it (a stand-in: it only has to be named in
    // postmaster.pid and run in data/), and one whose owner's pid is alive but reused.
    let parent = orphan.parent().unwrap();
    let running = tempfile::Builder::new()
        .prefix(DIR_PREFIX)
        .tempdir_in(parent)
        .unwrap()
        .keep();
    std::fs::create_dir(running.join("data")).unwrap();
    let mut stand_in = Command::new("sleep");
    stand_in.arg("120").current_dir(running.join("data"));
    // A job a non-interactive shell put in the background ignores SIGINT, and its children
    // inherit that; a real postmaster handles SIGINT, so the stand-in must not ignore it.
    // SAFETY: signal(2) only, between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut stand_in, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut stand_in = stand_in.spawn().unwrap();
    std::fs::write(
        running.join("data/postmaster.pid"),
        format!("{}\n{}\n", stand_in.id(), running.join("data").display()),
    )
    .unwrap();
    dead_owner.write_to(&running).unwrap();
    let reused = tempfile::Builder::new()
        .prefix(DIR_PREFIX)
        .tempdir_in(parent)
        .unwrap()
        .keep();
    let me = Owner::current().unwrap();
    Owner {
        start_time: me.start_time + 1,
        ..me
    }
    .write_to(&reused)
    .unwrap();

    // The next start removes all three and leaves the live cluster alone.
    let next = LocalCluster::start().expect("next cluster");
    let status = stand_in.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGINT),
        "the stand-in postgres is stopped with SIGINT (fast shutdown)"
    );
    for dir in [&orphan, &running, &reused] {
        assert!(!dir.exists(), "{} still there", dir.display());
    }
    assert!(live.dir().join("data").is_dir());
    assert!(Path::new(&format!("/proc/{live_pid}")).exists());
    assert_eq!(query_i64s(&url_of(&live), "SELECT 1::bigint"), vec![1]);
    assert!(next.dir().join(OWNER_FILE).is_file());
    assert_eq!(
        Owner::read_from(next.dir()),
        Some(Owner::current().unwrap())
    );
}

/// A cluster's URL to the `postgres` database (`asynclab` exists only once seeded).
fn url_of(cluster: &LocalCluster) -> String {
    format!(
        "postgresql://asynclab@127.0.0.1:{}/postgres",
        cluster.port()
    )
}
