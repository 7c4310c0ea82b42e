#!/bin/sh
# Regenerates testdata/perf/: records src/spin.c with `perf record -e cpu-clock -g` and
# writes the samples as `perf script` text three ways (default fields; --header; an -F
# field set with pid/tid/cpu/period), gzipping one. totals.txt holds, per file, the
# sample count and period sum computed here with awk from the text (independent of grove).
set -eu
cd "$(dirname "$0")/../testdata/perf"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -g -O1 -fno-omit-frame-pointer -fno-inline -o "$tmp/spin" src/spin.c
perf record -q -e cpu-clock -F 1000 -g --sample-cpu -o "$tmp/perf.data" -- "$tmp/spin" >/dev/null
perf script -i "$tmp/perf.data" > spin.perf.txt
perf script -i "$tmp/perf.data" --header > spin-header.perf.txt
perf script -i "$tmp/perf.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso > spin-fields.perf.txt
gzip -9f spin-header.perf.txt
: > totals.txt
for f in spin.perf.txt spin-header.perf.txt.gz spin-fields.perf.txt; do
  # A sample header is a non-indented, non-comment line ending with 'event:'.
  zcat -f "$f" | awk -v f="$f" '
    /^#/ || /^[ \t]/ || /^$/ { next }
    { n++; for (i = 1; i < NF; i++) if ($(i+1) ~ /:$/ && $i ~ /^[0-9]+$/ && $(i-1) ~ /:$/) p += $i }
    END { printf "%s samples=%d period=%d\n", f, n, p }' >> totals.txt
done
cat totals.txt
