"""Write a Delta table with delta-rs (the `deltalake` package) and dump what
delta-rs reads back at every version, for deltalog's differential test.

Usage: python gen.py OUT_DIR

Writes the tables OUT_DIR/<name> and OUT_DIR/expected.json:
{"deltalake": version, "tables": {name: {"skipped": [...], "versions": [...]}}}
with one object per version {"version", "protocol", "metadata", "schema"} as
seen by DeltaTable(table, version=v). Each step makes one commit; a step the
installed deltalake cannot do is reported in "skipped" instead of failing
the run, so the test still checks the versions that were written.

Tables: "evolve" (partitioned; appends, schema evolution, property,
description and name changes, protocol upgrades, a check constraint, a
classic checkpoint with commits after it, and a property unset by a
hand-written commit since deltalake has no API for it) and "features" (v2Checkpoint,
columnMapping and in-commit timestamps enabled, then a checkpoint).
"""

import json
import os
import sys
import time

import pyarrow as pa
import deltalake
from deltalake import DeltaTable, TableFeatures, write_deltalake
from deltalake.schema import Field, PrimitiveType, StructType


def batch(start, n, extra=False, meta=False):
    cols = {
        "id": pa.array(range(start, start + n), pa.int64()),
        "name": pa.array([f"n{i}" for i in range(start, start + n)], pa.string()),
        "part": pa.array(["a" if i % 2 else "b" for i in range(start, start + n)], pa.string()),
    }
    if extra:
        cols["score"] = pa.array([i / 2 for i in range(start, start + n)], pa.float64())
    if meta:
        cols["meta"] = pa.array([None] * n, pa.struct([("a", pa.int32()), ("b", pa.string())]))
    return pa.table(cols)


def features_steps(path):
    """Feature upgrades on a small unpartitioned table."""
    dt = lambda: DeltaTable(path)  # noqa: E731
    one = lambda i: pa.table({"id": pa.array([i], pa.int64()), "v": pa.array([str(i)], pa.string())})  # noqa: E731
    return [
        ("create", lambda: write_deltalake(path, one(0))),
        ("v2Checkpoint feature", lambda: dt().alter.add_feature(
            TableFeatures.V2Checkpoint, allow_protocol_versions_increase=True)),
        ("columnMapping feature", lambda: dt().alter.add_feature(
            TableFeatures.ColumnMapping, allow_protocol_versions_increase=True)),
        ("enable in-commit timestamps", lambda: dt().alter.set_table_properties(
            {"delta.enableInCommitTimestamps": "true"}, raise_if_not_exists=False)),
        ("append before checkpoint", lambda: write_deltalake(path, one(1), mode="append")),
        ("append after checkpoint", lambda: write_deltalake(path, one(2), mode="append")),
    ]


def steps(path):
    """(label, action) pairs; each action makes exactly one commit."""
    dt = lambda: DeltaTable(path)  # noqa: E731
    return [
        ("create partitioned with name, description, properties",
         lambda: write_deltalake(path, batch(0, 10), partition_by=["part"], name="deltars_diff",
                                 description="first description",
                                 configuration={"delta.appendOnly": "false", "delta.logRetentionDuration": "interval 30 days"})),
        ("append", lambda: write_deltalake(path, batch(10, 10), mode="append")),
        ("schema evolution: append with a new column (schema_mode=merge)",
         lambda: write_deltalake(path, batch(20, 10, extra=True), mode="append", schema_mode="merge")),
        ("change properties", lambda: dt().alter.set_table_properties(
            {"delta.logRetentionDuration": "interval 7 days", "delta.checkpointInterval": "50"},
            raise_if_not_exists=False)),
        ("set description", lambda: dt().alter.set_table_description("second description")),
        ("rename", lambda: dt().alter.set_table_name("deltars_diff_renamed")),
        ("add nested column", lambda: dt().alter.add_columns(
            [Field("meta", StructType([Field("a", PrimitiveType("integer")), Field("b", PrimitiveType("string"))]))])),
        ("protocol upgrade: deletion vectors",
         lambda: dt().alter.add_feature(TableFeatures.DeletionVectors, allow_protocol_versions_increase=True)),
        ("add check constraint", lambda: dt().alter.add_constraint({"id_nonneg": "id >= 0"})),
        ("protocol: timestampNtz feature",
         lambda: dt().alter.add_feature(TableFeatures.TimestampWithoutTimezone, allow_protocol_versions_increase=True)),
        ("append before checkpoint", lambda: write_deltalake(path, batch(30, 5, extra=True, meta=True), mode="append")),
        ("change properties after checkpoint", lambda: dt().alter.set_table_properties(
            {"delta.checkpointInterval": "100", "delta.enableChangeDataFeed": "true"}, raise_if_not_exists=False)),
        ("append after checkpoint", lambda: write_deltalake(path, batch(35, 5, extra=True, meta=True), mode="append")),
        ("unset a property (hand-written commit)", lambda: unset_property(path, "delta.checkpointInterval")),
    ]


def unset_property(path, key):
    """Commit a metaData without `key`, as Spark's ALTER TABLE UNSET
    TBLPROPERTIES does. deltalake 1.6 has no API to remove a table property,
    so the commit is written here; delta-rs then reads it back like any
    other commit. The latest metaData must be in a JSON commit."""
    log = os.path.join(path, "_delta_log")
    version = DeltaTable(path).version()
    for v in range(version, -1, -1):
        commit = os.path.join(log, f"{v:020d}.json")
        if not os.path.exists(commit):
            break
        with open(commit) as f:
            for line in f:
                action = json.loads(line)
                if "metaData" in action:
                    meta = action["metaData"]
                    meta["configuration"].pop(key)
                    lines = [{"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "UNSET TBLPROPERTIES",
                                             "operationParameters": {"properties": json.dumps([key])}}},
                             {"metaData": meta}]
                    with open(os.path.join(log, f"{version + 1:020d}.json"), "x") as out:
                        out.write("".join(json.dumps(l) + "\n" for l in lines))
                    return
    raise RuntimeError("latest metaData is not in a JSON commit")


def dump_version(path, v):
    t = DeltaTable(path, version=v)
    p = t.protocol()
    m = t.metadata()
    return {
        "version": t.version(),
        "protocol": {
            "minReaderVersion": p.min_reader_version,
            "minWriterVersion": p.min_writer_version,
            "readerFeatures": sorted(p.reader_features) if p.reader_features is not None else None,
            "writerFeatures": sorted(p.writer_features) if p.writer_features is not None else None,
        },
        "metadata": {
            "id": m.id,
            "name": m.name,
            "description": m.description,
            "partitionColumns": list(m.partition_columns),
            "configuration": dict(m.configuration),
            "createdTime": m.created_time,
        },
        "schema": json.loads(t.schema().to_json()),
    }


def build(path, table_steps, checkpoint_after):
    skipped = []
    for label, action in table_steps(path):
        try:
            action()
        except Exception as e:  # an API the installed deltalake lacks
            if label.startswith("create"):
                raise
            skipped.append(f"{label}: {type(e).__name__}: {e}")
            continue
        if label == checkpoint_after:
            DeltaTable(path).create_checkpoint()
    latest = DeltaTable(path).version()
    return {"skipped": skipped, "versions": [dump_version(path, v) for v in range(latest + 1)]}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    tables = {
        "evolve": build(os.path.join(out, "evolve"), steps, "append before checkpoint"),
        "features": build(os.path.join(out, "features"), features_steps, "append before checkpoint"),
    }
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"deltalake": deltalake.__version__, "tables": tables}, f, indent=1)


if __name__ == "__main__":
    main()
