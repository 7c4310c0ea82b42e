#!/usr/bin/env python3
"""Writes the small hand-built Nsight Systems SQLite exports in testdata/nsys/.

They mimic the table layouts of `nsys export --type sqlite` at several export schema
versions (docs/formats.md section 7), with a handful of rows each, so that the nsys
reader's schema-drift handling is tested without a real capture:

  schema_3_4_0.sqlite  3.4.0-like columns (no greenContextId), and none of
                       META_DATA_EXPORT, the ENUM_* tables or the session start time
                       (as in older exports): copy and memory kinds go by number.
  schema_3_16.sqlite   3.16.1-like: greenContextId, META_DATA_EXPORT, ENUM_* tables;
                       columns written in a shuffled order (the reader selects by name);
                       two processes whose correlation ids collide, two GPUs, a peer
                       copy and a kernel whose end precedes its start.
  no_kernel.sqlite     no CUPTI_ACTIVITY_KIND_KERNEL table at all; NVTX_EVENTS without
                       textId, MEMCPY without srcKind/dstKind.

Run from the repository root: python3 scripts/make_nsys_fixtures.py
Only the Python standard library is used; the output is deterministic.
"""

import os
import sqlite3

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "nsys")


def gtid(pid, tid):
    """globalTid as nsys writes it: a VM/host byte at bit 48, pid at 24, tid at 0."""
    return (1 << 48) | (pid << 24) | tid


def gpid(pid):
    return (1 << 48) | (pid << 24)


KERNEL_3_4 = [
    "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
    "demangledName", "shortName", "mangledName", "launchType", "cacheConfig",
    "registersPerThread", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
    "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread",
    "localMemoryTotal", "gridId", "sharedMemoryExecuted", "graphNodeId",
    "sharedMemoryLimitConfig",
]
MEMCPY_3_4 = [
    "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
    "bytes", "copyKind", "deprecatedSrcId", "srcKind", "dstKind", "srcDeviceId",
    "srcContextId", "dstDeviceId", "dstContextId", "migrationCause", "graphNodeId",
]
MEMSET_3_4 = [
    "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
    "value", "bytes", "graphNodeId", "memKind",
]
RUNTIME = ["start", "end", "eventClass", "globalTid", "correlationId", "nameId",
           "returnValue", "callchainId"]
NVTX = [
    "start", "end", "eventType", "rangeId", "category", "color", "text", "globalTid",
    "endGlobalTid", "textId", "domainId", "uint64Value", "int64Value", "doubleValue",
    "uint32Value", "int32Value", "floatValue", "jsonTextId", "jsonText",
]
OSRT = ["start", "end", "eventClass", "globalTid", "correlationId", "nameId",
        "returnValue", "nestingLevel", "callchainId"]

TEXT_COLUMNS = {"text", "jsonText", "name", "value", "label", "busLocation", "uuid",
                "chipName", "utcTime", "localTime"}


def create(db, table, columns):
    cols = ", ".join(
        f'"{c}" {"TEXT" if c in TEXT_COLUMNS else "INTEGER"}' for c in columns
    )
    db.execute(f'CREATE TABLE "{table}" ({cols})')


def insert(db, table, columns, rows):
    """rows are dicts; absent keys are NULL."""
    marks = ", ".join("?" for _ in columns)
    names = ", ".join(f'"{c}"' for c in columns)
    for r in rows:
        db.execute(f'INSERT INTO "{table}" ({names}) VALUES ({marks})',
                   [r.get(c) for c in columns])


def table(db, name, columns, rows):
    create(db, name, columns)
    insert(db, name, columns, rows)


class Strings:
    def __init__(self):
        self.ids = {}

    def __call__(self, s):
        if s not in self.ids:
            self.ids[s] = len(self.ids)
        return self.ids[s]

    def write(self, db):
        table(db, "StringIds", ["id", "value"],
              [{"id": i, "value": s} for s, i in self.ids.items()])


