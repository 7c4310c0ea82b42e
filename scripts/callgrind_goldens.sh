#!/bin/sh
# Regenerates testdata/callgrind/: builds the small C programs in src/, runs them under
# valgrind (callgrind with line and with instr+jump+cache positions, --separate-threads,
# cachegrind) and records callgrind_annotate's / cg_annotate's PROGRAM TOTALS per file in
# totals.txt ("file event=value ..."), the golden tests/cpu_readers.rs checks.
set -eu
cd "$(dirname "$0")/../testdata/callgrind"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -f ./*.out ./*.out.gz ./*.out-*
gcc -g -O0 -fno-inline -o "$tmp/rec" src/rec.c
gcc -g -O0 -fno-inline -pthread -o "$tmp/thr" src/thr.c
vg="valgrind -q"
$vg --tool=callgrind --callgrind-out-file=rec.callgrind.out "$tmp/rec" >/dev/null
$vg --tool=callgrind --dump-instr=yes --collect-jumps=yes --cache-sim=yes --branch-sim=yes \
    --callgrind-out-file=rec-instr.callgrind.out "$tmp/rec" >/dev/null
$vg --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/thr.callgrind.out" "$tmp/thr" >/dev/null
for f in "$tmp"/thr.callgrind.out-*; do cp "$f" "$(basename "$f")"; done
$vg --tool=cachegrind --cache-sim=yes --cachegrind-out-file=rec.cachegrind.out "$tmp/rec" >/dev/null
: > totals.txt
for f in *.callgrind.out* rec.cachegrind.out; do
  case "$f" in *.cachegrind.*) ann=cg_annotate ;; *) ann=callgrind_annotate ;; esac
  # The events header line and the PROGRAM TOTALS line, zipped into event=value pairs.
  $ann "$f" | awk -v f="$f" '
    /^Events shown:/ { n = split($0, ev, " "); for (i = 3; i <= n; i++) e[i-2] = ev[i]; ne = n-2 }
    /PROGRAM TOTALS/ { line = f; k = 0
      for (i = 1; i <= NF; i++) { v = $i; if (v ~ /^\(/ || v ~ /%\)$/) continue
        if (v == "PROGRAM") break; gsub(",", "", v); if (v == ".") v = 0; k++; line = line " " e[k] "=" v }
      print line }' >> totals.txt
done
# The big ones travel gzipped: the reader sees through gzip.
gzip -9f rec-instr.callgrind.out rec.cachegrind.out
sed -i 's/^rec-instr.callgrind.out /rec-instr.callgrind.out.gz /; s/^rec.cachegrind.out /rec.cachegrind.out.gz /' totals.txt
cat totals.txt
