#!/usr/bin/env python3
"""tui_keys.py GROVE FILE [KEYS] [N]: the time from a key to the TUI's answer, through the
real binary (issue 30: a timeline zoom at any size).

Opens FILE with GROVE (--no-cache --no-session) in a detached tmux session at 200x50,
waits for the first frame to settle, presses `4` (the timeline), then each character of
KEYS (default `++++++`) in turn, each timed from `tmux send-keys` to the first change of
the pane (polling `capture-pane`, whose own few milliseconds are in every figure). With
N, then presses `+` and `-` N times each and prints the process's VmRSS and VmHWM before
and after, so a step that keeps memory shows it."""
import re
import subprocess
import sys
import time

grove, path = sys.argv[1], sys.argv[2]
keys = sys.argv[3] if len(sys.argv) > 3 else "++++++"
repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 0
session = f"tui-keys-{int(time.time() * 1000) % 100000}"


def capture():
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
    ).stdout


def settle(quiet, limit=300.0):
    """Waits until the pane has not changed for `quiet` seconds."""
    last, since, start = capture(), time.time(), time.time()
    while time.time() - start < limit:
        time.sleep(0.05)
        now = capture()
        if now != last:
            last, since = now, time.time()
        elif time.time() - since >= quiet:
            break


def press(key):
    """Milliseconds from sending `key` to the pane's first change."""
    before = capture()
    t = time.perf_counter()
    subprocess.run(["tmux", "send-keys", "-t", session, key])
    while capture() == before:
        pass
    return (time.perf_counter() - t) * 1e3


def memory():
    pane = subprocess.run(
        ["tmux", "list-panes", "-t", session, "-F", "#{pane_pid}"],
        capture_output=True,
        text=True,
    ).stdout.split()[0]
    # The pane's shell may have exec'd grove, or run it as its child.
    child = subprocess.run(["pgrep", "-P", pane], capture_output=True, text=True).stdout.split()
    status = open(f"/proc/{(child or [pane])[0]}/status").read()
    return dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+ kB)", status, re.M))


subprocess.run(
    ["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50",
     f"{grove} --no-cache --no-session {path}"]
)
try:
    start = time.time()
    settle(quiet=3.0)
    print(f"first frame settled after {time.time() - start:.1f} s")
    print(f"4 (timeline): {press('4'):.0f} ms")
    settle(quiet=1.5)
    times = []
    for k in keys:
        times.append(press(k))
        settle(quiet=0.7)
    print(f"keys {keys}: " + ", ".join(f"{x:.0f}" for x in times) + " ms")
    if repeat:
        print("memory before:", memory())
        for _ in range(repeat):
            press("+")
            press("-")
        settle(quiet=1.0)
        print(f"memory after {repeat} x (+ -):", memory())
finally:
    subprocess.run(["tmux", "send-keys", "-t", session, "q"])
    time.sleep(1)
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
