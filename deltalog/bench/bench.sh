#!/usr/bin/env bash
# Peers side by side on the fixture tables of deltalog/bench/fixtures.sh
# (BENCHMARKS.md, "Real-writer fixtures"): deltasync inspect, delta-kernel-rs
# (kernelpeer, built here with cargo from crates.io) and delta-rs (python
# deltalake). For each table: whole-process wall time (hyperfine, median),
# peak RSS (/usr/bin/time, median of 3) and in-process time where the tool
# can print it; deltasync's in-process numbers come from
# `go test ./deltalog -bench BenchmarkLoadLayouts`.
#
# Usage: deltalog/bench/bench.sh [TABLE...]   (default: every fixture present)
#   TABLE is pgo-N, deltars-N or spark-N.
# Env: DELTASYNC_CACHE, DELTASYNC_PYTHON (python with deltalake), RUNS (10).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${DELTASYNC_CACHE:-$ROOT/.cache}
BENCH=$CACHE/bench
PY=${DELTASYNC_PYTHON:-python3}
RUNS=${RUNS:-10}
HERE=$ROOT/deltalog/bench
for tool in hyperfine cargo; do
	command -v "$tool" >/dev/null || { echo "bench.sh: needs $tool on PATH (hyperfine: apt install hyperfine; cargo: rustup)" >&2; exit 2; }
done

(cd "$ROOT" && go build -tags disable_grpc_modules -o "$CACHE/bin/deltasync" ./cmd/deltasync) # as make build
CARGO_TARGET_DIR=$CACHE/kernelpeer/target cargo build -q --release --manifest-path "$HERE/kernelpeer/Cargo.toml"
KERNEL=$CACHE/kernelpeer/target/release/kernelpeer
DS=$CACHE/bin/deltasync

dir_of() {
	case $1 in
	pgo-*) echo "$BENCH/layout-n${1#pgo-}-pmfirst-rg0-a100-l1" ;;
	*) echo "$BENCH/$1-r1" ;;
	esac
}

tables=("$@")
if [ ${#tables[@]} -eq 0 ]; then
	for t in pgo-10000 pgo-1000000 pgo-10000000 deltars-10000 deltars-1000000 spark-10000 spark-1000000; do
		[ -e "$(dir_of $t)/.complete" ] && tables+=("$t")
	done
fi

median_rss() { # median peak RSS in MiB of 3 runs of "$@"
	for _ in 1 2 3; do /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; done | sort -n | sed -n 2p | awk '{printf "%.0f", $1/1024}'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
echo
echo "| table | tool | whole-process wall (median) | peak RSS | in-process (median) |"
echo "|---|---|---|---|---|"
for t in "${tables[@]}"; do
	d=$(dir_of "$t")
	out=$BENCH/hyperfine-$t.json
	hyperfine -N -w 1 -r "$RUNS" --export-json "$out" \
		-n deltasync "$DS inspect -o json $d" \
		-n delta-kernel-rs "$KERNEL $d" \
		-n delta-rs "$PY $HERE/deltars_load.py $d" >/dev/null
	kern_ms=$("$KERNEL" "$d" 7 2>&1 >/dev/null | sed -n 's/snapshot_ms=//p' | tail -n +2 | sort -n | sed -n 3p)
	drs_ms=$("$PY" "$ROOT/deltalog/testdata/deltars/peer_bench.py" "$d" 5 | sed -n 's/.*"median_ms": \([0-9.]*\).*/\1/p')
	for tool in deltasync delta-kernel-rs delta-rs; do
		wall=$("$PY" -c "import json,sys; r=[x for x in json.load(open('$out'))['results'] if x['command']=='$tool'][0]; print('%.1f ms' % (r['median']*1e3))")
		case $tool in
		deltasync) rss=$(median_rss "$DS" inspect -o json "$d"); inproc="BenchmarkLoadLayouts/$t" ;;
		delta-kernel-rs) rss=$(median_rss "$KERNEL" "$d"); inproc="$kern_ms ms" ;;
		delta-rs) rss=$(median_rss "$PY" "$HERE/deltars_load.py" "$d"); inproc="$drs_ms ms" ;;
		esac
		echo "| $t | $tool | $wall | $rss MiB | $inproc |"
	done
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
