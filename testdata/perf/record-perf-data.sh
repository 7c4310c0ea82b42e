#!/bin/sh
# How testdata/perf/spin.perf.data was made (perf 6.x, cpu-clock at 4 kHz, frame
# pointers): the spin program of src/spin.c, recorded with call graphs.
# Symbols resolve through the binary (or perf's ~/.debug build-id cache); where
# neither is present perf script prints [unknown], and the tests compare grove's
# load with perf script's own text on the same machine, so they hold either way.
set -e
dir=$(mktemp -d)
gcc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$dir/spin" "$(dirname "$0")/src/spin.c"
(cd "$dir" && perf record -g -o spin.perf.data ./spin)
cp "$dir/spin.perf.data" "$(dirname "$0")/spin.perf.data"
# Reference figures: perf report --stdio --no-children --sort sym -F sample,sym -g none
