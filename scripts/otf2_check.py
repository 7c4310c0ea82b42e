#!/usr/bin/env python3
"""Checks grove's OTF2 reader against otf2-print, the reference tool of the OTF2 library.

    python3 scripts/otf2_check.py GROVE ARCHIVE [ARCHIVE...]

For each archive (a directory or its traces.otf2), runs `otf2-print -G` (clock
properties, location groups, locations) and `otf2-print` (every event), and computes on
its own, from otf2-print's text only:

- the number of events of each type (otf2-print's first column);
- per call path (location root / region names from Enter/Leave nesting): visits,
  inclusive time in ns (each timestamp converted as (t - global offset) * 1e9 / ticks
  per second, truncated), and the bytes of MPI_SEND/MPI_RECV inside it.

- per call path and location root, the METRIC records placed by the rule of
  docs/formats.md (OTF2 "Metrics"): a record's amount goes to the call path innermost
  on its location at the record (the root when none is open; the root too for a
  metric instance measured for something other than that location). Accumulated
  START: the difference to the location's previous value (0 before the first); POINT:
  the same, the first value a baseline; LAST/NEXT: the value itself. Absolute and
  relative members: the largest value (`NAME:max`), and the largest in the subtree
  (`NAME:max (inc)`).

It then runs `GROVE info --format json` and `GROVE tree --format csv` on the archive and
compares: event counts with the `otf2.events.*` metadata, the set of call paths, and
`count`, `time (inc)`, `bytes_sent`, `bytes_received` and every metric column on every
path (members of strict synchronous classes, which grove counts by region differences,
on the regions' paths only: what was counted before the first Enter is no region's).
It prints each accumulated member's total per location (the sum of the placed amounts).
Exits 0 when all agree, 1 with the differences otherwise. Needs otf2-print (Debian:
otf2-tools).
"""

import csv
import io
import json
import re
import subprocess
import sys
from collections import defaultdict


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def anchor_of(path):
    import os

    return os.path.join(path, "traces.otf2") if os.path.isdir(path) else path


def definitions(anchor):
    out = run(["otf2-print", "-G", anchor])
    res = off = None
    groups, locations = {}, {}
    members, classes, instances = {}, {}, {}
    for line in out.splitlines():
        if line.startswith("CLOCK_PROPERTIES"):
            res = int(re.search(r"Ticks per Seconds: (\d+)", line).group(1))
            off = int(re.search(r"Global Offset: (\d+)", line).group(1))
        elif line.startswith("LOCATION_GROUP "):
            m = re.match(r'LOCATION_GROUP\s+(\d+)\s+Name: "(.*?)" <\d+>', line)
            groups[int(m.group(1))] = m.group(2)
        elif line.startswith("LOCATION "):
            m = re.match(
                r'LOCATION\s+(\d+)\s+Name: "(.*?)" <\d+>, Type: \w+, # Events: \d+, Group: ".*?" <(\d+)>',
                line,
            )
            locations[int(m.group(1))] = (m.group(2), int(m.group(3)))
        elif line.startswith("METRIC_MEMBER "):
            m = re.match(r'METRIC_MEMBER\s+(\d+)\s+Name: "(.*?)" <\d+>.*, Mode: (\w+),', line)
            members[int(m.group(1))] = (m.group(2), m.group(3))
        elif line.startswith("METRIC_CLASS "):
            m = re.match(r"METRIC_CLASS\s+(\d+)\s+Occurrence: (\w+),.*?Members?: (.*)$", line)
            ids = [int(x) for x in re.findall(r"<(\d+)>", m.group(3))]
            classes[int(m.group(1))] = (m.group(2), ids)
        elif line.startswith("METRIC_INSTANCE "):
            m = re.match(r"METRIC_INSTANCE\s+(\d+)\s+Class: (\d+), Recorder: .*?<(\d+)>, Scope: (\w+) .*?<(\d+)>", line)
            instances[int(m.group(1))] = (int(m.group(2)), m.group(4), int(m.group(5)))
    roots = {}
    for loc, (name, group) in locations.items():
        gname = groups.get(group, "")
        siblings = sum(1 for (_, g) in locations.values() if g == group)
        if not gname:
            roots[loc] = name or f"location {loc}"
        elif siblings > 1:
            roots[loc] = f"{gname} / {name}"
        else:
            roots[loc] = gname
    metrics = {"members": members, "classes": classes, "instances": instances}
    return res, off, roots, metrics


def ns(t, off, res):
    d = t - off
    q = abs(d) * 1_000_000_000 // res
    return q if d >= 0 else -q


