"""Evolve a Delta table with delta-rs (the `deltalake` package), one commit
per call, for deltasync's end-to-end test (sync/e2e_deltars_test.go).

Usage: python evolve.py TABLE_DIR STEP

STEP is one of:
  create            partitioned table (id, name, part) with a few rows, a
                    name and description, and the properties
                    delta.logRetentionDuration and
                    delta.deletedFileRetentionDuration (deltalake 1.6
                    accepts only known delta.* keys at create)
  create_scored     as create, with the column `score` from the start
                    (a table written again at the same path with other
                    columns)
  append            append rows (a data-only commit)
  add_column        append rows with a new column `score` (schema_mode=merge)
  set_property      change delta.logRetentionDuration, set owner.team and
                    e2e.step (the version committed)
  unset_property    remove delta.deletedFileRetentionDuration with a
                    hand-written commit
                    (deltalake 1.6 has no API to remove a property)
  upgrade_protocol  add the deletionVectors table feature (3/7)
  set_description   set the description to "<name> described at vN"

It prints one JSON line: {"step": STEP, "version": N} with the version the
step committed; it exits non-zero if the step did not make exactly one
commit.
"""

import json
import os
import sys
import time

import pyarrow as pa
from deltalake import DeltaTable, TableFeatures, write_deltalake


def rows(start, n, score=False):
    cols = {
        "id": pa.array(range(start, start + n), pa.int64()),
        "name": pa.array([f"n{i}" for i in range(start, start + n)], pa.string()),
        "part": pa.array(["a" if i % 2 else "b" for i in range(start, start + n)], pa.string()),
    }
    if score:
        cols["score"] = pa.array([i / 2 for i in range(start, start + n)], pa.float64())
    return pa.table(cols)


def next_rows(path, score=False):
    dt = DeltaTable(path)
    score = score or "score" in [f.name for f in dt.schema().fields]
    return rows((dt.version() + 1) * 10, 3, score=score)


def create(path, score=False):
    name = os.path.basename(os.path.normpath(path))
    write_deltalake(path, rows(0, 6, score=score), partition_by=["part"], name=name,
                    description=f"{name} created by delta-rs",
                    configuration={"delta.logRetentionDuration": "interval 30 days",
                                   "delta.deletedFileRetentionDuration": "interval 14 days"})


def create_scored(path):
    create(path, score=True)


def append(path):
    write_deltalake(path, next_rows(path), mode="append")


def add_column(path):
    write_deltalake(path, next_rows(path, score=True), mode="append", schema_mode="merge")


def set_property(path):
    version = DeltaTable(path).version()
    DeltaTable(path).alter.set_table_properties(
        {"delta.logRetentionDuration": "interval 7 days", "owner.team": "analytics",
         "e2e.step": str(version + 1)}, raise_if_not_exists=False)


def unset_property(path, key="delta.deletedFileRetentionDuration"):
    """Commit a metaData without `key`, as Spark's ALTER TABLE UNSET
    TBLPROPERTIES does. The latest metaData must be in a JSON commit (this
    test never checkpoints)."""
    log = os.path.join(path, "_delta_log")
    version = DeltaTable(path).version()
    for v in range(version, -1, -1):
        commit = os.path.join(log, f"{v:020d}.json")
        with open(commit) as f:
            meta = None
            for line in f:
                action = json.loads(line)
                if "metaData" in action:
                    meta = action["metaData"]
        if meta is None:
            continue
        if key not in meta["configuration"]:
            raise RuntimeError(f"{path}: property {key} is not set")
        del meta["configuration"][key]
        lines = [{"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "UNSET TBLPROPERTIES",
                                 "operationParameters": {"properties": json.dumps([key])},
                                 "engineInfo": "deltasync-e2e"}},
                 {"metaData": meta}]
        with open(os.path.join(log, f"{version + 1:020d}.json"), "x") as out:
            out.write("".join(json.dumps(line) + "\n" for line in lines))
        return
    raise RuntimeError(f"{path}: no metaData in any JSON commit")


def upgrade_protocol(path):
    DeltaTable(path).alter.add_feature(TableFeatures.DeletionVectors, allow_protocol_versions_increase=True)


def set_description(path):
    dt = DeltaTable(path)
    name = os.path.basename(os.path.normpath(path))
    dt.alter.set_table_description(f"{name} described at v{dt.version() + 1}")


STEPS = {f.__name__: f for f in (create, create_scored, append, add_column, set_property, unset_property,
                                 upgrade_protocol, set_description)}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in STEPS:
        sys.exit(f"usage: evolve.py TABLE_DIR {{{'|'.join(STEPS)}}}")
    path, step = sys.argv[1], sys.argv[2]
    before = -1 if step.startswith("create") else DeltaTable(path).version()
    STEPS[step](path)
    after = DeltaTable(path).version()
    if after != before + 1:
        sys.exit(f"{step}: version went from {before} to {after}, want one commit")
    print(json.dumps({"step": step, "version": after}))


if __name__ == "__main__":
    main()
