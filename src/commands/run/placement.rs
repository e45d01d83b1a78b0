//! Where the lab's processes run (part of the plan): the services and the driver on one set of
//! CPUs, the workers of scenarios that talk to a service on another, the workers of scenarios
//! that do not (cpu, memory) on every CPU, so that CPU-bound variants keep the machine's cores.
//!
//! The default, `shared`, is the policy whose ratios to the baseline moved least between
//! back-to-back runs (docs/defaults.md, "Placement", has the runs). What it costs:
//! a scenario with a service measures one core that the service and the worker share.

pub use crate::results::PlacementPolicy as Policy;
use crate::results::PlacementRecord;

/// The CPUs each kind of process gets, decided once before anything starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The policy asked for.
    pub policy: Policy,
    /// The policy in force (`unpinned` when there is nothing to split).
    pub effective: Policy,
    /// CPUs the driver and the services it starts are pinned to; empty: not pinned.
    pub service_cpus: Vec<usize>,
    /// CPUs of the workers of scenarios that use a service; empty: not pinned.
    pub service_worker_cpus: Vec<usize>,
    /// CPUs of the workers of scenarios that use no service; empty: not pinned.
    pub other_worker_cpus: Vec<usize>,
    /// CPUs of a service under test (its load generator runs beside the services); empty:
    /// not pinned.
    pub server_under_test_cpus: Vec<usize>,
}

impl Placement {
    /// The placement for `policy` on the CPUs this process may use (`allowed`, ascending);
    /// `workers` (`--cpus`), when given, pins every worker there whatever the policy.
    pub fn decide(policy: Policy, allowed: &[usize], workers: &[usize]) -> Placement {
        let effective = if allowed.len() < 2 && policy == Policy::Split {
            Policy::Unpinned
        } else {
            policy
        };
        let (service_cpus, service_worker_cpus, other_worker_cpus) = match effective {
            Policy::Unpinned => (vec![], vec![], vec![]),
            // The driver is pinned, and workers inherit its mask: those that should have every
            // CPU get them explicitly.
            Policy::Split => (
                allowed[..1].to_vec(),
                allowed[1..].to_vec(),
                allowed.to_vec(),
            ),
            Policy::Shared => (
                allowed[..1].to_vec(),
                allowed[..1].to_vec(),
                allowed.to_vec(),
            ),
        };
        let pick = |cpus: Vec<usize>| {
            if workers.is_empty() {
                cpus
            } else {
                workers.to_vec()
            }
        };
        // A service under test gets the CPUs the lab's own services do not use (all of them on
        // a one-CPU machine), so the load generator never takes its CPU time.
        let server_under_test_cpus = match (effective, allowed.len()) {
            (Policy::Unpinned, _) => vec![],
            (_, 0 | 1) => allowed.to_vec(),
            _ => allowed[1..].to_vec(),
        };
        Placement {
            policy,
            effective,
            server_under_test_cpus,
            service_cpus,
            service_worker_cpus: pick(service_worker_cpus),
            other_worker_cpus: pick(other_worker_cpus),
        }
    }

    /// The CPUs a worker of a scenario is pinned to (empty: not pinned).
    pub fn worker_cpus(&self, uses_services: bool) -> &[usize] {
        if uses_services {
            &self.service_worker_cpus
        } else {
            &self.other_worker_cpus
        }
    }

    /// What results.json records; `unpinned_services` names services the lab cannot place
    /// (PostgreSQL in a container or at DATABASE_URL).
    pub fn record(&self, unpinned_services: Option<String>) -> PlacementRecord {
        PlacementRecord {
            policy: self.policy,
            effective: self.effective,
            service_cpus: self.service_cpus.clone(),
            service_worker_cpus: self.service_worker_cpus.clone(),
            other_worker_cpus: self.other_worker_cpus.clone(),
            not_placed: unpinned_services,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_gives_the_services_one_cpu_and_their_workers_the_rest() {
        let p = Placement::decide(Policy::Split, &[0, 1], &[]);
        assert_eq!(p.service_cpus, vec![0]);
        assert_eq!(p.worker_cpus(true), &[1]);
        // CPU-bound scenarios keep both cores.
        assert_eq!(p.worker_cpus(false), &[0, 1]);
        let p = Placement::decide(Policy::Split, &[2, 3, 5], &[]);
        assert_eq!(
            (p.service_cpus, p.service_worker_cpus),
            (vec![2], vec![3, 5])
        );
    }

    #[test]
    fn shared_puts_services_and_their_workers_on_one_cpu() {
        let p = Placement::decide(Policy::Shared, &[0, 1], &[]);
        assert_eq!(p.service_cpus, vec![0]);
        assert_eq!(p.worker_cpus(true), &[0]);
        assert_eq!(p.worker_cpus(false), &[0, 1]);
    }

    #[test]
    fn one_cpu_leaves_nothing_to_split_and_cpus_overrides_the_workers() {
        let p = Placement::decide(Policy::Split, &[0], &[]);
        assert_eq!(p.effective, Policy::Unpinned);
        assert!(p.service_cpus.is_empty() && p.worker_cpus(true).is_empty());
        let p = Placement::decide(Policy::Split, &[0, 1], &[0]);
        assert_eq!(p.service_cpus, vec![0]);
        assert_eq!(
            (p.worker_cpus(true), p.worker_cpus(false)),
            (&[0][..], &[0][..])
        );
        let p = Placement::decide(Policy::Unpinned, &[0, 1], &[]);
        assert!(p.service_cpus.is_empty() && p.worker_cpus(false).is_empty());
    }
}
