//! `--variants`: a run of only some of each scenario's variants, as if the catalogue listed
//! only those.

use super::Scenario;

impl Scenario {
    /// The scenario with only the variants in `keep`, in its own order; None when it has none
    /// of them. The baseline stays its own when kept, else becomes the first one kept; the
    /// question's comparisons that lose a side are left out.
    pub fn narrowed(&self, keep: &[String]) -> Option<Scenario> {
        let variants: Vec<String> = self
            .variants
            .iter()
            .filter(|v| keep.contains(v))
            .cloned()
            .collect();
        if variants.is_empty() {
            return None;
        }
        // A dropped baseline leaves none named: baseline_variant's default, the first, decides.
        let own = self.baseline_variant().to_string();
        let baseline = variants.contains(&own).then_some(own);
        let contrast = self
            .contrast
            .iter()
            .filter(|c| variants.contains(&c.new) && variants.contains(&c.base))
            .cloned()
            .collect();
        Some(Scenario {
            variants,
            baseline,
            contrast,
            ..self.clone()
        })
    }
}

/// `scenarios` narrowed to the variants in `keep` (all of them when `keep` is empty); the
/// error names a variant none of them has, or a scenario left with none, and what they have.
pub fn narrow(scenarios: &[&Scenario], keep: &[String]) -> Result<Vec<Scenario>, String> {
    if keep.is_empty() {
        return Ok(scenarios.iter().map(|s| (*s).clone()).collect());
    }
    let names = || -> String {
        let n: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
        n.join(", ")
    };
    if let Some(v) = keep
        .iter()
        .find(|v| !scenarios.iter().any(|s| s.variants.contains(v)))
    {
        let mut known: Vec<&str> = scenarios
            .iter()
            .flat_map(|s| s.variants.iter().map(String::as_str))
            .collect();
        known.sort_unstable();
        known.dedup();
        return Err(format!(
            "'{v}' is not a variant of {}; give some of: {}",
            names(),
            known.join(", ")
        ));
    }
    scenarios
        .iter()
        .map(|s| {
            s.narrowed(keep).ok_or_else(|| {
                format!(
                    "scenario '{}' has none of {}: give one of its variants ({}) or leave it out of the scenarios",
                    s.name,
                    keep.join(", "),
                    s.variants.join(", ")
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Contrast;

    fn scenario(name: &str, variants: &[&str], baseline: Option<&str>) -> Scenario {
        let text = format!(
            "name = '{name}'\nscript = 's.py'\ntitle = 't'\nvariants = {variants:?}\n{}",
            baseline.map_or(String::new(), |b| format!("baseline = '{b}'\n"))
        );
        let mut s: Scenario = toml::from_str(&text).unwrap();
        s.contrast = vec![
            Contrast {
                new: "asyncio".into(),
                base: "sync".into(),
                figure: Default::default(),
                row: None,
            },
            Contrast {
                new: "threads".into(),
                base: "sync".into(),
                figure: Default::default(),
                row: None,
            },
        ];
        s
    }

    fn keep(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_kept_baseline_stays_and_contrasts_keep_both_sides_or_go() {
        let s = scenario("io", &["sync", "threads", "asyncio"], None);
        let n = s.narrowed(&keep(&["asyncio", "sync"])).unwrap();
        assert_eq!(n.variants, ["sync", "asyncio"]);
        assert_eq!(n.baseline_variant(), "sync");
        assert_eq!(n.contrast.len(), 1);
        assert_eq!(
            (n.contrast[0].new.as_str(), n.contrast[0].base.as_str()),
            ("asyncio", "sync")
        );
    }

    #[test]
    fn a_dropped_baseline_gives_way_to_the_first_kept() {
        let s = scenario("io", &["sync", "threads", "asyncio"], Some("sync"));
        let n = s.narrowed(&keep(&["asyncio", "threads"])).unwrap();
        assert_eq!(n.variants, ["threads", "asyncio"]);
        assert_eq!(n.baseline_variant(), "threads");
        assert!(n.contrast.is_empty());
    }

    #[test]
    fn unknown_variants_and_emptied_scenarios_are_named() {
        let (a, b) = (
            scenario("cpu", &["sync", "threads"], None),
            scenario("memory", &["threads", "asyncio"], None),
        );
        let both = [&a, &b];
        assert_eq!(narrow(&both, &[]).unwrap().len(), 2);
        let kept = narrow(&both, &keep(&["threads"])).unwrap();
        assert_eq!(kept[1].baseline_variant(), "threads");
        assert_eq!(
            narrow(&both, &keep(&["thread"])).unwrap_err(),
            "'thread' is not a variant of cpu, memory; give some of: asyncio, sync, threads"
        );
        assert_eq!(
            narrow(&both, &keep(&["sync"])).unwrap_err(),
            "scenario 'memory' has none of sync: give one of its variants (threads, asyncio) or leave it out of the scenarios"
        );
    }
}
