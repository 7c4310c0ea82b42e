#!/usr/bin/env python3
"""Writes testdata/rocm/results.json: a small trace in the layout legacy rocprof's
`--hip-trace` run writes (rocprofiler `bin/tblextr.py` + `bin/sqlitedb.py`, ROCm
5.x-6.x): `{ "traceEvents":[{}` then `process_name` labels per lane (pid 1 COPY,
2 CPU HIP API, 6+n GPU<n>, 6+n+512 GPU Barriers<n>), then one `X` slice per row with
`pid`/`tid` as numbers, `ts`/`dur` as strings in microseconds, every other table
column as a string arg; `DataFlow` flow pairs (`s`/`t`) from the HIP call to its op;
then `"otherData"` with rocminfo facts. grove has no AMD GPU here: the rows are made
up (12 kernels, 2 copies, their HIP calls), the text layout is rocprof's.

Usage: make_rocprof_trace.py > testdata/rocm/results.json
"""

import sys

PID, TID = 41230, 41230
BASE = 3599977333000000  # ns, as rocprof's clock counts them

kernels = [
    ("void vector_add<float>(float const*, float const*, float*, int)", 0, 4200),
    ("matrixTranspose(float*, float*, int)", 0, 9100),
    ("void vector_add<float>(float const*, float const*, float*, int)", 0, 4100),
    ("reduce_sum(float const*, float*, int)", 1, 2500),
    ("matrixTranspose(float*, float*, int)", 0, 9300),
    ("void vector_add<float>(float const*, float const*, float*, int)", 0, 4300),
    ("reduce_sum(float const*, float*, int)", 1, 2600),
    ("matrixTranspose(float*, float*, int)", 0, 9000),
    ("void vector_add<float>(float const*, float const*, float*, int)", 0, 4000),
    ("reduce_sum(float const*, float*, int)", 1, 2400),
    ("matrixTranspose(float*, float*, int)", 0, 9200),
    ("reduce_sum(float const*, float*, int)", 1, 2700),
]
copies = [("CopyHostToDevice", 50000, 0), ("CopyDeviceToHost", 30000, 400000)]

out = ['{ "traceEvents":[{}\n']
labels = [(2, "CPU HIP API"), (1, "COPY"), (6, "GPU0"), (518, "GPU Barriers0")]
for i, (pid, label) in enumerate(labels):
    out.append(',{"args":{"name":"%s"},"ph":"M","pid":%s,"name":"process_name","sort_index":%d}\n'
               % (label, pid, i))

def slice_(name, pid, tid, b, e, args):
    vals = ['"name":"%s"' % name, '"pid":%d' % pid, '"tid":%d' % tid,
            '"ts":"%d"' % (b // 1000), '"dur":"%d"' % max((e - b) // 1000, 1)]
    a = ",\n    ".join('"%s":"%s"' % kv for kv in args)
    return ',{"ph":"X",%s,\n  "args":{\n    %s\n  }\n}\n' % (",".join(vals), a)

api, ops, flows = [], [], []
t = BASE + 100000
corr = 0
for name, stream, dur in kernels:
    corr += 1
    b, e = t, t + 6000
    api.append(slice_("hipLaunchKernel", 2, TID, b, e, [
        ("BeginNs", b), ("EndNs", e), ("pid", PID), ("tid", TID), ("Name", "hipLaunchKernel"),
        ("args", "hipLaunchKernel(function_address=0x201000, numBlocks={256, 1, 1}, "
                 "dimBlocks={256, 1, 1}, args=0x7ffd1e4a8f90, sharedMemBytes=0, stream=%d)" % stream),
        ("Data", ""), ("DurationNs", e - b)]))
    kb = e + 20000
    ke = kb + dur
    ops.append(slice_(name, 6, TID, kb, ke, [
        ("BeginNs", kb), ("EndNs", ke), ("dev-id", 0), ("queue-id", stream), ("Name", name),
        ("pid", PID), ("tid", TID), ("stream-id", stream), ("Data", ""), ("DurationNs", ke - kb)]))
    flows.append(',{"ts":%d,"ph":"s","cat":"DataFlow","id":%d,"pid":%d,"tid":%d,"name":"dep"}\n'
                 % (b // 1000, corr, 2, TID))
    flows.append(',{"ts":%d,"ph":"t","cat":"DataFlow","id":%d,"pid":%d,"tid":%d,"name":"dep"}\n'
                 % (kb // 1000, corr, 6, stream))
    t = ke + 30000
for name, dur, at in copies:
    b = BASE + at + 1000
    e = b + dur
    ops.append(slice_(name, 1, TID, b, e, [
        ("BeginNs", b), ("EndNs", e), ("dev-id", 0), ("queue-id", 0), ("Name", name),
        ("pid", PID), ("tid", TID), ("stream-id", 0), ("Data", ""), ("DurationNs", e - b)]))

out += api + ops + flows
out.append('],\n"otherData": {\n')
out.append('    "Agent 2.Name": "gfx90a",\n')
out.append('    "Agent 2.Marketing Name": "AMD Instinct MI210"\n')
out.append("  }\n")
out.append("}")
sys.stdout.write("".join(out))
