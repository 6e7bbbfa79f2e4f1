"""Have Spark (pyspark + delta-spark) write a checkpoint at the latest version
of TABLE_DIR. Usage: python spark_checkpoint.py --ivy IVY_DIR TABLE_DIR

The delta-spark jars are resolved from Maven Central by Spark's ivy into
IVY_DIR (cached between runs)."""

import os
import sys
import time

import pyspark
from pyspark.sql import SparkSession

# delta-spark's own configure_spark_with_delta_pip names
# delta-spark_<spark>_2.13:<pip version>, which Maven Central may not have
# for every pip release; the jar pinned here does resolve.
DELTA_PACKAGE = os.environ.get("DELTA_SPARK_PACKAGE", "io.delta:delta-spark_4.2_2.13:4.4.0")

if len(sys.argv) != 4 or sys.argv[1] != "--ivy":
    sys.exit(__doc__)
ivy, path = sys.argv[2], sys.argv[3]
start = time.time()
builder = (SparkSession.builder.appName("deltasync-fixture").master("local[2]")
           .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
           .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
           .config("spark.driver.memory", "6g")
           .config("spark.ui.enabled", "false")
           .config("spark.sql.shuffle.partitions", "4")
           .config("spark.jars.ivy", ivy))
spark = builder.config("spark.jars.packages", DELTA_PACKAGE).getOrCreate()
spark.sparkContext.setLogLevel("WARN")
jvm = spark._jvm
log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
snap = log.update(False, jvm.scala.Option.empty(), jvm.scala.Option.empty())
log.checkpoint(snap, jvm.scala.Option.empty())
print("pyspark %s checkpointed version %d in %.1f s" % (pyspark.__version__, snap.version(), time.time() - start))
spark.stop()
