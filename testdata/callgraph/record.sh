#!/bin/sh
# Records testdata/callgraph/ with real tools (see README.md here). Builds and runs
# outside the repository so the files name /tmp paths, not a checkout's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
b=/tmp/grove-callgraph
rm -rf "$b" && mkdir -p "$b" && cp "$here/src/cg.c" "$here/src/work.py" "$b/"
cd "$b"
gcc -O1 -g -pthread -o cg cg.c
valgrind -q --tool=callgrind --callgrind-out-file="$b/cg.callgrind.out" ./cg >/dev/null
# callgrind_annotate strips its working directory from file names: run it elsewhere.
cd /
for inc in yes no; do
  callgrind_annotate --inclusive=$inc --tree=both --threshold=100 --auto=no "$b/cg.callgrind.out" \
    | gzip -n -9 > "$here/cg.annotate-inclusive-$inc.txt.gz"
done
gzip -n -9 -c "$b/cg.callgrind.out" > "$here/cg.callgrind.out.gz"
cd "$b" && python3 work.py work.pstats work.pstats.json
cp work.pstats work.pstats.json "$here/"
