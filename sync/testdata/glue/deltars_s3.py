"""delta-rs on moto's S3 for TestGlueDeltaRSOnMotoS3 (glue-notes §3).

usage: deltars_s3.py S3_ENDPOINT URI create|evolve|read

  create  version 0: id bigint, name string, dt date (partitioned by dt),
          a description and delta.logRetentionDuration
  evolve  append rows with a new column `score` (schema_mode=merge)
  read    print the log as delta-rs reads it: version, schema (the
          protocol's JSON), partition columns, configuration, description
"""
import datetime
import json
import sys

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

endpoint, uri, step = sys.argv[1:4]
so = {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": "testing",
      "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def rows(score=False):
    cols = {"id": pa.array([1, 2], pa.int64()), "name": pa.array(["a", "b"], pa.string()),
            "dt": pa.array([datetime.date(2026, 1, 1)] * 2, pa.date32())}
    if score:
        cols["score"] = pa.array([1.5, 2.5], pa.float64())
    return pa.table(cols)


if step == "create":
    write_deltalake(uri, rows(), partition_by=["dt"], storage_options=so, description="clicks by day",
                    configuration={"delta.logRetentionDuration": "interval 30 days"})
elif step == "evolve":
    write_deltalake(uri, rows(score=True), mode="append", schema_mode="merge", storage_options=so)
elif step == "read":
    dt = DeltaTable(uri, storage_options=so)
    md = dt.metadata()
    print(json.dumps({"version": dt.version(), "schema": json.loads(dt.schema().to_json()),
                      "partition_columns": md.partition_columns, "configuration": md.configuration,
                      "description": md.description}))
else:
    sys.exit("unknown step " + step)
