# Peer figure: Hatchet reading a literal (json.load + GraphFrame.from_literal).
import sys, json, time, resource
import hatchet as ht
t = time.time()
with open(sys.argv[1]) as f:
    lit = json.load(f)
gf = ht.GraphFrame.from_literal(lit)
print(f"hatchet {time.time()-t:.1f} s, {len(gf.dataframe)} rows, peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MiB")
