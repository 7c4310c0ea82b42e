#!/usr/bin/env python3
"""Writes testdata/rocm/41230_results.json: a small rocprofv3 `--kernel-trace
--memory-copy-trace --output-format json` file (`<pid>_results.json`), in the layout
of rocprofiler-sdk's JSON writer (ROCm 6.4 / rocprofiler-sdk 0.6, source/lib/output/
generateJSON.cpp and the cereal `save` functions of rocprofiler-sdk/cxx/
serialization.hpp): one top-level key `rocprofiler-sdk-tool` holding a list with one
object per process: `metadata`, `agents`, `counters`, `strings`, `code_objects`,
`kernel_symbols`, `host_functions`, `summary`, `callback_records`, `buffer_records`.

grove has no AMD GPU here: the dispatches are the four of testdata/rocm/
kernel_trace.csv (same agents, queues, names, times), so their totals can be compared;
two memory copies are added. Fields grove does not read are written with plausible
values so the file keeps the writer's shape.

Usage: make_rocprofv3_json.py > testdata/rocm/41230_results.json
"""

import json
import sys

PID, TID = 41230, 41230
# Agent handles are opaque numbers; CSV and grove name an agent by its node_id.
AGENTS = [(0x5a5a10, 0, 1, "AMD EPYC 7763", "CPU"),
          (0x5a5b20, 1, 2, "gfx90a", "AMD Instinct MI210"),
          (0x5a5c30, 2, 2, "gfx90a", "AMD Instinct MI210")]
HANDLE = {node: h for h, node, _, _, _ in AGENTS}

SYMBOLS = {
    7: ("_Z15matrixTransposePfS_i", "_Z15matrixTransposePfS_i.kd",
        "matrixTranspose(float*, float*, int)", 0, 8, 16),
    8: ("_Z10vector_addIfEvPKT_S2_PS0_i",
        "void vector_add<float>(float const*, float const*, float*, int)",
        "void vector_add<float>(float const*, float const*, float*, int)", 1024, 12, 24),
}

# (agent node, queue, kernel id, correlation, start, end, workgroup, grid) as in
# kernel_trace.csv
DISPATCHES = [
    (1, 1, 7, 1, 1000000, 1004000, (4, 4, 1), (1024, 1024, 1)),
    (1, 1, 8, 2, 1005000, 1006500, (256, 1, 1), (1048576, 1, 1)),
    (1, 1, 7, 3, 1007000, 1011000, (4, 4, 1), (1024, 1024, 1)),
    (2, 3, 8, 4, 1002000, 1003000, (256, 1, 1), (1048576, 1, 1)),
]
# (operation, dst node, src node, correlation, start, end, bytes)
COPIES = [(1, 1, 0, 5, 900000, 950000, 4194304), (2, 0, 1, 6, 1012000, 1042000, 4194304)]


def dim3(v):
    return {"x": v[0], "y": v[1], "z": v[2]}


def agent(handle, node, typ, name, product):
    return {"size": 488, "id": {"handle": handle}, "type": typ, "cpu_cores_count": 0,
            "simd_count": 416 if typ == 2 else 0, "wave_front_size": 64 if typ == 2 else 0,
            "name": name, "vendor_name": "AMD", "product_name": product,
            "model_name": "aldebaran" if typ == 2 else "",
            "node_id": node, "logical_node_id": node,
            "logical_node_type_id": node - 1 if typ == 2 else 0,
            "mem_banks": [], "caches": [], "io_links": []}


def symbol(kid, s):
    raw, formatted, demangled, lds, vgpr, sgpr = s
    return {"size": 88, "kernel_id": kid, "code_object_id": 1, "kernel_name": raw + ".kd",
            "kernel_object": 0x7f0000001000 + kid * 0x100, "kernarg_segment_size": 32,
            "kernarg_segment_alignment": 8, "group_segment_size": lds,
            "private_segment_size": 0, "sgpr_count": sgpr, "arch_vgpr_count": vgpr,
            "accum_vgpr_count": 0, "kernel_code_entry_byte_offset": 5888,
            "kernel_address": {"handle": 0x7f0000002000 + kid * 0x100},
            "formatted_kernel_name": formatted, "demangled_kernel_name": demangled,
            "truncated_kernel_name": demangled.split("(")[0].split(" ")[-1]}


def dispatch(i, d):
    node, queue, kid, corr, b, e, wg, grid = d
    return {"size": 160, "kind": 8, "operation": 0, "thread_id": TID,
            "correlation_id": {"internal": corr, "external": 0},
            "start_timestamp": b, "end_timestamp": e,
            "dispatch_info": {"size": 64, "agent_id": {"handle": HANDLE[node]},
                              "queue_id": {"handle": queue}, "kernel_id": kid,
                              "dispatch_id": i + 1, "private_segment_size": 0,
                              "group_segment_size": SYMBOLS[kid][3],
                              "workgroup_size": dim3(wg), "grid_size": dim3(grid)}}


def copy(c):
    op, dst, src, corr, b, e, nbytes = c
    return {"size": 72, "kind": 11, "operation": op, "thread_id": TID,
            "correlation_id": {"internal": corr, "external": 0},
            "start_timestamp": b, "end_timestamp": e,
            "dst_agent_id": {"handle": HANDLE[dst]}, "src_agent_id": {"handle": HANDLE[src]},
            "bytes": nbytes}


process = {
    "metadata": {"node": {"hostname": "mi210-node", "system_name": "Linux",
                          "release": "5.15.0", "version": "#1 SMP", "machine": "x86_64"},
                 "pid": PID, "init_time": 800000, "fini_time": 1100000,
                 "command": ["./transpose"], "config": {"kernel_trace": True,
                                                        "memory_copy_trace": True}},
    "agents": [agent(*a) for a in AGENTS],
    "counters": [],
    "strings": {
        "callback_records": [],
        "buffer_records": [
            {"kind": "KERNEL_DISPATCH", "operations": ["KERNEL_DISPATCH_COMPLETE"]},
            {"kind": "MEMORY_COPY", "operations": [
                "MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_DEVICE",
                "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_HOST_TO_HOST",
                "MEMORY_COPY_DEVICE_TO_DEVICE"]},
        ],
        "marker_api": [], "correlation_id": {"external": []},
        "counters": {"dimension_ids": []}, "pc_sample_instructions": [],
        "pc_sample_comments": [], "att_filenames": [], "code_object_snapshot_filenames": [],
    },
    "code_objects": [{"size": 64, "code_object_id": 1, "agent_id": {"handle": HANDLE[1]},
                      "uri": "file:///work/transpose#offset=8192&size=20480",
                      "load_base": 0x7f0000000000, "load_size": 20480, "load_delta": 0,
                      "storage_type": 1, "storage_file": 3}],
    "kernel_symbols": [symbol(k, s) for k, s in sorted(SYMBOLS.items())],
    "host_functions": [],
    "summary": [],
    "callback_records": {"counter_collection": []},
    "buffer_records": {
        "kernel_dispatch": [dispatch(i, d) for i, d in enumerate(DISPATCHES)],
        "hip_api": [], "hsa_api": [], "marker_api": [], "rccl_api": [],
        "memory_copy": [copy(c) for c in COPIES],
        "memory_allocation": [], "scratch_memory": [], "rocdecode_api": [],
        "rocjpeg_api": [], "pc_sample_host_trap": [], "pc_sample_stochastic": [],
    },
}

# cereal indents with four spaces and writes the keys in the writer's order.
json.dump({"rocprofiler-sdk-tool": [process]}, sys.stdout, indent=4)
sys.stdout.write("\n")
