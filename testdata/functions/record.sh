#!/bin/sh
# Records testdata/functions/ with the reference tools (issue 26, tests/functions.rs):
# * cg-cache.*: testdata/callgraph/src/cg.c run under callgrind with the cache and
#   branch simulators (13 events), and callgrind_annotate --inclusive=yes|no of it;
# * pprof/*.top: `go tool pprof -top` (Debian golang-go) of corpus pprof profiles, one
#   file per sample type, every node kept, values in the sample type's base unit.
# Run from anywhere; builds and runs outside the repository so the files name /tmp paths.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
corpus="$here/../../../shared/corpus"
b=/tmp/grove-functions
rm -rf "$b" && mkdir -p "$b" && cp "$here/../callgraph/src/cg.c" "$b/"
cd "$b"
gcc -O1 -g -pthread -o cg cg.c
valgrind -q --tool=callgrind --cache-sim=yes --branch-sim=yes \
  --callgrind-out-file="$b/cg-cache.callgrind.out" ./cg >/dev/null
cd /
for inc in yes no; do
  callgrind_annotate --inclusive=$inc --threshold=100 --auto=no "$b/cg-cache.callgrind.out" \
    | gzip -n -9 > "$here/cg-cache.annotate-inclusive-$inc.txt.gz"
done
gzip -n -9 -c "$b/cg-cache.callgrind.out" > "$here/cg-cache.callgrind.out.gz"

# pprof: PROFILE (relative to the corpus) and its sample types with the -unit to print.
mkdir -p "$here/pprof"
export HOME="${HOME:-/tmp}"
top() {
  out="$here/pprof/$(basename "$1" .pb.gz).$2.top"
  go tool pprof -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 \
    -sample_index="$2" ${3:+-unit=$3} "$corpus/$1" > "$out"
}
top parca/pkg/query/testdata/fib.pb.gz 0
top parca/pkg/query/testdata/fib.pb.gz 1 ns
top parca/pkg/query/testdata/profile1.pb.gz 0
top parca/pkg/query/testdata/profile1.pb.gz 1 ns
top parca/pkg/query/testdata/fgprof.pb.gz 1 ns
top parca/pkg/query/testdata/alloc_space_delta.pb.gz 0
top parca/pkg/query/testdata/alloc_space_delta.pb.gz 1 B
