"""A delta-rs (`deltalake`) writer for deltasync's kill -9 soak
(sync/soak_test.go).

Usage:
  python soak_writer.py create ROOT N      create tables t00..t(N-1) under ROOT
  python soak_writer.py run ROOT N SEED    commit to random tables until the
                                           file ROOT/STOP exists

`run` makes one commit at a time on a random table, cycling through:
append rows, add a column (schema_mode="merge"), set properties, set the
description. Between commits it sleeps 50-250 ms. For every commit it
prints one JSON line {"table": ..., "op": ..., "version": N} and flushes.
"""

import json
import os
import random
import sys
import time

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake


def table_dir(root, i):
    return os.path.join(root, f"t{i:02d}")


def rows(dt, n=3):
    version = dt.version() + 1
    fields = [f.name for f in dt.schema().fields]
    cols = {}
    for name in fields:
        if name == "id":
            cols[name] = pa.array(range(version * 10, version * 10 + n), pa.int64())
        else:
            cols[name] = pa.array([version] * n, pa.int64())
    return pa.table(cols)


def create(root, n):
    for i in range(n):
        path = table_dir(root, i)
        write_deltalake(path, pa.table({"id": pa.array([0, 1, 2], pa.int64())}),
                        name=f"t{i:02d}", description=f"t{i:02d} created by delta-rs",
                        configuration={"delta.logRetentionDuration": "interval 30 days"})


def commit(path, op):
    dt = DeltaTable(path)
    version = dt.version() + 1
    if op == "append":
        write_deltalake(path, rows(dt), mode="append")
    elif op == "add_column":
        data = rows(dt)
        data = data.append_column(f"c{version}", pa.array([version] * data.num_rows, pa.int64()))
        write_deltalake(path, data, mode="append", schema_mode="merge")
    elif op == "set_property":
        dt.alter.set_table_properties({"soak.step": str(version), "owner.team": f"team{version % 3}"},
                                      raise_if_not_exists=False)
    elif op == "set_description":
        dt.alter.set_table_description(f"{os.path.basename(path)} described at v{version}")
    else:
        raise ValueError(op)
    return DeltaTable(path).version()


def run(root, n, seed):
    rnd = random.Random(seed)
    ops = ["append", "add_column", "set_property", "append", "set_description"]
    stop = os.path.join(root, "STOP")
    k = 0
    while not os.path.exists(stop):
        i = rnd.randrange(n)
        op = ops[k % len(ops)]
        k += 1
        version = commit(table_dir(root, i), op)
        print(json.dumps({"table": f"t{i:02d}", "op": op, "version": version}), flush=True)
        time.sleep(rnd.uniform(0.05, 0.25))


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("create", "run"):
        sys.exit(__doc__)
    root, n = sys.argv[2], int(sys.argv[3])
    if sys.argv[1] == "create":
        create(root, n)
    else:
        run(root, n, int(sys.argv[4]) if len(sys.argv) > 4 else 1)


if __name__ == "__main__":
    main()