def kernel(s, start, end, corr, name, pid=1000, device=0, stream=7, **kw):
    row = {
        "start": start, "end": end, "deviceId": device, "contextId": 1,
        "streamId": stream, "correlationId": corr, "globalPid": gpid(pid),
        "demangledName": s(name), "shortName": s(name.split("<")[0]),
        "mangledName": s("_Z" + name.split("<")[0]), "launchType": 1, "cacheConfig": 1,
        "registersPerThread": 32, "gridX": 1, "gridY": 1, "gridZ": 1, "blockX": 128,
        "blockY": 1, "blockZ": 1, "staticSharedMemory": 0, "dynamicSharedMemory": 0,
        "localMemoryPerThread": 0, "localMemoryTotal": 0, "gridId": corr,
        "sharedMemoryExecuted": 0, "sharedMemoryLimitConfig": 0,
    }
    row.update(kw)
    return row


def runtime(s, start, end, corr, name, pid=1000, tid=1000, cls=0):
    return {"start": start, "end": end, "eventClass": cls, "globalTid": gtid(pid, tid),
            "correlationId": corr, "nameId": s(name), "returnValue": 0}


def nvtx(start, end, ty, pid=1000, tid=1000, text=None, text_id=None):
    return {"start": start, "end": end, "eventType": ty, "text": text,
            "globalTid": gtid(pid, tid), "textId": text_id, "domainId": 0}


def enums(db):
    table(db, "ENUM_CUDA_MEMCPY_OPER", ["id", "name", "label"], [
        {"id": i, "name": "CUDA_MEMCPY_KIND_" + n, "label": l} for i, (n, l) in enumerate([
            ("UNKNOWN", "Unknown"), ("HTOD", "Host-to-Device"), ("DTOH", "Device-to-Host"),
            ("HTOA", "Host-to-Array"), ("ATOH", "Array-to-Host"), ("ATOA", "Array-to-Array"),
            ("ATOD", "Array-to-Device"), ("DTOA", "Device-to-Array"),
            ("DTOD", "Device-to-Device"), ("HTOH", "Host-to-Host"),
            ("PTOP", "Peer-to-Peer"), ("UVM_HTOD", "Unified Host-to-Device"),
            ("UVM_DTOH", "Unified Device-to-Host"), ("UVM_DTOD", "Unified Device-to-Device"),
        ])])
    table(db, "ENUM_CUDA_MEM_KIND", ["id", "name", "label"], [
        {"id": i, "name": "CUDA_MEMOPR_MEMORY_KIND_" + l.upper().replace(" ", "_"), "label": l}
        for i, l in enumerate(["Pageable", "Pinned", "Device", "Array", "Managed",
                               "Device Static", "Managed Static", "Unknown"])])


