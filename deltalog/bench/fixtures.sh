#!/usr/bin/env bash
# Make the checkpoint fixtures of BENCHMARKS.md ("Real-writer fixtures"),
# cached in $DELTASYNC_CACHE/bench (default: <repo>/.cache/bench), never
# committed. A fixture directory is made once: <name>.tmp, then renamed with
# a .complete marker.
#
#   pgo-*      parquet-go, default writer options: one row group, protocol and
#              metaData its first two rows (TestGenerateLayoutFixtures:
#              10k, 1M, 10M adds)
#   deltars-N  JSON log of N adds (genlog.py), checkpointed by delta-rs
#              (python deltalake, $DELTASYNC_PYTHON), then 100 more commits
#   spark-N    the same log checkpointed by Spark (pyspark + delta-spark from
#              PyPI, in $DELTASYNC_CACHE/sparkvenv; jars from Maven Central)
#
# Usage: deltalog/bench/fixtures.sh [pgo] [deltars] [spark]   (default: all)
# Env: SIZES (default "10000 1000000"), DELTASYNC_PYTHON (a python with
# deltalake, e.g. from .ci/setup-python.sh), JAVA_HOME (Java 17).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${DELTASYNC_CACHE:-$ROOT/.cache}
export DELTASYNC_CACHE=$CACHE
BENCH=$CACHE/bench
SIZES=${SIZES:-"10000 1000000"}
PY=${DELTASYNC_PYTHON:-python3}
HERE=$ROOT/deltalog/bench
mkdir -p "$BENCH"
what=${*:-pgo deltars spark}

# make NAME N CHECKPOINT_CMD...: JSON log of N adds, checkpointed by the
# command (given the table dir last), then 100 more commits.
make_table() {
	local name=$1 n=$2
	shift 2
	local dir=$BENCH/$name-$n-r1
	if [ -e "$dir/.complete" ]; then
		echo "$dir: cached"
		return
	fi
	rm -rf "$dir.tmp"
	local start=$SECONDS
	"$PY" "$HERE/genlog.py" "$dir.tmp" "$n"
	"$@" "$dir.tmp"
	"$PY" "$HERE/genlog.py" "$dir.tmp" --append 100
	touch "$dir.tmp/.complete"
	mv "$dir.tmp" "$dir"
	echo "$dir: made in $((SECONDS - start)) s"
}

spark_venv() {
	if [ ! -x "$CACHE/sparkvenv/bin/python" ]; then
		python3 -m venv "$CACHE/sparkvenv"
		"$CACHE/sparkvenv/bin/pip" install -q delta-spark==4.4.1
	fi
}

for w in $what; do
	case $w in
	pgo)
		(cd "$ROOT" && DELTASYNC_GEN_FIXTURES=1 go test ./deltalog -run '^TestGenerateLayoutFixtures$' -v -timeout 60m | grep -E 'ready|ok|FAIL')
		;;
	deltars)
		for n in $SIZES; do make_table deltars "$n" "$PY" "$HERE/deltars_checkpoint.py"; done
		;;
	spark)
		spark_venv
		for n in $SIZES; do make_table spark "$n" "$CACHE/sparkvenv/bin/python" "$HERE/spark_checkpoint.py" --ivy "$CACHE/ivy"; done
		;;
	*)
		echo "unknown fixture kind $w" >&2
		exit 2
		;;
	esac
done
