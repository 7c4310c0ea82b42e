#!/usr/bin/env python3
"""Writes small.cubex, a hand-made CUBE4 archive covering what the corpus files do not:
zlib-compressed data (ZCUBEX.DATA), a big-endian index and data, a sparse index,
threads (2 processes x 2 threads), MAXDOUBLE and TAU_ATOMIC, nested metrics (pycubexr refuses derived metrics, so the
unit tests cover those). Deterministic (fixed mtime). small.golden is pycubexr's dump of it:

    python3 testdata/cube/make_small.py testdata/cube/small.cubex
    python3 testdata/cube/pycubexr_dump.py testdata/cube/small.cubex > testdata/cube/small.golden
"""
import io
import struct
import sys
import tarfile
import zlib

ANCHOR = """<?xml version="1.0" encoding="UTF-8"?>
<cube version="4.4">
<attr key="Creator" value="make_small.py"/>
<metrics>
<metric id="0" type="EXCLUSIVE"><disp_name>Visits</disp_name><uniq_name>visits</uniq_name><dtype>UINT64</dtype><uom>occ</uom><url></url><descr>visits</descr></metric>
<metric id="1" type="INCLUSIVE"><disp_name>Time</disp_name><uniq_name>time</uniq_name><dtype>DOUBLE</dtype><uom>sec</uom><url></url><descr>time</descr>
<metric id="2" type="INCLUSIVE"><disp_name>MPI</disp_name><uniq_name>mpi</uniq_name><dtype>DOUBLE</dtype><uom>sec</uom><url></url><descr>MPI time</descr></metric>
</metric>
<metric id="3" type="EXCLUSIVE"><disp_name>Maximum</disp_name><uniq_name>max_time</uniq_name><dtype>MAXDOUBLE</dtype><uom>sec</uom><url></url><descr>max</descr></metric>
<metric id="4" type="EXCLUSIVE"><disp_name>Sizes</disp_name><uniq_name>sizes</uniq_name><dtype>TAU_ATOMIC</dtype><uom>bytes</uom><url></url><descr>message sizes</descr></metric>
</metrics>
<program>
<region id="0" mod="app.c" begin="1" end="50"><name>main</name><mangled_name>main</mangled_name><paradigm>user</paradigm><role>function</role><url></url><descr></descr></region>
<region id="1" mod="app.c" begin="60" end="90"><name>solve</name><mangled_name>_Z5solvev</mangled_name><paradigm>user</paradigm><role>function</role><url></url><descr></descr></region>
<region id="2" mod="MPI" begin="-1" end="-1"><name>MPI_Allreduce</name><mangled_name>MPI_Allreduce</mangled_name><paradigm>mpi</paradigm><role>function</role><url></url><descr></descr></region>
<region id="3" mod="app.c" begin="95" end="99"><name>io &amp; log</name><mangled_name>log</mangled_name><paradigm>user</paradigm><role>function</role><url></url><descr></descr></region>
<cnode id="0" calleeId="0">
<cnode id="1" calleeId="1">
<cnode id="2" calleeId="2">
</cnode>
<cnode id="3" calleeId="3">
</cnode>
</cnode>
<cnode id="4" calleeId="2">
<parameter partype="numeric" parkey="phase" parvalue="2"/>
</cnode>
</cnode>
</program>
<system>
<systemtreenode Id="0"><name>machine test</name><class>machine</class>
<systemtreenode Id="1"><name>node n0</name><class>node</class>
<locationgroup Id="0"><name>MPI Rank 0</name><rank>0</rank><type>process</type>
<location Id="0"><name>Master thread</name><rank>0</rank><type>thread</type></location>
<location Id="1"><name>OMP thread 1</name><rank>1</rank><type>thread</type></location>
</locationgroup>
<locationgroup Id="1"><name>MPI Rank 1</name><rank>1</rank><type>process</type>
<location Id="2"><name>Master thread</name><rank>0</rank><type>thread</type></location>
<location Id="3"><name>OMP thread 1</name><rank>1</rank><type>thread</type></location>
</locationgroup>
</systemtreenode>
</systemtreenode>
</system>
</cube>
"""

NLOC = 4
# Depth-first cnode order: 0 main, 1 solve, 2 MPI_Allreduce, 3 io & log, 4 MPI_Allreduce.
# The wide order (inclusive metrics): 0, 1, 4, 2, 3.


def index(endian, rows=None):
    # pycubexr reads sparse indexes only: a full one stands for dense here (the unit
    # tests cover the dense form).
    rows = list(range(5)) if rows is None else rows
    head = b"CUBEX.INDEX" + struct.pack(endian + "IHB", 1, 0, 3 if rows is None else 1)
    if rows is not None:
        head += struct.pack(endian + "I", len(rows)) + struct.pack(endian + "%di" % len(rows), *rows)
    return head


def plain(endian, fmt, values):
    return b"CUBEX.DATA" + struct.pack(endian + fmt * len(values), *values)


def compressed(endian, fmt, values, per_row):
    rows = [values[i:i + per_row] for i in range(0, len(values), per_row)]
    blocks = [zlib.compress(struct.pack(endian + fmt * len(r), *r)) for r in rows]
    head = struct.pack(endian + "q", len(blocks))
    upos, cpos = 0, 0
    for r, b in zip(rows, blocks):
        head += struct.pack(endian + "qqq", upos, cpos, len(b))
        upos += 8 * len(r)
        cpos += len(b)
    return b"ZCUBEX.DATA" + head + b"".join(blocks)


def files():
    visits = [1, 1, 1, 1,  10, 12, 9, 11,  20, 0, 18, 0,  3, 3, 3, 3,  2, 2, 2, 2]
    # time, inclusive, wide order 0, 1, 4, 2, 3.
    time = [10.0, 9.0, 11.0, 9.5,  8.0, 7.0, 9.0, 8.0,  1.0, 1.5, 0.5, 1.0,
            3.0, 2.0, 4.0, 3.0,  0.25, 0.5, 0.75, 1.0]
    mpi = [4.0, 3.5, 4.5, 3.0,  3.0, 2.0, 4.0, 3.0,  1.0, 1.5, 0.5, 0.0,
           3.0, 2.0, 4.0, 3.0,  0.0, 0.0, 0.0, 0.0]
    # max_time: every row (pycubexr fails on a sparse MAXDOUBLE), two all zero.
    maxt = [0.0, 0.0, 0.0, 0.0,  0.0, 0.0, 0.0, 0.0,  0.5, 0.25, 0.75, 0.125,
            0.0, 0.0, 0.0, 0.0,  0.0625, 0.5, 0.25, 0.0]
    out = {
        "anchor.xml": ANCHOR.encode(),
        "0.index": index("<"),
        "0.data": plain("<", "Q", visits),
        "1.index": index(">"),
        "1.data": compressed(">", "d", time, NLOC),
        "2.index": index("<"),
        "2.data": compressed("<", "d", mpi, 2 * NLOC),
        "3.index": index("<"),
        "3.data": plain("<", "d", maxt),
    }
    # TAU_ATOMIC (count u32, min, max, sum, sum2), sparse: rows 2 and 4.
    tau = b""
    for k in range(2 * NLOC):
        n = k + 1
        tau += struct.pack("<Idddd", n, 8.0 * n, 64.0 * n, 100.0 * n, 1000.0 * n)
    out["4.index"] = index("<", [2, 4])
    out["4.data"] = b"CUBEX.DATA" + tau
    return out


def main(path):
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in files().items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1700000000
            info.mode = 0o600
            t.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main(sys.argv[1])
