"""One destructive delta-rs commit on a table evolve.py created: a column
dropped, a type changed, or the partitioning changed (each an overwrite
with schema_mode="overwrite", which replaces the schema and partitioning).

usage: destructive.py TABLE_DIR {drop_column|change_type|repartition}
"""
import json
import sys

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake


def current(path):
    return DeltaTable(path).to_pyarrow_table()


def drop_column(path):
    t = current(path).drop_columns(["name"])
    write_deltalake(path, t, mode="overwrite", schema_mode="overwrite", partition_by=["part"])


def change_type(path):
    t = current(path)
    t = t.set_column(t.schema.get_field_index("id"), "id", pa.array([str(v) for v in t["id"].to_pylist()], pa.string()))
    write_deltalake(path, t, mode="overwrite", schema_mode="overwrite", partition_by=["part"])


def repartition(path):
    write_deltalake(path, current(path), mode="overwrite", schema_mode="overwrite", partition_by=["name"])


STEPS = {f.__name__: f for f in (drop_column, change_type, repartition)}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in STEPS:
        sys.exit(f"usage: destructive.py TABLE_DIR {{{'|'.join(STEPS)}}}")
    path, step = sys.argv[1], sys.argv[2]
    before = DeltaTable(path).version()
    STEPS[step](path)
    after = DeltaTable(path).version()
    if after != before + 1:
        sys.exit(f"{step}: version went from {before} to {after}, want one commit")
    print(json.dumps({"step": step, "version": after}))


if __name__ == "__main__":
    main()
