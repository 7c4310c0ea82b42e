#!/usr/bin/env python3
"""Writes the synthetic inputs of the CPU-reader benchmarks (docs/performance.md):

    gen_cpu_bench.py perf OUT.txt [MB]       perf script text, `-g` call chains
    gen_cpu_bench.py callgrind OUT [MB]      callgrind, 3 events, name compression

Both describe one made-up program: a 4-ary tree of functions (each called from one
place, so the call-path tree stays the size of the program) plus a few shared leaf
helpers called from everywhere, a third of the names C++-mangled so demangling is paid
for. Deterministic (fixed seed), so runs compare.
"""
import random
import sys

FANOUT = 4


def name(i):
    n = f"fn{i}"
    return f"_ZN5bench{len(n)}{n}Ev" if i % 3 == 0 else n


def perf(path, mb):
    rnd = random.Random(1)
    nfun = 40000
    helpers = ["memcpy", "malloc", "[unknown]", "_raw_spin_lock"]
    target = mb * 1_000_000
    written = 0
    t = 1000.0
    with open(path, "w") as f:
        while written < target:
            # a root-to-node path in the tree, leaf first
            i = rnd.randrange(nfun)
            chain = []
            while True:
                chain.append(i)
                if i == 0:
                    break
                i = (i - 1) // FANOUT
            lines = []
            t += 0.000250
            tid = 4000 + rnd.randrange(8)
            lines.append(f"bench {4000}/{tid} [00{tid % 4}] {t:.6f}:     250000 cpu-clock:uhH: \n")
            if rnd.random() < 0.3:
                h = rnd.choice(helpers)
                dso = "[kernel.kallsyms]" if h.startswith("_raw") else "/usr/lib/x86_64-linux-gnu/libc.so.6"
                lines.append(f"\t    7f00{rnd.randrange(1 << 20):06x} {h}+0x1f ({dso})\n")
            for j in chain:
                lines.append(f"\t    5600{j:08x} {name(j)}+0x{rnd.randrange(256):x} (/opt/bench/bin/bench)\n")
            lines.append("\n")
            s = "".join(lines)
            f.write(s)
            written += len(s)


def callgrind(path, mb):
    rnd = random.Random(2)
    target = mb * 1_000_000
    # cost lines per function, chosen so the file lands near the target size
    per_fn = 120
    nfun = max(1, target // (per_fn * 11))
    files = [f"/opt/bench/src/mod{k}.c" for k in range(64)]
    self_cost = [None] * nfun
    bodies = [None] * nfun
    for i in range(nfun):
        rows = []
        tot = [0, 0, 0]
        for _ in range(per_fn):
            c = [rnd.randrange(1, 50), rnd.randrange(0, 20), rnd.randrange(0, 10)]
            rows.append(c)
            for k in range(3):
                tot[k] += c[k]
        bodies[i] = rows
        self_cost[i] = tot
    helper_cost = [7, 2, 1]  # one call of the shared helper `bench_helper`
    incl = [None] * nfun
    helper_calls = [0] * nfun
    for i in reversed(range(nfun)):
        c = list(self_cost[i])
        helper_calls[i] = 1 if i % 5 == 0 else 0
        for k in range(3):
            c[k] += helper_calls[i] * helper_cost[k]
        for ch in range(FANOUT * i + 1, min(nfun, FANOUT * i + FANOUT + 1)):
            for k in range(3):
                c[k] += incl[ch][k]
        incl[i] = c
    total = [0, 0, 0]
    for i in range(nfun):
        for k in range(3):
            total[k] += self_cost[i][k] + helper_calls[i] * helper_cost[k]
    seen_fl, seen_fn = set(), set()

    def fl(k):
        if k in seen_fl:
            return f"({k + 1})"
        seen_fl.add(k)
        return f"({k + 1}) {files[k]}"

    def fn(i):
        if i in seen_fn:
            return f"({i + 1})"
        seen_fn.add(i)
        return f"({i + 1}) {name(i)}"

    with open(path, "w") as f:
        f.write("# callgrind format\nversion: 1\ncreator: gen_cpu_bench.py\npid: 1\n")
        f.write("cmd: bench\npart: 1\n\npositions: line\nevents: Ir Dr Dw\n")
        f.write(f"summary: {total[0]} {total[1]} {total[2]}\n\n")
        f.write("ob=(1) /opt/bench/bin/bench\n")
        hid = nfun + 1
        # the helper's self cost: that of all its calls
        n = sum(helper_calls)
        f.write(f"fl={fl(63)}\nfn=({hid}) bench_helper\n10 {n * helper_cost[0]} {n * helper_cost[1]} {n * helper_cost[2]}\n\n")
        for i in range(nfun):
            f.write(f"fl={fl(i % 63)}\nfn={fn(i)}\n")
            rows = bodies[i]
            line = 10 + (i % 1000)
            f.write(f"{line} {rows[0][0]} {rows[0][1]} {rows[0][2]}\n")
            for r in rows[1:]:
                step = rnd.randrange(0, 3)
                pos = "*" if step == 0 else f"+{step}"
                line += step
                f.write(f"{pos} {r[0]} {r[1]} {r[2]}\n")
            for ch in range(FANOUT * i + 1, min(nfun, FANOUT * i + FANOUT + 1)):
                f.write(f"cfi={fl(ch % 63)}\ncfn={fn(ch)}\ncalls=1 {10 + ch % 1000}\n")
                c = incl[ch]
                f.write(f"* {c[0]} {c[1]} {c[2]}\n")
            if helper_calls[i]:
                f.write(f"cfi=({64})\ncfn=({hid})\ncalls=1 10\n* {helper_cost[0]} {helper_cost[1]} {helper_cost[2]}\n")
            f.write("\n")
        f.write(f"totals: {total[0]} {total[1]} {total[2]}\n")


if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    mb = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    {"perf": perf, "callgrind": callgrind}[kind](out, mb)
