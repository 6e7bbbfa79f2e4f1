"""Write the delta-rs tables of deltasync's registration tests
(sync/register_e2e_test.go, sync/hms_register_test.go), one table per call.

Usage: python register.py TABLE_DIR KIND

KIND is one of:
  plain         an unpartitioned table (id long, name string, amount
                double) with a name, a description and a property
  partitioned   a table partitioned by `part`, with a description
  checkpointed  an unpartitioned table with four commits and a
                checkpoint at the last

It prints one JSON line: {"kind": KIND, "version": N}.
"""

import json
import os
import sys

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake


def rows(start, n):
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "name": pa.array([f"n{i}" for i in range(start, start + n)], pa.string()),
        "amount": pa.array([i / 4 for i in range(start, start + n)], pa.float64()),
        "part": pa.array(["a" if i % 2 else "b" for i in range(start, start + n)], pa.string()),
    })


def main():
    path, kind = sys.argv[1], sys.argv[2]
    name = os.path.basename(os.path.normpath(path))
    if kind == "plain":
        write_deltalake(path, rows(0, 5), name=name, description=f"{name} written by delta-rs",
                        configuration={"delta.logRetentionDuration": "interval 30 days"})
    elif kind == "partitioned":
        write_deltalake(path, rows(0, 6), partition_by=["part"], name=name,
                        description=f"{name} partitioned by part")
    elif kind == "checkpointed":
        write_deltalake(path, rows(0, 3), name=name)
        for i in range(1, 4):
            write_deltalake(path, rows(i * 10, 3), mode="append")
        DeltaTable(path).create_checkpoint()
    else:
        sys.exit(f"unknown kind {kind!r}")
    print(json.dumps({"kind": kind, "version": DeltaTable(path).version()}))


if __name__ == "__main__":
    main()
