#!/usr/bin/env python3
"""Loads Thicket JSON written by grove (`grove tree ... --format thicket`, `export
thicket FILE`) with llnl-thicket's own `Thicket.from_json` and prints what Thicket
sees, as one JSON object: node count, profile count, the profile ids' labels
(`profile_mapping`), per-metric totals over all dataframe rows, the exclusive and
inclusive metric lists and `mpi.world.size` per label when the metadata has it.

    python3 scripts/thicket_roundtrip.py OUT.thicket.json

tests/thicket_export.rs runs it (and skips when python3 or thicket is missing) and
compares with testdata/thicket/goldens.json, which scripts/thicket_goldens.py wrote
from Thicket's own to_json: the round trip through grove must not change them.
Exit status 3 when thicket cannot be imported.
"""

import json
import sys
import warnings

warnings.filterwarnings("ignore")
try:
    import contextlib
    import io

    # thicket prints a notice about optional plotting packages on import.
    with contextlib.redirect_stdout(io.StringIO()):
        import thicket as tt
except Exception:  # noqa: BLE001 - any import failure means "not installed here"
    sys.exit(3)


def main():
    with open(sys.argv[1]) as f:
        th = tt.Thicket.from_json(f.read())
    df = th.dataframe
    mapping = {str(k): v for k, v in th.profile_mapping.items()}
    metrics = list(th.exc_metrics) + list(th.inc_metrics)
    out = {
        "nodes": len(list(th.graph.traverse())),
        "profiles": len(th.profile),
        "labels": sorted(mapping.values()),
        "exclusive_metrics": sorted(th.exc_metrics),
        "inclusive_metrics": sorted(th.inc_metrics),
        "totals": {m: round(float(df[m].sum()), 6) for m in sorted(metrics)},
    }
    if "mpi.world.size" in th.metadata.columns:
        out["mpi.world.size"] = {
            mapping[str(p)]: int(v) for p, v in th.metadata["mpi.world.size"].items()
        }
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
