#!/bin/bash
# warm_tui.sh GROVE FILE : the TUI of FILE in a detached tmux session (200x50), its time to the
# first frame and its resident memory then, split into anonymous and file pages (issue 30:
# the warm reopen reads its tree from the mapped cache entry). Run `GROVE tree FILE` once first
# with the same XDG_CACHE_HOME (/tmp/xc-$(basename GROVE)) so the entry exists.
G=$1; F=$2; s=w$$
start=$(date +%s.%N)
tmux new-session -d -s $s -x 200 -y 50 "XDG_CACHE_HOME=/tmp/xc-$(basename $G) $G $F --no-session; tmux wait-for -S $s-done"
pid=""
for i in $(seq 1 2000); do
  [ -z "$pid" ] && pid=$(pgrep -n -f "^$G $F")
  pane=$(tmux capture-pane -p -t $s 2>/dev/null)
  if [ -n "$(echo "$pane" | tr -d ' \n')" ] && ! echo "$pane" | grep -q 'q cancels\|grove: loading'; then
    now=$(date +%s.%N); st=$(grep -E 'VmRSS|RssAnon|RssFile' /proc/$pid/status | awk '{printf "%s %d MiB  ", $1, $2/1024}'); break; fi
  sleep 0.01
done
echo "$(basename $G): frame $(awk -v a=$start -v b=$now 'BEGIN{printf "%.2f", b-a}') s  $st"
tmux send-keys -t $s q; timeout 30 tmux wait-for $s-done; tmux kill-session -t $s 2>/dev/null