def schema_3_4_0(db):
    s = Strings()
    main, worker = 1000, 1001
    table(db, "CUPTI_ACTIVITY_KIND_RUNTIME", RUNTIME, [
        runtime(s, 2000, 2500, 10, "cudaLaunchKernel_v7000"),
        runtime(s, 6500, 7000, 11, "cudaMemcpyAsync_v3020"),
        runtime(s, 7100, 7200, 12, "cuLaunchKernel", cls=1),
        runtime(s, 7300, 7400, 13, "cudaMemsetAsync_v3020"),
    ])
    table(db, "CUPTI_ACTIVITY_KIND_KERNEL", KERNEL_3_4, [
        kernel(s, 3000, 5000, 10, "void gemm_kernel<float>(float *)", gridX=4, gridY=2,
               registersPerThread=40, staticSharedMemory=1024, dynamicSharedMemory=2048),
        # A kernel known only by its short name.
        kernel(s, 9000, 9500, 12, "relu_kernel", demangledName=None, mangledName=None),
        # Its launch is not in the export: it goes under "<unattributed> stream 9".
        kernel(s, 11000, 12000, 99, "orphan_kernel", stream=9),
    ])
    # copyKind 1 = HtoD; memory kinds 0 = Pageable, 2 = Device (nsys numbering).
    table(db, "CUPTI_ACTIVITY_KIND_MEMCPY", MEMCPY_3_4, [
        {"start": 7000, "end": 9000, "deviceId": 0, "contextId": 1, "streamId": 7,
         "correlationId": 11, "globalPid": gpid(main), "bytes": 4000, "copyKind": 1,
         "srcKind": 0, "dstKind": 2},
    ])
    table(db, "CUPTI_ACTIVITY_KIND_MEMSET", MEMSET_3_4, [
        {"start": 9600, "end": 9700, "deviceId": 0, "contextId": 1, "streamId": 7,
         "correlationId": 13, "globalPid": gpid(main), "value": 0, "bytes": 100,
         "memKind": 2},
    ])
    table(db, "NVTX_EVENTS", NVTX, [
        nvtx(None, None, 75, text="mydomain"),  # DomainCreate: not an event
        nvtx(1000, 10000, 59, text="step"),
        nvtx(1500, 6000, 59, text_id=s("forward")),
        nvtx(4000, None, 34, text="checkpoint"),  # a mark
        nvtx(500, 800, 60, tid=worker, text="io"),  # a start/end range
        nvtx(11000, None, 59, text="epilogue"),  # never popped
    ])
    table(db, "OSRT_API", OSRT, [
        {"start": 100, "end": 400, "eventClass": 27, "globalTid": gtid(main, worker),
         "correlationId": 0, "nameId": s("pthread_cond_wait"), "returnValue": 0,
         "nestingLevel": 0},
    ])
    table(db, "ThreadNames", ["nameId", "priority", "globalTid"], [
        {"nameId": s("python"), "priority": 10, "globalTid": gtid(main, main)},
        {"nameId": s("worker"), "priority": 10, "globalTid": gtid(main, worker)},
        {"nameId": s("unused thread"), "priority": 10, "globalTid": gtid(main, 1002)},
    ])
    table(db, "PROCESSES", ["globalPid", "pid", "name"],
          [{"globalPid": gpid(main), "pid": main, "name": "train.py"}])
    table(db, "TARGET_INFO_GPU", ["id", "name", "busLocation", "totalMemory", "smCount"],
          [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "busLocation": "0000:07:00.0",
            "totalMemory": 42505273344, "smCount": 108}])
    s.write(db)