def expected(anchor):
    res, off, roots, mdefs = definitions(anchor)
    place = Placement(mdefs)
    counts = defaultdict(int)
    stacks = defaultdict(list)
    paths = defaultdict(lambda: {"count": 0, "time (inc)": 0, "bytes_sent": 0, "bytes_received": 0})
    event = re.compile(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s+(.*)$")
    region = re.compile(r'Region: "(.*)" <\d+>')
    proc = subprocess.Popen(["otf2-print", anchor], stdout=subprocess.PIPE, text=True)
    started = False
    for line in proc.stdout:
        if line.startswith("----"):
            started = True
            continue
        m = event.match(line.rstrip("\n")) if started else None
        if not m:
            continue
        kind, loc, t, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        counts[kind] += 1
        st = stacks[loc]
        if kind == "ENTER":
            name = region.search(rest).group(1)
            path = (st[-1][0] if st else roots[loc]) + "/" + name
            st.append((path, t))
            paths[path]["count"] += 1
        elif kind == "LEAVE" and st:
            path, t0 = st.pop()
            paths[path]["time (inc)"] += ns(t, off, res) - ns(t0, off, res)
        elif kind in ("MPI_SEND", "MPI_ISEND", "MPI_RECV", "MPI_IRECV") and st:
            n = int(re.search(r"Length: (\d+)", rest).group(1))
            key = "bytes_sent" if "SEND" in kind else "bytes_received"
            paths[st[-1][0]][key] += n
        elif kind == "METRIC":
            place.record(loc, st[-1][0] if st else roots[loc], roots[loc], rest)
    if proc.wait() != 0:
        raise SystemExit(f"otf2-print failed on {anchor}")
    place.into(paths)
    return counts, paths, place


class Placement:
    """METRIC records placed on call paths (see the module's docstring)."""

    def __init__(self, mdefs):
        self.members = mdefs["members"]
        self.classes = mdefs["classes"]
        self.instances = mdefs["instances"]
        self.prev = {}
        self.acc = defaultdict(lambda: defaultdict(float))
        self.level = defaultdict(dict)
        self.totals = defaultdict(float)
        # Members of strict synchronous classes: grove counts them by region.
        self.strict = {m for (occ, ids) in self.classes.values() if occ == "SYNCHRONOUS_STRICT" for m in ids}

    def record(self, loc, path, root, rest):
        mid = int(re.match(r"Metric: (\d+)", rest).group(1))
        cls = mid
        if mid in self.instances:
            cls, kind, scope = self.instances[mid]
            if not (kind == "LOCATION" and scope == loc):
                path = root
        values = re.findall(r'\("(.*?)" <(\d+)>; (\w+); ([^)]*)\)', rest)
        for (_, member, _, v) in values:
            member = int(member)
            name, mode = self.members[member]
            v = float(v)
            if not mode.startswith("ACCUMULATED"):
                cur = self.level[name].get(path)
                self.level[name][path] = v if cur is None else max(cur, v)
                continue
            if mode in ("ACCUMULATED_START", "ACCUMULATED_POINT"):
                key = (loc, member)
                prev = self.prev.get(key, 0.0 if mode == "ACCUMULATED_START" else None)
                self.prev[key] = v
                if prev is None:
                    continue
                amount = v - prev
            else:
                amount = v
            self.acc[name][path] += amount
            self.totals[(root, name)] += amount

    def into(self, paths):
        strict_names = {self.members[m][0] for m in self.strict}
        for name, per in self.acc.items():
            for path, v in per.items():
                paths[path]  # the path exists (a root, or entered)
                p = path
                paths[path][name] = paths[path].get(name, 0) + v
                while True:
                    paths[p][name + " (inc)"] = paths[p].get(name + " (inc)", 0) + v
                    if "/" not in p:
                        break
                    p = p.rsplit("/", 1)[0]
        for name, per in self.level.items():
            for path, v in per.items():
                paths[path][name + ":max"] = v
                p = path
                while True:
                    k = name + ":max (inc)"
                    paths[p][k] = max(paths[p].get(k, v), v)
                    if "/" not in p:
                        break
                    p = p.rsplit("/", 1)[0]
        # Strict counters: compared on region paths only (grove's roots hold nothing
        # of them), and the columns exist on every path.
        for path, row in paths.items():
            for name in strict_names:
                if "/" not in path:
                    row.pop(name, None)
                    row.pop(name + " (inc)", None)
                else:
                    row.setdefault(name, 0)
                    row.setdefault(name + " (inc)", 0)


def check(grove, archive):
    anchor = anchor_of(archive)
    counts, paths, place = expected(anchor)
    info = json.loads(run([grove, "info", archive, "--format", "json"]))
    meta = info["metadata"]
    problems = []
    got_counts = {
        k[len("otf2.events."):]: int(v) for k, v in meta.items() if k.startswith("otf2.events.")
    }
    if got_counts != dict(counts):
        problems.append(f"event counts: otf2-print {dict(counts)}, grove {got_counts}")
    if int(meta.get("otf2.events", -1)) != sum(counts.values()):
        problems.append(f"total events: otf2-print {sum(counts.values())}, grove {meta.get('otf2.events')}")
    rows = list(csv.DictReader(io.StringIO(run([grove, "tree", archive, "--format", "csv"]))))
    got = {r["path"]: r for r in rows}
    # Roots are compared only where a metric was placed on them.
    paths = {p: v for p, v in paths.items() if "/" in p or len(v) > 4}
    if set(p for p in got if "/" in p) != set(p for p in paths if "/" in p):
        problems.append(
            f"call paths differ: only otf2-print {sorted(set(paths) - set(got))}, only grove {sorted(set(got) - set(paths))}"
        )
    for p, want in paths.items():
        r = got.get(p)
        if r is None:
            continue
        for k, v in want.items():
            if "/" not in p and k in ("count", "time (inc)", "bytes_sent", "bytes_received"):
                continue
            g = r.get(k, "0") or "0"
            if abs(float(g) - float(v)) > 1e-9 * max(1.0, abs(float(v))):
                problems.append(f"{p}: {k} otf2-print {v}, grove {g}")
    enters = counts.get("ENTER", 0)
    print(
        f"{archive}: {sum(counts.values())} events ({enters} enters), {len(paths)} call paths: "
        + ("agree" if not problems else f"{len(problems)} difference(s)")
    )
    for (root, name), v in sorted(place.totals.items()):
        print(f"  {root}: {name} total {v:.17g}")
    for p in problems[:20]:
        print("  " + p)
    return not problems


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    grove = sys.argv[1]
    ok = all([check(grove, a) for a in sys.argv[2:]])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
