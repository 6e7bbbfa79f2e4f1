"""Read Delta tables back with real Spark 4.2 + delta-spark 4.4.0 through a
Hive Metastore, for deltasync's opt-in read-back suite
(sync/hms_spark_test.go; the venv and Ivy cache are .ci/setup-spark.sh's).

Usage:
  python spark_readback.py --uri thrift://HOST:PORT --hms-version 4.0.1|3.1.3 \
      --db DB TABLE...
  python spark_readback.py --uri ... --hms-version ... --warm

One Spark session per run (startup is most of the cost). For each TABLE it
prints one JSON line on stdout:

  {"table": NAME,
   "schema": the schema Spark reads (spark.table(t).schema.json(), parsed),
   "count": the row count (reads the data files),
   "tblproperties": SHOW TBLPROPERTIES as a map,
   "detail": DESCRIBE DETAIL (format, location, partitionColumns, properties, ...),
   "describe": DESCRIBE TABLE EXTENDED's "# Detailed Table Information" rows
               (Provider, Location, Type, ...) as a map,
   "catalogTable": spark.catalog.getTable (name, tableType, ...),
   "columns": spark.catalog.listColumns (name, dataType, nullable, isPartition),
   "external": what Spark's Hive external catalog decodes from the metastore
               record itself (HiveExternalCatalog.getTable): schema (from
               spark.sql.sources.schema[.numParts/.part.N]), partitionColumns
               (from .numPartCols/.partCol.N), properties, provider, location,
               tableType.}

The first four and "columns" are Delta's view: delta-spark reads the schema,
partitioning and properties from the _delta_log. Only "external" is the
metastore record as Spark understands it. A table that fails prints
{"table": NAME, "error": ...}; the run then exits 1. The last line is
{"meta": {...}} (versions, session start-up and total seconds).

--warm starts the session and lists the databases only (which makes Spark
resolve delta-spark and, for HMS 4.0.1, the Hive client jars from Maven):
.ci/setup-spark.sh pre-warms the Ivy cache with it.

The Ivy home (spark.jars.ivy, and the driver's -Divy.home, which the Hive
client download uses) is $DELTASYNC_SPARK_IVY, else the directory `ivy`
beside the venv this python runs in ($DELTASYNC_CACHE/spark/ivy).
The session runs in a fresh temp directory (Spark's warehouse dir and
derby.log land there, not in the caller's directory).
"""

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from importlib.metadata import version

DELTA_PACKAGE = "io.delta:delta-spark_4.2_2.13:4.4.0"


def ivy_home():
    if os.environ.get("DELTASYNC_SPARK_IVY"):
        return os.environ["DELTASYNC_SPARK_IVY"]
    if sys.prefix != sys.base_prefix:
        return os.path.join(os.path.dirname(sys.prefix), "ivy")
    return None


def session(uri, hms_version, scratch):
    from pyspark.sql import SparkSession

    b = (SparkSession.builder.appName("deltasync-readback").master("local[2]")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.warehouse.dir", "file://" + os.path.join(scratch, "warehouse"))
         .config("spark.sql.catalogImplementation", "hive")
         .config("spark.hadoop.hive.metastore.uris", uri)
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.jars.packages", DELTA_PACKAGE))
    ivy = ivy_home()
    if ivy:
        # spark.jars.ivy covers spark.jars.packages only: the Hive client
        # jars of spark.sql.hive.metastore.jars=maven are resolved with the
        # JVM's ivy.home (default ~/.ivy2.5.2), so set both.
        b = (b.config("spark.jars.ivy", ivy)
             .config("spark.driver.extraJavaOptions", "-Divy.home=" + ivy))
    if hms_version.startswith("4."):
        # Spark's built-in Hive 2.3 client calls get_table, which HMS 4
        # removed; spark-hive 4.2 has a 4.0 client, fetched from Maven.
        b = b.config("spark.sql.hive.metastore.version", hms_version).config("spark.sql.hive.metastore.jars", "maven")
    elif not hms_version.startswith("3."):
        sys.exit(f"--hms-version {hms_version}: want 4.0.1 or 3.1.3")
    s = b.enableHiveSupport().getOrCreate()
    s.sparkContext.setLogLevel("WARN")
    return s


def scala_seq(seq):
    return [seq.apply(i) for i in range(seq.length())]


def scala_map(m):
    out, it = {}, m.iterator()
    while it.hasNext():
        kv = it.next()
        out[kv._1()] = kv._2()
    return out


def scala_option(o):
    return o.get() if o.isDefined() else None


def external_view(spark, db, table):
    """The metastore record as Spark's HiveExternalCatalog restores it."""
    ct = spark._jsparkSession.sharedState().externalCatalog().getTable(db, table)
    loc = scala_option(ct.storage().locationUri())
    return {
        "schema": json.loads(ct.schema().json()),
        "partitionColumns": scala_seq(ct.partitionColumnNames()),
        "properties": scala_map(ct.properties()),
        "provider": scala_option(ct.provider()),
        "location": loc.toString() if loc is not None else None,
        "tableType": ct.tableType().name(),
    }


def describe_extended(spark, name):
    out, detailed = {}, False
    for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect():
        if r.col_name.strip() == "# Detailed Table Information":
            detailed = True
            continue
        if detailed and r.col_name.strip() and not r.col_name.startswith("#"):
            out[r.col_name.strip()] = r.data_type
    return out


def read_table(spark, db, table):
    name = f"{db}.{table}"
    df = spark.table(name)
    ct = spark.catalog.getTable(name)
    return {
        "table": table,
        "schema": json.loads(df.schema.json()),
        "count": df.count(),
        "tblproperties": {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()},
        "detail": spark.sql(f"DESCRIBE DETAIL {name}").collect()[0].asDict(recursive=True),
        "describe": describe_extended(spark, name),
        "catalogTable": {"name": ct.name, "catalog": ct.catalog, "namespace": ct.namespace,
                         "tableType": ct.tableType, "description": ct.description, "isTemporary": ct.isTemporary},
        "columns": [{"name": c.name, "dataType": c.dataType, "nullable": c.nullable, "isPartition": c.isPartition}
                    for c in spark.catalog.listColumns(table, db)],
        "external": external_view(spark, db, table),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--uri", required=True)
    ap.add_argument("--hms-version", required=True)
    ap.add_argument("--db")
    ap.add_argument("--warm", action="store_true")
    ap.add_argument("tables", nargs="*")
    a = ap.parse_args()
    if not a.warm and (not a.db or not a.tables):
        ap.error("--db and at least one TABLE (or --warm)")
    t0 = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="deltasync-spark-")
    os.chdir(scratch)
    spark = session(a.uri, a.hms_version, scratch)
    started = time.monotonic() - t0
    failed = False
    try:
        dbs = [r[0] for r in spark.sql("SHOW DATABASES").collect()]
        if a.warm:
            print(f"spark_readback: warm: {len(dbs)} databases on {a.uri}", file=sys.stderr)
        for table in [] if a.warm else a.tables:
            try:
                out = read_table(spark, a.db, table)
            except Exception as e:  # report the table, go on with the next
                failed = True
                out = {"table": table, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
            print(json.dumps(out, default=str), flush=True)
        meta = {"spark": spark.version, "pyspark": version("pyspark"), "deltaSpark": version("delta-spark"),
                "hmsVersion": a.hms_version,
                "hiveClient": spark.conf.get("spark.sql.hive.metastore.version"),
                "sessionSeconds": round(started, 1), "totalSeconds": round(time.monotonic() - t0, 1)}
        print(json.dumps({"meta": meta}), flush=True)
    finally:
        spark.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
