#!/usr/bin/env bash
# setup-spark.sh start|stop — Spark 4.2 with delta-spark 4.4.0, for the
# OPT-IN read-back suite (sync/hms_spark_test.go, `make spark-readback`):
# real Spark reads, through a real Hive Metastore, the tables deltasync
# synced.
#
# Opt-in: .ci/test.sh runs every .ci/setup-*.sh, and Spark costs a 500 MiB
# venv, a 0.4-0.8 GiB Ivy cache and 47-130 s per run, so `start` does
# nothing (prints nothing, exits 0, the suite skips) unless
# DELTASYNC_SPARK=1 or DELTASYNC_REQUIRE_SPARK=1 is set. `make spark-readback`
# sets DELTASYNC_REQUIRE_SPARK=1.
#
# `start` then, once and idempotently, under $DELTASYNC_CACHE/spark:
#   venv/  python3 -m venv + pip install 'pyspark==4.2.*' 'delta-spark==4.4.0'
#          (re-installed only when the installed versions do not match);
#   ivy/   the Ivy home Spark resolves jars into (spark.jars.ivy; the read-back
#          script uses the same directory: the venv's sibling): pre-warmed by
#          one Spark session per metastore version found in the environment
#          (DELTASYNC_HMS4_URL: HMS 4.0.1, whose Hive client Spark fetches from
#          Maven, ~180 jars; DELTASYNC_HMS3_URL: 3.1.3, Spark's built-in client).
#          A warm version is remembered in ivy/.warm-<version>.
# It prints ONLY `export DELTASYNC_SPARK_PYTHON=<venv python>` on stdout
# (eval it); the rest goes to stderr. When something is missing or fails:
# with DELTASYNC_REQUIRE_SPARK=1 it exits 1 saying why, otherwise it says
# why, prints nothing and the suite skips. Nothing runs as a service, so
# `stop` does nothing.
set -uo pipefail

log() { echo "setup-spark: $*" >&2; }

DIR="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$DIR/.." && pwd)"
CACHE="${DELTASYNC_CACHE:-$REPO/.cache}"
ROOT="$CACHE/spark"
VENV="$ROOT/venv"
IVY="$ROOT/ivy"
PY="$VENV/bin/python"
PYSPARK_SPEC="pyspark==4.2.*"
DELTA_SPARK_VERSION="4.4.0"
READBACK="$REPO/sync/testdata/spark_readback.py"

required() { [ "${DELTASYNC_REQUIRE_SPARK:-}" = "1" ]; }
opted_in() { required || [ "${DELTASYNC_SPARK:-}" = "1" ]; }

# fail WHY: exit 1 when Spark is required, else warn and print nothing.
fail() {
	if required; then
		log "FAILED: $* (DELTASYNC_REQUIRE_SPARK=1 makes the Spark read-back suite mandatory)"
		exit 1
	fi
	log "$*: the Spark read-back suite will skip"
	exit 0
}

installed() {
	"$PY" - "$DELTA_SPARK_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
ok = version("pyspark").startswith("4.2.") and version("delta-spark") == sys.argv[1]
sys.exit(0 if ok else 1)
PY
}

install() {
	command -v java >/dev/null 2>&1 || fail "java not found (Spark needs Java 17: apt-get install default-jre-headless)"
	mkdir -p "$ROOT" "$IVY"
	if [ ! -x "$PY" ]; then
		local base
		base="$(command -v python3 || true)"
		[ -n "$base" ] || fail "python3 not found"
		log "creating venv $VENV with $($base --version 2>&1)"
		"$base" -m venv "$VENV" >&2 || fail "python3 -m venv $VENV failed"
	fi
	if ! installed; then
		log "installing $PYSPARK_SPEC and delta-spark==$DELTA_SPARK_VERSION (once; ~500 MiB)"
		local t0=$SECONDS
		"$PY" -m pip install --disable-pip-version-check -q "$PYSPARK_SPEC" "delta-spark==$DELTA_SPARK_VERSION" >&2 ||
			fail "pip install $PYSPARK_SPEC delta-spark==$DELTA_SPARK_VERSION failed"
		installed || fail "after pip install, pyspark 4.2.x / delta-spark $DELTA_SPARK_VERSION are still not what $PY imports"
		log "installed in $((SECONDS - t0)) s"
		rm -f "$IVY"/.warm-*
	fi
}

# warm VERSION URL: one Spark session against the metastore at URL, which
# resolves delta-spark (and for 4.0.1 the Hive client jars) into $IVY.
warm() {
	local v="$1" url="$2" stamp="$IVY/.warm-$1"
	if [ -f "$stamp" ]; then
		log "Ivy cache warm for HMS $v ($(cat "$stamp"))"
		return 0
	fi
	if [ -z "$url" ]; then
		log "no metastore URL for HMS $v in the environment: not pre-warming it (its first read-back run fetches the jars)"
		return 0
	fi
	log "pre-warming the Ivy cache with one Spark session on HMS $v at $url (once; 1-2 min)"
	local t0=$SECONDS
	DELTASYNC_SPARK_IVY="$IVY" "$PY" "$READBACK" --uri "$url" --hms-version "$v" --warm >&2 ||
		fail "the pre-warm Spark session on HMS $v failed (its output is above)"
	echo "$((SECONDS - t0)) s on $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$stamp"
	log "HMS $v warm after $((SECONDS - t0)) s; Ivy cache $(du -sh "$IVY" 2>/dev/null | cut -f1)"
}

start() {
	if ! opted_in; then
		log "opt-in only (DELTASYNC_SPARK=1, or make spark-readback): skipped"
		return 0
	fi
	install
	warm 4.0.1 "${DELTASYNC_HMS4_URL:-}"
	warm 3.1.3 "${DELTASYNC_HMS3_URL:-}"
	echo "export DELTASYNC_SPARK_PYTHON=$PY"
}

case "${1:-}" in
start) start ;;
stop) : ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
