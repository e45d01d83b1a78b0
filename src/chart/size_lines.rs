//! What the charts against a size that grows tenfold (idle connections held, clients in a room)
//! share: one chart per scenario, interpreter and setting without the size; one line with dots
//! per server; the file's name.

use super::frame::Plot;
use super::slug;
use super::svg::color;

/// `setting` without its `param=` value: the rows one chart draws share it.
pub fn setting_without(setting: &str, param: &str) -> String {
    let prefix = format!("{param}=");
    setting
        .split(' ')
        .filter(|kv| !kv.is_empty() && !kv.starts_with(&prefix))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `rows` grouped by `key` (scenario, interpreter, setting without the size), in order of first
/// appearance: one chart each.
pub fn groups<R, K: PartialEq>(rows: &[R], key: impl Fn(&R) -> K) -> Vec<Vec<&R>> {
    let mut keys: Vec<K> = Vec::new();
    let mut out: Vec<Vec<&R>> = Vec::new();
    for r in rows {
        let k = key(r);
        match keys.iter().position(|x| *x == k) {
            Some(i) => out[i].push(r),
            None => {
                keys.push(k);
                out.push(vec![r]);
            }
        }
    }
    out
}

/// The distinct `variant`s of `rows`, in order of first appearance (their colours' order).
pub fn variants<R>(rows: &[&R], variant: impl Fn(&R) -> &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        let v = variant(r);
        if !out.iter().any(|x| x == v) {
            out.push(v.to_string());
        }
    }
    out
}

/// Draws series `i` (its points in data units) as a line with dots in colour `i`, by size.
pub fn draw(plot: &mut Plot, series: &[Vec<(f64, f64)>]) {
    for (i, points) in series.iter().enumerate() {
        let mut pts = points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let pts: Vec<(f64, f64)> = pts
            .into_iter()
            .map(|(x, y)| (plot.x.at(x), plot.y.at(y)))
            .collect();
        plot.svg.polyline(&pts, color(i), 2.0, "");
        for (px, py) in &pts {
            plot.svg.circle(*px, *py, 3.5, color(i));
        }
    }
}

/// The chart's file name: `{kind}-{scenario}[-{setting}]-py{python}`.
pub fn file_name(kind: &str, scenario: &str, setting: &str, python: &str) -> String {
    let suffix = if setting.is_empty() {
        String::new()
    } else {
        format!("-{}", slug(&setting.replace(' ', "_")))
    };
    format!("{kind}-{}{suffix}-py{}", slug(scenario), slug(python))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_leaves_the_setting_and_groups_keep_first_appearance() {
        assert_eq!(
            setting_without("clients=100 rate_per_s=10", "clients"),
            "rate_per_s=10"
        );
        assert_eq!(setting_without("hold=1000", "hold"), "");
        let rows = [("a", 1), ("b", 1), ("a", 2)];
        let g = groups(&rows, |r| r.0);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0], vec![&("a", 1), &("a", 2)]);
        assert_eq!(
            file_name("held", "connections", "", "3.12.1"),
            "held-connections-py3_12_1"
        );
    }
}
