#!/usr/bin/env bash
# Compares what two grove binaries print (stdout, stderr, exit code) for `info`, `tree`
# (csv and json), `kernels` and `summary` on every corpus JSON trace and on the files
# given: a load-path change must leave every output byte-identical (issue 16).
# usage: scripts/same_outputs.sh OLD_GROVE NEW_GROVE [EXTRA_FILES...]
set -u
old=$1 new=$2; shift 2
corpus=$(cd "$(dirname "$0")/../../shared/corpus" 2>/dev/null && pwd)
out=$(mktemp -d)
files=()
if [ -n "$corpus" ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find "$corpus" -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.pt.trace.json*' \) | sort)
fi
files+=("$@")
run() { # bin tag file args...
  local bin=$1 tag=$2 f=$3; shift 3
  "$bin" "$@" "$f" >"$out/$tag.out" 2>"$out/$tag.err" </dev/null; echo $? >"$out/$tag.rc"
}
n=0 bad=0
for f in "${files[@]}"; do
  for cmd in "info" "tree --format csv --depth 0" "tree --format json --depth 0" "kernels" "summary"; do
    # shellcheck disable=SC2086
    run "$old" a "$f" --no-cache $cmd
    # shellcheck disable=SC2086
    run "$new" b "$f" --no-cache $cmd
    n=$((n + 1))
    for x in out err rc; do
      if ! cmp -s "$out/a.$x" "$out/b.$x"; then
        bad=$((bad + 1)); echo "DIFF $x: $cmd $f"; break
      fi
    done
  done
done
rm -rf "$out"
echo "$n comparisons, $bad different"
[ "$bad" -eq 0 ]
