//! Where two runs' environments differ: one warning line per difference (CPU model, cores,
//! kernel, PostgreSQL backend, git commit, interpreter versions and builds, placement, quick),
//! so a comparison across machines or software says so before its numbers are read.

use crate::results::{PythonInfo, Results};

/// "WHAT: BASE x, NEW y (why)" for a field that differs.
fn differs(what: &str, base: &str, new: &str, why: &str) -> String {
    format!("{what}: BASE {base}, NEW {new} ({why})")
}

/// `0,1`, or "not given" for an empty `--cpus` list (the placement may still pin workers).
fn cpus(list: &[usize]) -> String {
    if list.is_empty() {
        return "not given".into();
    }
    list.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// How an interpreter was built: implementation, compiler and configure flags.
fn build(p: &PythonInfo) -> String {
    format!(
        "{} built with {} [{}]",
        p.implementation, p.compiler, p.config_args
    )
}

/// One line per difference between the environments of `base` and `new`; empty when they
/// were measured alike.
pub fn differences(base: &Results, new: &Results) -> Vec<String> {
    let (b, n) = (&base.env, &new.env);
    let mut out = Vec::new();
    let machine = "absolute figures are not comparable; compare ratios";
    if b.cpu_model != n.cpu_model {
        out.push(differs(
            "CPU model differs",
            &format!("'{}'", b.cpu_model),
            &format!("'{}'", n.cpu_model),
            machine,
        ));
    }
    if b.cores != n.cores {
        out.push(differs(
            "core count differs",
            &b.cores.to_string(),
            &n.cores.to_string(),
            "parallel variants scale with cores",
        ));
    }
    if b.kernel != n.kernel {
        out.push(differs(
            "kernel differs",
            &b.kernel,
            &n.kernel,
            "scheduling and I/O paths may differ",
        ));
    }
    if b.postgres != n.postgres {
        let pg = |p: &Option<String>| p.clone().unwrap_or_else(|| "none".into());
        out.push(differs(
            "PostgreSQL backend (env.postgres) differs",
            &pg(&b.postgres),
            &pg(&n.postgres),
            "the database's location changes db figures",
        ));
    }
    if b.git_commit != n.git_commit {
        out.push(differs(
            "git commit differs",
            &b.git_commit,
            &n.git_commit,
            "the lab or the workloads may have changed",
        ));
    }
    let versions = |r: &Results| -> Vec<String> {
        let mut v: Vec<String> = r.env.pythons.iter().map(|p| p.version.clone()).collect();
        v.sort();
        v
    };
    if versions(base) != versions(new) {
        out.push(differs(
            "interpreter versions differ",
            &versions(base).join(", "),
            &versions(new).join(", "),
            "cells of other versions are not matched",
        ));
    }
    for bp in &b.pythons {
        if let Some(np) = n.pythons.iter().find(|p| p.version == bp.version) {
            if build(bp) != build(np) {
                out.push(differs(
                    &format!("interpreter build of Python {} differs", bp.version),
                    &build(bp),
                    &build(np),
                    "builds are compared as builds, not as one version",
                ));
            }
        }
    }
    if base.method.cpus != new.method.cpus {
        out.push(differs(
            "worker pinning (--cpus, method.cpus) differs",
            &cpus(&base.method.cpus),
            &cpus(&new.method.cpus),
            "pinning changes contention between workers and services",
        ));
    }
    let policy = |r: &Results| {
        r.method.placement.as_ref().map_or_else(
            || "unrecorded (before --placement)".to_string(),
            |p| p.effective.to_string(),
        )
    };
    if policy(base) != policy(new) {
        out.push(differs(
            "placement policy (method.placement) differs",
            &policy(base),
            &policy(new),
            "where the services run beside the workers moves every ratio of a service scenario",
        ));
    }
    if base.method.quick != new.method.quick {
        let q = |quick: bool| if quick { "--quick" } else { "full" }.to_string();
        out.push(differs(
            "run size differs",
            &q(base.method.quick),
            &q(new.method.quick),
            "--quick runs fewer rounds and smaller parameters",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_difference_and_none_for_the_same_run() {
        let a = crate::results::quick_fixture();
        assert!(differences(&a, &a).is_empty());
        let mut b = a.clone();
        b.env.cores += 2;
        b.env.kernel.push_str("-other");
        b.env.postgres = Some("container postgres:16".into());
        b.method.cpus = vec![1];
        b.method.quick = !a.method.quick;
        b.env.pythons[0].compiler = "clang 17".into();
        let d = differences(&a, &b);
        assert_eq!(d.len(), 6, "{d:#?}");
        assert!(
            d[0].starts_with("core count differs: BASE 2, NEW 4"),
            "{d:?}"
        );
        assert!(d.iter().any(|l| l.starts_with("PostgreSQL backend")));
        assert!(d
            .iter()
            .any(|l| l
                .contains("worker pinning (--cpus, method.cpus) differs: BASE not given, NEW 1")));
        assert!(d
            .iter()
            .any(|l| l.starts_with("interpreter build of Python")));
        assert!(d.iter().all(|l| !l.contains('\n')));
    }
}
