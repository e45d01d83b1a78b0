//! A run's time budget as people write it (`--budget 10m`, a study file's `budget = "1h30m"`).

use std::str::FromStr;
use std::time::Duration;

/// A run's time budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget(pub Duration);

impl FromStr for Budget {
    type Err = String;

    /// `90s`, `10m`, `1h`, `1h30m` or a bare number of seconds.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{s:?} is not a duration; give e.g. 10m, 90s or 1h30m");
        let t = s.trim();
        if let Ok(secs) = t.parse::<f64>() {
            return (secs.is_finite() && secs > 0.0)
                .then(|| Budget(Duration::from_secs_f64(secs)))
                .ok_or_else(bad);
        }
        let (mut total, mut number) = (0.0, String::new());
        for ch in t.chars() {
            match ch {
                '0'..='9' | '.' => number.push(ch),
                'h' | 'm' | 's' if !number.is_empty() => {
                    let v: f64 = number.parse().map_err(|_| bad())?;
                    total += v * match ch {
                        'h' => 3600.0,
                        'm' => 60.0,
                        _ => 1.0,
                    };
                    number.clear();
                }
                _ => return Err(bad()),
            }
        }
        if !(number.is_empty() && total.is_finite() && total > 0.0) {
            return Err(bad());
        }
        Ok(Budget(Duration::from_secs_f64(total)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_the_forms_people_write() {
        let secs = |s: &str| Budget::from_str(s).map(|b| b.0.as_secs_f64());
        assert_eq!(secs("90s"), Ok(90.0));
        assert_eq!(secs("10m"), Ok(600.0));
        assert_eq!(secs("1h30m"), Ok(5400.0));
        assert_eq!(secs("2.5m"), Ok(150.0));
        assert_eq!(secs("45"), Ok(45.0));
        for bad in ["", "0", "-5", "10x", "m", "10m5", "ten minutes"] {
            let e = Budget::from_str(bad).unwrap_err();
            assert!(e.contains("10m, 90s"), "{bad}: {e}");
        }
    }
}
