"""A delta-rs writer for the event tests and the event benchmark.

Usage: writer.py ENDPOINT   (an S3-compatible endpoint, path-style, http)

Reads commands from stdin, one per line, and answers one JSON line each:
  create s3://bucket/path   -> {"version": 0}    a new table (id, name)
  append s3://bucket/path   -> {"version": N}    one more commit (two rows)
Every commit is a real delta-rs write to the object store; the caller then
publishes the store's notification for the new _delta_log file.
"""
import json
import sys

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

endpoint = sys.argv[1]
opts = {
    "AWS_ENDPOINT_URL": endpoint,
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "secret",
    "AWS_REGION": "us-east-1",
    "AWS_ALLOW_HTTP": "true",
    "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
    "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
}
n = 0
for line in sys.stdin:
    cmd, uri = line.split()
    n += 1
    data = pa.table({"id": pa.array([n, n + 1], pa.int64()), "name": pa.array(["a", "b"])})
    mode = "overwrite" if cmd == "create" else "append"
    write_deltalake(uri, data, mode=mode, storage_options=opts)
    v = DeltaTable(uri, storage_options=opts).version()
    print(json.dumps({"version": v}), flush=True)
