#!/bin/sh
# Regenerates testdata/perf/report/: records src/calls.c (a shared callee reached on two
# paths, and recursion) with `perf record -e cpu-clock -g`, keeps the samples as
# `perf script` text, and writes perf's own answers beside them:
#   self.txt     `perf report --no-children --sort symbol` (period and samples per symbol)
#   children.txt `perf report --children --sort symbol` (children %, self %, per symbol)
# tests/functions.rs checks grove's functions table against both (issue 26).
set -eu
cd "$(dirname "$0")/../testdata/perf"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -g -O1 -fno-omit-frame-pointer -fno-inline -o "$tmp/calls" src/calls.c
perf record -q -e cpu-clock -F 2000 -g -o "$tmp/perf.data" -- "$tmp/calls" >/dev/null
perf script -i "$tmp/perf.data" | gzip -9 > report/calls.perf.txt.gz
perf report -i "$tmp/perf.data" --stdio --no-children --sort symbol -F period,sample,sym -g none \
  2>/dev/null | grep -v '^#' | grep -v '^$' > report/self.txt
perf report -i "$tmp/perf.data" --stdio --children --sort symbol \
  -F overhead_children,overhead,period,sample,sym -g none \
  2>/dev/null | grep -v '^#' | grep -v '^$' > report/children.txt
