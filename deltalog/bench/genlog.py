"""Write a Delta log of JSON commits only, referencing N data files, for the
real-writer checkpoint fixtures (see fixtures.sh and BENCHMARKS.md).

Usage:
  python genlog.py TABLE_DIR N [--commits K]    version 0 (protocol, metaData) then
                                                K commits adding N files in all
  python genlog.py TABLE_DIR --append M         M more commits of 10 adds each,
                                                after the latest version, one of
                                                which (the 50th) changes metaData

The add actions are shaped like deltalog's Go benchmark fixture (fixtureAdd in
deltalog/bench_fixture_test.go): unique paths under day= partitions, size,
modificationTime and ~330 bytes of per-file JSON stats. No data files are
written; writers checkpoint the log without opening them.
"""

import json
import os
import sys

TABLE_ID = "8f5b2a7c-3d1e-4c6b-9a0f-2e7d5c1b4a93"
CREATED = 1735689600000
SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": False, "metadata": {}},
    {"name": "ts", "type": "timestamp", "nullable": True, "metadata": {}},
    {"name": "customer", "type": "string", "nullable": True, "metadata": {"comment": "customer name"}},
    {"name": "amount", "type": "decimal(18,2)", "nullable": True, "metadata": {}},
    {"name": "tags", "type": {"type": "map", "keyType": "string", "valueType": "string",
                              "valueContainsNull": True}, "nullable": True, "metadata": {}},
    {"name": "day", "type": "date", "nullable": True, "metadata": {}},
]}, separators=(",", ":"))


def protocol():
    return {"minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": ["timestampNtz"],
            "writerFeatures": ["appendOnly", "invariants", "checkConstraints", "timestampNtz"]}


def metadata(changed=False):
    conf = {"delta.checkpointInterval": "100000", "delta.logRetentionDuration": "interval 30 days",
            "delta.autoOptimize.autoCompact": "true"}
    if changed:
        conf["delta.logRetentionDuration"] = "interval 7 days"
        conf["owner.team"] = "payments"
    return {"id": TABLE_ID, "name": "orders", "description": "benchmark table",
            "format": {"provider": "parquet", "options": {}}, "schemaString": SCHEMA,
            "partitionColumns": ["day"], "configuration": conf, "createdTime": CREATED}


def add(i):
    day = "2025-%02d-%02d" % (1 + (i // 28) % 12, 1 + i % 28)
    path = "day=%s/part-%05d-%08x-%04x-4%03x-a%03x-%012x.c000.zstd.parquet" % (
        day, i % 100000, (i * 2654435761) & 0xFFFFFFFF, i & 0xFFFF, i % 4096, (i // 7) % 4096,
        (i * 0x9E3779B9) & 0xFFFFFFFFFFFF)
    rows = 500000 + i % 100000
    stats = ('{"numRecords":%d,"minValues":{"id":%d,"ts":"%sT00:00:00.000Z","customer":"aaron-%05d","amount":0.01},'
             '"maxValues":{"id":%d,"ts":"%sT23:59:59.999Z","customer":"zoe-%05d","amount":99999.99},'
             '"nullCount":{"id":0,"ts":%d,"customer":%d,"amount":0,"tags":%d}}') % (
        rows, i * 1000000, day, i % 99999, i * 1000000 + rows, day, i % 99999, i % 7, i % 13, rows // 2)
    return {"add": {"path": path, "partitionValues": {"day": day}, "size": (64 << 20) + (i % 1000) * 4096,
                    "modificationTime": CREATED + i * 1000, "dataChange": True, "stats": stats}}


def commit_info(version, op="WRITE"):
    return {"commitInfo": {"timestamp": CREATED + version * 60000, "operation": op,
                           "operationParameters": {"mode": "Append"}, "isBlindAppend": True,
                           "engineInfo": "deltasync-bench"}}


def write_commit(log, version, actions):
    path = os.path.join(log, "%020d.json" % version)
    with open(path + ".tmp", "w") as f:
        for a in actions:
            f.write(json.dumps(a, separators=(",", ":")))
            f.write("\n")
    os.rename(path + ".tmp", path)


def latest(log):
    vs = [int(n[:20]) for n in os.listdir(log) if n.endswith(".json") and n[:20].isdigit()]
    return max(vs)


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[1] == "--append":
        log = os.path.join(args[0], "_delta_log")
        m = int(args[2])
        v0 = latest(log)
        base = 10**9  # file numbers of later commits never collide with the first N
        for k in range(1, m + 1):
            acts = [commit_info(v0 + k)]
            if k == 50:
                acts.append({"metaData": metadata(changed=True)})
            acts += [add(base + (v0 + k) * 10 + j) for j in range(10)]
            write_commit(log, v0 + k, acts)
        return
    if len(args) not in (2, 4) or (len(args) == 4 and args[2] != "--commits"):
        sys.exit(__doc__)
    log = os.path.join(args[0], "_delta_log")
    n = int(args[1])
    commits = int(args[3]) if len(args) == 4 else 100
    os.makedirs(log, exist_ok=True)
    write_commit(log, 0, [commit_info(0, "CREATE TABLE"), {"protocol": protocol()}, {"metaData": metadata()}])
    per = -(-n // commits)
    i = 0
    v = 1
    while i < n:
        j = min(n, i + per)
        write_commit(log, v, [commit_info(v)] + [add(k) for k in range(i, j)])
        i = j
        v += 1


if __name__ == "__main__":
    main()
