#!/bin/bash
# first_frame.sh GROVE FILE [ARGS...]: the TUI's first frame of a cold open (issue 30's
# "cold first frame" bar), through the real binary: a detached tmux session at 200x50,
# a fresh XDG_CACHE_HOME (the default path: the cache entry is written behind the
# frame), the time from the session's start to the first pane that is not the loading
# screen, then `q` after SETTLE seconds (default 0.3) and GNU time's wall, user, system
# and peak of the whole run. Waits first until both cores were at least 92 % idle over
# a second (at most QUIET seconds, default 60; QUIET=0 skips the wait): on a shared
# machine a busy core moves this figure more than any change does.
#   scripts/first_frame.sh target/rel/release/grove /tmp/big1g.json
set -u
[ $# -ge 2 ] || { echo "usage: $0 GROVE FILE [ARGS...]" >&2; exit 2; }
GROVE=$1 F=$2; shift 2
QUIET=${QUIET:-60}
SETTLE=${SETTLE:-0.3}

# Both cores idle over the last second (from /proc/stat's first line).
quiet() {
    local end=$(( $(date +%s) + QUIET )) a b idle tot i
    while [ "$(date +%s)" -lt "$end" ]; do
        read -ra a < /proc/stat; sleep 1; read -ra b < /proc/stat
        idle=$(( b[4] + b[5] - a[4] - a[5] )); tot=0
        for i in 1 2 3 4 5 6 7 8; do tot=$(( tot + b[i] - a[i] )); done
        [ "$tot" -gt 0 ] && [ $(( idle * 100 / tot )) -ge 92 ] && return 0
    done
    echo "first_frame.sh: the machine did not go quiet in ${QUIET} s; measuring anyway" >&2
}

[ "$QUIET" -gt 0 ] && quiet
C=$(mktemp -d) T=$(mktemp) S=ff$$
trap 'tmux kill-session -t "$S" 2>/dev/null; rm -rf "$C" "$T"' EXIT
start=$(date +%s.%N) now=""
tmux new-session -d -s "$S" -x 200 -y 50 \
    "XDG_CACHE_HOME=$C /usr/bin/time -f '%e %U %S %M' -o $T $GROVE $F $* --no-session; tmux wait-for -S $S-done"
for _ in $(seq 1 6000); do
    pane=$(tmux capture-pane -p -t "$S" 2>/dev/null) || break
    if [ -n "$(echo "$pane" | tr -d ' \n')" ] && ! echo "$pane" | grep -q 'q cancels\|grove: loading'; then
        now=$(date +%s.%N); break
    fi
    sleep 0.01
done
sleep "$SETTLE"
tmux send-keys -t "$S" q
timeout 120 tmux wait-for "$S-done"
read -r wall user sys peak < "$T"
if [ -n "$now" ]; then
    awk -v a="$start" -v b="$now" 'BEGIN { printf "first frame %.2f s", b - a }'
else
    printf 'first frame: none'
fi
echo " | run ${wall} s, ${user} s user, ${sys} s sys, peak ${peak} KiB"
