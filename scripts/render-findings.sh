#!/usr/bin/env bash
# Re-renders every findings page (docs/findings/*/summary.md and the charts committed beside it)
# from its committed results document with the built lab, after a change of wording or rule;
# tests/docs.rs checks that each page is what the lab renders. Usage: scripts/render-findings.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/asynclab
[ -x "$bin" ] || { echo "$bin not built: run 'cargo build --release' first" >&2; exit 1; }
for dir in docs/findings/*/; do
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
