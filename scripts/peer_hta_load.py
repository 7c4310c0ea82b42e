# Peer figure: HTA 0.5.0 loading a trace (TraceAnalysis parses every rank's JSON).
import sys, time, os, shutil, tempfile, resource
from hta.trace_analysis import TraceAnalysis
src = sys.argv[1]
d = tempfile.mkdtemp(prefix="hta_")
os.symlink(os.path.abspath(src), os.path.join(d, "rank0.json"))
t = time.time()
ta = TraceAnalysis(trace_dir=d)
print(f"HTA load {time.time()-t:.1f} s, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MiB")
