#!/bin/sh
# How testdata/gecko/spin.samply.json.gz was made: samply (cargo install samply
# --locked; 0.13.1) recording the spin program of testdata/perf/src/spin.c, and its
# golden figures from golden.py (an independent Python decode).
# samply needs perf events: as root, or after `sysctl kernel.perf_event_paranoid=1`.
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
gcc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$dir/spin" "$here/../perf/src/spin.c"
(cd "$dir" && samply record --save-only -o spin.samply.json.gz -- ./spin)
cp "$dir/spin.samply.json.gz" "$here/"
python3 "$here/golden.py" "$here/spin.samply.json.gz" "$here/spin.samply.golden.json"
