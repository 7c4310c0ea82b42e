#!/usr/bin/env python3
"""Writes testdata/rocm/rocpd.db: a small rocprofv3 rocpd database. No AMD GPU here, so
the rows are made up; the layout follows rocprofiler-sdk's rocpd schema (schema
version 3, `source/share/rocprofiler-sdk-rocpd/`): tables named `rocpd_<what>_<uuid>`
(only the ones and the columns the `kernels` view needs), timestamps in their own
table, and the `kernels` view with the documented column names (`name`, `start`,
`end`, `agent_type_index`, `queue_id`, `stream_id`, `correlation_id`, `grid_x`, ...)
that grove reads. The SQL here is this script's own, written from the column lists.

Usage: make_rocpd_db.py testdata/rocm/rocpd.db
"""

import os
import sqlite3
import sys

U = "_00000000_0000_0000_0000_000000000000"
path = sys.argv[1]
if os.path.exists(path):
    os.remove(path)
db = sqlite3.connect(path)
db.executescript(f"""
CREATE TABLE rocpd_metadata{U} (id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
CREATE TABLE rocpd_string{U} (id INTEGER PRIMARY KEY, guid TEXT, string TEXT);
CREATE TABLE rocpd_info_agent{U} (id INTEGER PRIMARY KEY, guid TEXT, type TEXT,
    absolute_index INTEGER, logical_index INTEGER, type_index INTEGER, name TEXT);
CREATE TABLE rocpd_info_kernel_symbol{U} (id INTEGER PRIMARY KEY, guid TEXT,
    kernel_name TEXT, display_name TEXT, group_segment_size INTEGER,
    private_segment_size INTEGER, sgpr_count INTEGER, arch_vgpr_count INTEGER,
    accum_vgpr_count INTEGER);
CREATE TABLE rocpd_track{U} (id INTEGER PRIMARY KEY, guid TEXT, pid INTEGER,
    tid INTEGER, agent_id INTEGER, queue_id INTEGER, stream_id INTEGER);
CREATE TABLE rocpd_timestamp{U} (id INTEGER PRIMARY KEY, guid TEXT, value BIGINT);
CREATE TABLE rocpd_event{U} (id INTEGER PRIMARY KEY, guid TEXT, correlation_id INTEGER);
CREATE TABLE rocpd_kernel_dispatch{U} (id INTEGER PRIMARY KEY, guid TEXT,
    track_id INTEGER, kernel_id INTEGER, dispatch_id INTEGER, start_id INTEGER,
    end_id INTEGER, private_segment_size INTEGER, group_segment_size INTEGER,
    workgroup_size_x INTEGER, workgroup_size_y INTEGER, workgroup_size_z INTEGER,
    grid_size_x INTEGER, grid_size_y INTEGER, grid_size_z INTEGER, event_id INTEGER);
CREATE VIEW kernels AS SELECT
    K.id, K.guid, T.pid, T.tid, S.display_name AS name, T.agent_id,
    A.absolute_index AS agent_absolute_index, A.logical_index AS agent_logical_index,
    A.type_index AS agent_type_index, A.type AS agent_type, K.kernel_id, K.dispatch_id,
    T.queue_id, T.stream_id, DS.value AS start, DE.value AS end,
    (DE.value - DS.value) AS duration, K.grid_size_x AS grid_x, K.grid_size_y AS grid_y,
    K.grid_size_z AS grid_z, K.workgroup_size_x AS workgroup_x,
    K.workgroup_size_y AS workgroup_y, K.workgroup_size_z AS workgroup_z,
    K.group_segment_size AS lds_size, K.private_segment_size AS scratch_size,
    S.sgpr_count, S.arch_vgpr_count, S.accum_vgpr_count, E.correlation_id
  FROM rocpd_kernel_dispatch{U} K
  JOIN rocpd_track{U} T ON T.id = K.track_id
  JOIN rocpd_info_agent{U} A ON A.id = T.agent_id
  JOIN rocpd_info_kernel_symbol{U} S ON S.id = K.kernel_id
  JOIN rocpd_timestamp{U} DS ON DS.id = K.start_id
  JOIN rocpd_timestamp{U} DE ON DE.id = K.end_id
  JOIN rocpd_event{U} E ON E.id = K.event_id;
""")
db.execute(f"INSERT INTO rocpd_metadata{U} VALUES (1, 'schema_version', '3')")
# Agent 1 is the CPU; agents 2 and 3 are GPUs 0 and 1.
db.executemany(f"INSERT INTO rocpd_info_agent{U} VALUES (?,?,?,?,?,?,?)", [
    (1, "g", "CPU", 0, 0, 0, "AMD EPYC"),
    (2, "g", "GPU", 1, 1, 0, "gfx90a"),
    (3, "g", "GPU", 2, 2, 1, "gfx90a"),
])
db.executemany(f"INSERT INTO rocpd_info_kernel_symbol{U} VALUES (?,?,?,?,?,?,?,?,?)", [
    (1, "g", "_Z15matrixTransposePfS_i.kd", "matrixTranspose(float*, float*, int)", 0, 0, 16, 8, 0),
    (2, "g", "_Z10vector_addIfEvPKT_S2_PS0_i.kd", "void vector_add<float>(float const*, float const*, float*, int)", 1024, 0, 24, 12, 0),
])
db.executemany(f"INSERT INTO rocpd_track{U} VALUES (?,?,?,?,?,?,?)", [
    (1, "g", 41230, 41230, 2, 1, 0),
    (2, "g", 41230, 41231, 3, 2, 0),
])
rows = [  # (track, kernel, start, end)
    (1, 1, 1_000_000, 1_004_000),
    (1, 2, 1_005_000, 1_006_500),
    (1, 1, 1_007_000, 1_011_000),
    (2, 2, 1_002_000, 1_003_000),
    (2, 2, 1_004_000, 1_005_200),
]
for i, (track, kernel, b, e) in enumerate(rows, 1):
    db.execute(f"INSERT INTO rocpd_timestamp{U} VALUES (?,?,?)", (2 * i - 1, "g", b))
    db.execute(f"INSERT INTO rocpd_timestamp{U} VALUES (?,?,?)", (2 * i, "g", e))
    db.execute(f"INSERT INTO rocpd_event{U} VALUES (?,?,?)", (i, "g", i))
    db.execute(f"INSERT INTO rocpd_kernel_dispatch{U} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
               (i, "g", track, kernel, i, 2 * i - 1, 2 * i, 0, 0, 256, 1, 1, 1048576, 1, 1, i))
db.commit()
db.close()
