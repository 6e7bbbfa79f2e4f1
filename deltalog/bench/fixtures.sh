#!/usr/bin/env bash
# Make the checkpoint fixtures of BENCHMARKS.md ("Real-writer fixtures"),
# cached in $DELTASYNC_CACHE/bench (default: <repo>/.cache/bench), never
# committed. A fixture directory is made once: <name>.tmp, then renamed with
# a .complete marker.
#
#   pgo-N      parquet-go, default writer options: one row group, protocol and
#              metaData its first two rows (TestGenerateLayoutFixtures, for
#              each N of SIZES; SIZES="10000 1000000 10000000" adds the 10M
#              table: ~5 min on 2 idle cores, 0.9 GB, 3.9 GB peak RSS)
#   deltars-N  JSON log of N adds (genlog.py), checkpointed by delta-rs
#              (python deltalake, $DELTASYNC_PYTHON), then 100 more commits
#   spark-N    the same log checkpointed by Spark (pyspark + delta-spark from
#              PyPI, in $DELTASYNC_CACHE/sparkvenv; jars from Maven Central)
#   tails      <writer>-N-tailK: a made table with only the first K of its
#              100 commits after the checkpoint (hard links), the tail a
#              writer leaves on average or at most between checkpoints:
#              Spark checkpoints every 10 commits (tail5, tail10), delta-rs
#              every 100 (tail50). Benchmark them with
#              DELTASYNC_BENCH_TABLES=name=dir,... (bench_layouts_test.go).
#
# Usage: deltalog/bench/fixtures.sh [pgo] [deltars] [spark] [tails]   (default: all)
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
what=${*:-pgo deltars spark tails}

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

# tail SRC K: $BENCH/SRC with the commits up to its checkpoint + K, as
# $BENCH/SRC-tailK (SRC is <writer>-N-r1; the name drops the -r1).
tail_table() {
	local src=$BENCH/$1 k=$2 dst cp f b
	dst=$BENCH/${1%-r1}-tail$k
	[ -e "$src/.complete" ] || { echo "$src: missing, skipped"; return; }
	[ -e "$dst/.complete" ] && { echo "$dst: cached"; return; }
	cp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$src/_delta_log/_last_checkpoint")
	rm -rf "$dst"
	mkdir -p "$dst/_delta_log"
	for f in "$src/_delta_log"/*; do
		b=$(basename "$f")
		if [[ $b =~ ^[0-9]{20}\.json$ ]] && ((10#${b%.json} > cp + k)); then
			continue
		fi
		ln "$f" "$dst/_delta_log/$b"
	done
	touch "$dst/.complete"
	echo "$dst: made"
}

for w in $what; do
	case $w in
	pgo)
		(cd "$ROOT" && DELTASYNC_GEN_FIXTURES=1 DELTASYNC_GEN_FIXTURES_SIZES="$SIZES" go test ./deltalog -run '^TestGenerateLayoutFixtures$' -v -timeout 60m | grep -E 'ready|ok|FAIL')
		;;
	deltars)
		for n in $SIZES; do make_table deltars "$n" "$PY" "$HERE/deltars_checkpoint.py"; done
		;;
	spark)
		spark_venv
		for n in $SIZES; do make_table spark "$n" "$CACHE/sparkvenv/bin/python" "$HERE/spark_checkpoint.py" --ivy "$CACHE/ivy"; done
		;;
	tails)
		tail_table spark-1000000-r1 5
		tail_table spark-1000000-r1 10
		tail_table deltars-1000000-r1 50
		;;
	*)
		echo "unknown fixture kind $w" >&2
		exit 2
		;;
	esac
done
