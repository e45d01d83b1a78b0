#!/usr/bin/env bash
# Re-renders every findings page (docs/findings/*/summary.md and the charts committed beside it)
# from its committed results document with the built lab, after a change of wording or rule;
# tests/docs.rs checks that each page is what the lab renders; then the pasted terminal summaries
# (below). Usage: scripts/render-findings.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/asynclab
[ -x "$bin" ] || { echo "$bin not built: run 'cargo build --release' first" >&2; exit 1; }
for dir in docs/findings/*/ docs/findings/*/second/; do
  dir=${dir%/}
  tmp=$(mktemp -d)
  if [ -f "$dir/results.json" ]; then
    cp "$dir/results.json" "$tmp/results.json"
  elif [ -f "$dir/results.json.xz" ]; then
    xz -dc "$dir/results.json.xz" >"$tmp/results.json"
  else
    rm -rf "$tmp"
    continue
  fi
  "$bin" report "$tmp" >/dev/null
  cp "$tmp/summary.md" "$dir/summary.md"
  for svg in "$dir"/*.svg; do
    [ -e "$svg" ] || continue
    cp "$tmp/charts/$(basename "$svg")" "$svg"
  done
  rm -rf "$tmp"
  echo "rendered $dir"
done

# The terminal summaries pasted in the README and the book: each `<!-- asynclab report PAGE -->`
# line is followed by a fenced block holding what `asynclab report PAGE` prints (its timing line
# dropped), which tests/docs.rs checks; refresh them all.
printed=$(mktemp -d)
for page in $(grep -rhoE '^<!-- asynclab report [^ ]+ -->' README.md docs | awk '{print $4}' | sort -u); do
  tmp=$(mktemp -d)
  if [ -f "$page/results.json" ]; then cp "$page/results.json" "$tmp/"; else xz -dc "$page/results.json.xz" >"$tmp/results.json"; fi
  "$bin" report "$tmp" | grep -v '^report regenerated in ' >"$printed/$(echo "$page" | tr / _)"
  rm -rf "$tmp"
done
for f in README.md $(find docs -name '*.md'); do
  python3 - "$f" "$printed" <<'PY'
import os, sys
path, printed = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
out, i, changed = [], 0, False
while i < len(lines):
    line = lines[i]
    out.append(line)
    i += 1
    s = line.strip()
    if s.startswith("<!-- asynclab report ") and s.endswith(" -->") and i < len(lines) and lines[i].startswith("```"):
        page = s[len("<!-- asynclab report "):-len(" -->")]
        out.append(lines[i]); i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        out.extend(open(os.path.join(printed, page.replace("/", "_"))).read().rstrip("\n").split("\n"))
        changed = True
if changed:
    open(path, "w").write("\n".join(out))
    print("pasted into", path)
PY
done
rm -rf "$printed"
