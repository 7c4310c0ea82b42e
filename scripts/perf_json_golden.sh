#!/bin/sh
# Regenerates testdata/perf/spin.perf.json.gz (perf's JSON export, `perf data convert
# --to-json`) and spin-json.perf.txt.gz (`perf script` of the same perf.data), and
# totals-json.txt: the sample count and the per-root (comm) counts computed with Python's
# json module, independent of grove.
set -eu
cd "$(dirname "$0")/../testdata/perf"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -g -O1 -fno-omit-frame-pointer -fno-inline -o "$tmp/spin" src/spin.c
perf record -q -e cpu-clock -F 1000 -g --sample-cpu -o "$tmp/perf.data" -- "$tmp/spin" >/dev/null
perf data convert -i "$tmp/perf.data" --to-json "$tmp/spin.perf.json" 2>/dev/null
perf script -i "$tmp/perf.data" > "$tmp/spin-json.perf.txt"
gzip -9c "$tmp/spin.perf.json" > spin.perf.json.gz
gzip -9c "$tmp/spin-json.perf.txt" > spin-json.perf.txt.gz
python3 - "$tmp/spin.perf.json" > totals-json.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["samples"]
print(f"spin.perf.json.gz samples={len(s)} with_chain={sum(1 for x in s if x.get('callchain'))}")
PY
cat totals-json.txt
