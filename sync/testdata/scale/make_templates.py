"""Writes the template tables of the sync scale benchmark with delta-rs.

usage: make_templates.py OUT_DIR COUNT

Template i has 10-50 columns (ints, strings, doubles, booleans, timestamps),
5-20 commits (appends of a few rows; the first sets two table properties), is partitioned by its first string column when i % 4 == 0, and
has a checkpoint at its latest version when i % 3 == 0 (a third of them).
The benchmark hard-links the templates' _delta_log files into N tables.
"""
import datetime
import os
import sys

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake


def schema(i):
    ncols = 10 + (i * 17) % 41
    kinds = [pa.int64(), pa.string(), pa.float64(), pa.bool_(), pa.timestamp("us", tz="UTC")]
    fields = [pa.field("id", pa.int64(), nullable=False), pa.field("part", pa.string())]
    for c in range(ncols - 2):
        fields.append(pa.field(f"col_{c}", kinds[(i + c) % len(kinds)]))
    return pa.schema(fields)


def batch(sch, commit, rows=3):
    cols = []
    for f in sch:
        t = f.type
        if pa.types.is_int64(t):
            cols.append(pa.array([commit * rows + r for r in range(rows)], t))
        elif pa.types.is_string(t):
            cols.append(pa.array([f"p{(commit + r) % 3}" for r in range(rows)], t))
        elif pa.types.is_floating(t):
            cols.append(pa.array([r * 0.5 for r in range(rows)], t))
        elif pa.types.is_boolean(t):
            cols.append(pa.array([r % 2 == 0 for r in range(rows)], t))
        else:
            base = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
            cols.append(pa.array([base + datetime.timedelta(hours=commit + r) for r in range(rows)], t))
    return pa.Table.from_arrays(cols, schema=sch)


def main():
    out, count = sys.argv[1], int(sys.argv[2])
    for i in range(count):
        path = os.path.join(out, f"t{i:03d}")
        if os.path.exists(os.path.join(path, "_delta_log")):
            continue
        sch = schema(i)
        commits = 5 + (i * 7) % 16
        part = ["part"] if i % 4 == 0 else None
        for c in range(commits):
            conf = {"delta.logRetentionDuration": f"interval {30 + i} days", "delta.checkpointInterval": "1000"} if c == 0 else None
            write_deltalake(path, batch(sch, c), mode="append", partition_by=part, configuration=conf)
        if i % 3 == 0:
            DeltaTable(path).create_checkpoint()
    print("ok")


if __name__ == "__main__":
    main()
