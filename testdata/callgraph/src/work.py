"""A small Python workload for the call-graph tests (testdata/callgraph/README.md):
recursion (fib), mutual recursion (ping/pong), a helper called from several callers
(leaf) and a context manager (__enter__/__exit__ -> release), profiled with cProfile.

    python3 src/work.py work.pstats work.pstats.json
"""
import cProfile
import json
import pstats
import sys
import threading


def leaf(n):
    return sum(range(n))


def fib(n):
    if n < 2:
        return leaf(n + 1)
    return fib(n - 1) + fib(n - 2)


def ping(n):
    return 0 if n == 0 else pong(n - 1) + leaf(3)


def pong(n):
    return 0 if n == 0 else ping(n - 1)


class Guard:
    def __init__(self):
        self.lock = threading.Lock()

    def __enter__(self):
        self.lock.acquire()
        return self

    def __exit__(self, *exc):
        self.release()

    def release(self):
        self.lock.release()


def guarded(n):
    total = 0
    for i in range(n):
        with Guard():
            total += leaf(i)
    return total


def main():
    fib(14)
    ping(40)
    guarded(200)
    leaf(10000)


if __name__ == "__main__":
    out, ref = sys.argv[1], sys.argv[2]
    prof = cProfile.Profile()
    prof.runcall(main)
    prof.dump_stats(out)
    # pstats' own figures per function: file:line(name) -> primitive calls, calls,
    # tottime, cumtime, and per caller the calls' (calls, primitive, tt, ct). Floats
    # are written as repr strings, which parse back to the same double.
    st = pstats.Stats(out)
    ref_rows = {}
    for (f, line, name), (cc, nc, tt, ct, callers) in st.stats.items():
        ref_rows[f"{f}:{line}({name})"] = {
            "primitive_calls": cc,
            "calls": nc,
            "tottime": repr(tt),
            "cumtime": repr(ct),
            "callers": {
                f"{cf}:{cl}({cn})": [v[0], v[1], repr(v[2]), repr(v[3])]
                for (cf, cl, cn), v in callers.items()
            },
        }
    with open(ref, "w") as fh:
        json.dump({"python": sys.version.split()[0], "functions": ref_rows}, fh, indent=1, sort_keys=True)
