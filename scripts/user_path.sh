#!/bin/bash
# user_path.sh [-b GROVE] FILE... : the paths a user takes through grove on big traces
# (issue 30's quality bars), through the real binary, each run under /usr/bin/time:
#   info --no-cache; tree --depth 0 cold (writing the cache entry), warm (from it), and
#   --no-cache; the TUI (tmux, 200x50) cold with the default cache (q once the entry is
#   written), warm, and --no-cache: time to the first frame, resident memory then, peak.
# Prints one table per file. Every cold run starts from an empty XDG_CACHE_HOME.
#   scripts/user_path.sh -b target/rel/release/grove /tmp/node300.json /tmp/big1g.json
# Also: CAP=1200000000 runs everything under `prlimit --as=$CAP`; EXTRA="--max-memory 400M"
# adds flags to every grove command. SETTLE=5 waits 5 s (default 0.5) after the cold TUI's
# entry is written before q, so the GPU index built behind the first frame is in its peak
# even on a loaded machine. Needs tmux, GNU time and awk (no bc: login nodes lack it).
set -u
GROVE=${GROVE:-grove}
if [ "${1:-}" = "-b" ]; then GROVE=$2; shift 2; fi
GROVE=$(command -v "$GROVE" || echo "$GROVE")
[ $# -ge 1 ] || { echo "usage: $0 [-b GROVE] FILE..." >&2; exit 2; }
CAP=${CAP:-}
EXTRA=${EXTRA:-}
SETTLE=${SETTLE:-0.5}
WRAP=()
[ -n "$CAP" ] && WRAP=(prlimit --as="$CAP")
WORK=$(mktemp -d /tmp/grove-user-path.XXXXXX)
trap 'tmux kill-session -t "gup$$" 2>/dev/null; rm -rf "$WORK"' EXIT

# run NAME CACHE ARGS...: a headless command; prints "wall s | peak MiB | exit"
run() {
    local cache=$1; shift
    XDG_CACHE_HOME=$cache "${WRAP[@]}" /usr/bin/time -f '%e %M' -o "$WORK/t" \
        "$GROVE" "$@" $EXTRA >/dev/null 2>"$WORK/err"
    local rc=$? t
    t=$(tail -1 "$WORK/t")
    printf '%s s | %s MiB | %s' "${t% *}" $(( ${t#* } / 1024 )) "$rc"
    [ "$rc" = 0 ] || printf ' (%s)' "$(grep -v '^Command exited' "$WORK/err" | head -1 | cut -c1-90)"
}

# tui CACHE WAIT_ENTRY ARGS...: the TUI in a detached tmux session; prints
# "first frame s | RSS then MiB | peak MiB | entry written s"
tui() {
    local cache=$1 wait_entry=$2; shift 2
    local s="gup$$" start now frame="" rss="-" pid="" written="-"
    rm -f "$WORK/tv"
    start=$(date +%s.%N)
    tmux new-session -d -s "$s" -x 200 -y 50 \
        "XDG_CACHE_HOME=$cache ${WRAP[*]} /usr/bin/time -v -o $WORK/tv $GROVE $* $EXTRA --no-session 2>$WORK/err; tmux wait-for -S $s-done"
    # The first frame: the pane shows something and it is not the loading screen.
    for _ in $(seq 1 3000); do
        [ -z "$pid" ] && pid=$(pgrep -n -f "^$GROVE $1" 2>/dev/null)
        local pane
        pane=$(tmux capture-pane -p -t "$s" 2>/dev/null) || break
        if [ -n "$(echo "$pane" | tr -d ' \n')" ] && ! echo "$pane" | grep -q 'q cancels\|grove: loading'; then
            now=$(date +%s.%N)
            frame=$(awk -v a="$start" -v b="$now" 'BEGIN { printf "%.2f", b - a }')
            [ -n "$pid" ] && rss=$(( $(awk '/VmRSS/{print $2}' /proc/$pid/status 2>/dev/null || echo 0) / 1024 ))
            break
        fi
        sleep 0.02
    done
    if [ "$wait_entry" = 1 ]; then
        for _ in $(seq 1 1200); do
            if ls "$cache"/grove/*/stamp.json >/dev/null 2>&1; then
                written="$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"; break
            fi
            sleep 0.05
        done
        # The events arrive once the write is done: let the TUI take them.
        sleep "$SETTLE"
    fi
    tmux send-keys -t "$s" q
    timeout 120 tmux wait-for "$s-done"
    tmux kill-session -t "$s" 2>/dev/null
    local peak
    peak=$(awk -F': ' '/Maximum resident/{print int($2/1024)}' "$WORK/tv" 2>/dev/null)
    printf '%s s | %s MiB | %s MiB | %s' "${frame:-none}" "$rss" "${peak:-?}" "$written"
    [ -z "$frame" ] && printf ' (%s)' "$(head -1 "$WORK/err" | cut -c1-90)"
}

echo "grove: $GROVE ($("$GROVE" --version 2>/dev/null))${CAP:+, prlimit --as=$CAP}${EXTRA:+, $EXTRA}"
echo "uptime: $(uptime)"
for f in "$@"; do
    f=$(realpath "$f")
    c=$WORK/cache
    echo
    echo "## $f ($(stat -c %s "$f") bytes)"
    echo
    echo "| run | wall | peak RSS | exit |"
    echo "|---|---|---|---|"
    echo "| \`info --no-cache\` | $(run "$c" info --no-cache "$f") |"
    rm -rf "$c"
    echo "| \`tree --depth 0\` cold, writing the cache | $(run "$c" tree --depth 0 "$f") |"
    echo "| cache entry | $(du -sh "$c/grove" 2>/dev/null | cut -f1) | | |"
    echo "| \`tree --depth 0\` warm | $(run "$c" tree --depth 0 "$f") |"
    echo "| \`tree --depth 0 --no-cache\` | $(run "$c" tree --depth 0 --no-cache "$f") |"
    echo
    echo "| TUI (tmux 200x50) | first frame | RSS at it | peak RSS | entry written |"
    echo "|---|---|---|---|---|"
    rm -rf "$c"
    echo "| cold, default (q once the entry is written) | $(tui "$c" 1 "$f") |"
    echo "| warm | $(tui "$c" 0 "$f") |"
    echo "| \`--no-cache\` | $(tui "$c" 0 --no-cache "$f") |"
    rm -rf "$c"
done
echo
echo "uptime: $(uptime)"