def schema_3_16(db):
    s = Strings()
    a, b = 2000, 3000
    table(db, "META_DATA_EXPORT", ["name", "value"], [
        {"name": "EXPORT_PRODUCT_NAME", "value": "NVIDIA Nsight Systems"},
        {"name": "EXPORT_PRODUCT_VERSION", "value": "2024.6.1.90"},
        {"name": "EXPORT_SCHEMA_VERSION", "value": "3.16.1"},
        {"name": "EXPORT_SCHEMA_VERSION_MAJOR", "value": "3"},
    ])
    table(db, "TARGET_INFO_SESSION_START_TIME", ["utcEpochNs", "utcTime", "localTime"],
          [{"utcEpochNs": 1733860139400912216, "utcTime": "2024-12-10T19:48:59",
            "localTime": "2024-12-10T11:48:59"}])
    enums(db)
    # Columns in an order no real export uses: the reader must select by name.
    kcols = ["end", "correlationId", "greenContextId"] + [
        c for c in KERNEL_3_4 if c not in ("end", "correlationId")]
    # Both processes use correlation id 1 and 2: ids are per process.
    table(db, "CUPTI_ACTIVITY_KIND_RUNTIME", list(reversed(RUNTIME)), [
        runtime(s, 100, 300, 1, "cudaLaunchKernel_v7000", pid=a, tid=a),
        runtime(s, 150, 350, 1, "cudaLaunchKernelExC_v11060", pid=b, tid=b),
        runtime(s, 400, 500, 2, "cudaMemcpyPeerAsync_v4000", pid=a, tid=a),
        runtime(s, 400, 600, 2, "cudaMemcpyAsync_v3020", pid=b, tid=b),
        runtime(s, 700, 800, 3, "cudaGetDeviceProperties_v2_v12000", pid=a, tid=a),
    ])
    table(db, "CUPTI_ACTIVITY_KIND_KERNEL", kcols, [
        kernel(s, 1000, 1400, 1, "kernel_a", pid=a, device=0, stream=7, greenContextId=0),
        kernel(s, 1000, 1600, 1, "kernel_b", pid=b, device=1, stream=13, greenContextId=0),
        # end before start: dropped with a warning
        kernel(s, 2000, 1990, 5, "broken_kernel", pid=a, device=0, stream=7,
               greenContextId=0),
    ])
    mcols = ["greenContextId"] + MEMCPY_3_4[::-1] + ["virtualAddress"]
    table(db, "CUPTI_ACTIVITY_KIND_MEMCPY", mcols, [
        # Peer copy from device 0 to device 1: 1 MB in 1000 ns = 1000 GB/s.
        {"start": 1500, "end": 2500, "deviceId": 0, "contextId": 1, "streamId": 7,
         "correlationId": 2, "globalPid": gpid(a), "bytes": 1000000, "copyKind": 10,
         "srcKind": 2, "dstKind": 2, "srcDeviceId": 0, "dstDeviceId": 1,
         "srcContextId": 1, "dstContextId": 2, "greenContextId": 0},
        # DtoH into pinned memory.
        {"start": 1700, "end": 1800, "deviceId": 1, "contextId": 2, "streamId": 13,
         "correlationId": 2, "globalPid": gpid(b), "bytes": 400, "copyKind": 2,
         "srcKind": 2, "dstKind": 1, "greenContextId": 0},
    ])
    table(db, "NVTX_EVENTS", NVTX + ["binaryData"], [
        nvtx(50, 900, 59, pid=a, tid=a, text_id=s("iteration")),
        nvtx(50, 900, 59, pid=b, tid=b, text="iteration"),
    ])
    table(db, "ThreadNames", ["nameId", "priority", "globalTid"], [
        {"nameId": s("rank0 old name"), "priority": 5, "globalTid": gtid(a, a)},
        {"nameId": s("rank0"), "priority": 20, "globalTid": gtid(a, a)},
        {"nameId": s("rank1"), "priority": 20, "globalTid": gtid(b, b)},
    ])
    table(db, "TARGET_INFO_GPU", ["vmId", "id", "name", "cuDevice", "chipName"], [
        {"vmId": 1, "id": 1, "name": "NVIDIA H100 80GB HBM3", "cuDevice": 1, "chipName": "GH100"},
        {"vmId": 1, "id": 0, "name": "NVIDIA H100 80GB HBM3", "cuDevice": 0, "chipName": "GH100"},
    ])
    s.write(db)


def no_kernel(db):
    s = Strings()
    main = 4000
    table(db, "META_DATA_EXPORT", ["name", "value"], [
        {"name": "EXPORT_SCHEMA_VERSION", "value": "3.13.2"},
    ])
    table(db, "CUPTI_ACTIVITY_KIND_RUNTIME", RUNTIME, [
        runtime(s, 100, 200, 7, "cudaMemcpy_v3020", pid=main, tid=main),
    ])
    mcols = [c for c in MEMCPY_3_4 if c not in ("srcKind", "dstKind")]
    table(db, "CUPTI_ACTIVITY_KIND_MEMCPY", mcols, [
        {"start": 150, "end": 190, "deviceId": 0, "contextId": 1, "streamId": 7,
         "correlationId": 7, "globalPid": gpid(main), "bytes": 80, "copyKind": 1},
    ])
    table(db, "NVTX_EVENTS", [c for c in NVTX if c != "textId"], [
        nvtx(50, 250, 59, pid=main, tid=main, text="copy phase"),
    ])
    s.write(db)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fill in [("schema_3_4_0.sqlite", schema_3_4_0),
                       ("schema_3_16.sqlite", schema_3_16),
                       ("no_kernel.sqlite", no_kernel)]:
        path = os.path.join(OUT, name)
        if os.path.exists(path):
            os.remove(path)
        db = sqlite3.connect(path)
        fill(db)
        db.commit()
        db.execute("VACUUM")
        db.close()
        print(os.path.relpath(path), os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
