#!/bin/sh
# Re-records the gprof reports of testdata/gprof (gcc -pg, GNU gprof 2.40):
#   report.txt  `gprof -b` (flat profile and call graph), what grove reads;
#   flat.txt    `gprof -b -p` (the flat profile alone), what tests/gprof.rs compares with.
set -e
cd "$(dirname "$0")"
tmp=$(mktemp -d)
gcc -O0 -pg -o "$tmp/gp" gp.c
(cd "$tmp" && ./gp > /dev/null)
gprof -b "$tmp/gp" "$tmp/gmon.out" > report.txt
gprof -b -p "$tmp/gp" "$tmp/gmon.out" > flat.txt
rm -rf "$tmp"
