#!/usr/bin/env bash
# first-hour.sh — replays a newcomer's first hour, as the README tells it,
# from a fresh clone of this repository's committed HEAD:
#
#   go run ./cmd/deltasync demo        the whole loop, no outside service
#   make build                          bin/deltasync (reuses go run's build cache)
#   deltasync demo --serve              a demo catalog and tables that stay up
#   deltasync inspect TABLE             one table's log
#   deltasync plan --config …           against demo --serve (drift: exit 2)
#   deltasync plan --include typo       a rule matching nothing fails (exit 1)
#   deltasync run --config …            the exact command demo --serve prints
#   status page, /metrics, /readyz      and a drift the writer makes fixed live
#   Ctrl-C                              both stop; the demo's tables are gone
#
# It needs go, git, make and curl, and nothing outside 127.0.0.1. Every
# step's output is kept in $WORK/logs (printed when a step fails). Builds
# use the normal Go build cache, so after `go vet ./...` or any build of
# this repository they only compile this repository's own packages.
# Usage: .ci/first-hour.sh [--keep]   (--keep leaves $WORK behind)
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/first-hour.XXXXXX")"
LOGS="$WORK/logs"
mkdir -p "$LOGS"
KEEP="${1:-}"
PIDS=()

log() { echo "first-hour: $*" >&2; }

cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -INT "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	done
	if [ "$KEEP" != "--keep" ]; then
		rm -rf "$WORK"
	else
		log "kept $WORK"
	fi
}
trap cleanup EXIT

fail() {
	log "FAILED: $*"
	for f in "$LOGS"/*; do
		[ -f "$f" ] || continue
		echo "----- $(basename "$f")" >&2
		tail -n 60 "$f" >&2
	done
	exit 1
}

# expect FILE TEXT: the step's output contains TEXT.
expect() { grep -qF -- "$2" "$1" || fail "$(basename "$1") lacks: $2"; }

# wait_for FILE REGEX SECONDS: until a background step prints a line.
wait_for() {
	for _ in $(seq 1 $(($3 * 10))); do
		grep -qE -- "$2" "$1" && return 0
		sleep 0.1
	done
	fail "$(basename "$1") did not print /$2/ within $3 s"
}

step() { log "$(date -u +%H:%M:%S) $*"; }

step "fresh clone of $REPO"
git clone -q "$REPO" "$WORK/deltasync" || fail "git clone"
cd "$WORK/deltasync"

step "go run ./cmd/deltasync demo"
start=$(date +%s)
go run ./cmd/deltasync demo >"$LOGS/1-demo.txt" 2>&1 || fail "demo exited $?"
log "  demo (build + run): $(($(date +%s) - start)) s"
expect "$LOGS/1-demo.txt" "deltasync: 3 tables: 0 unchanged, 2 would update, 1 flagged, 0 failed"
expect "$LOGS/1-demo.txt" "deltasync: 3 tables: 0 unchanged, 2 synced, 1 flagged, 0 failed"
expect "$LOGS/1-demo.txt" "deltasync demo --serve"

step "make build"
start=$(date +%s)
make build >"$LOGS/2-build.txt" 2>&1 || fail "make build exited $?"
log "  make build after go run: $(($(date +%s) - start)) s"
[ -x bin/deltasync ] || fail "make build did not produce bin/deltasync"
DS="$PWD/bin/deltasync"
"$DS" --version >"$LOGS/2-version.txt" 2>&1 || fail "bin/deltasync --version"
expect "$LOGS/2-version.txt" "deltasync version"

step "deltasync demo --serve"
"$DS" demo --serve --drift-every 4s >"$LOGS/3-serve.txt" 2>&1 &
PIDS+=($!)
wait_for "$LOGS/3-serve.txt" '^  deltasync run --config ' 60
RUN_CMD="$(grep -E '^  deltasync run --config ' "$LOGS/3-serve.txt" | head -1 | sed 's/^  //')"
CFG="${RUN_CMD#deltasync run --config }"
DEMO_DIR="$(dirname "$CFG")"
ADDR="$(sed -n 's/^listen: //p' "$CFG")"
[ -n "$ADDR" ] || fail "no listen address in $CFG"
expect "$LOGS/3-serve.txt" "2 would update, 1 flagged"

step "deltasync inspect $DEMO_DIR/orders"
"$DS" inspect "$DEMO_DIR/orders" >"$LOGS/4-inspect.txt" 2>&1 || fail "inspect exited $?"
expect "$LOGS/4-inspect.txt" "partition columns:  country"
expect "$LOGS/4-inspect.txt" "discount: double"
set +e
"$DS" inspect "$DEMO_DIR/orders/_delta_log" >"$LOGS/4-inspect-logdir.txt" 2>&1
code=$?
set -e
[ "$code" = 1 ] || fail "inspect of _delta_log exited $code, want 1"
expect "$LOGS/4-inspect-logdir.txt" "pass the table's root"

step "deltasync plan --config $CFG"
set +e
"$DS" plan --config "$CFG" --log-level error >"$LOGS/5-plan.txt" 2>&1
code=$?
"$DS" plan --config "$CFG" --log-level error -o json >"$LOGS/5-plan.json" 2>"$LOGS/5-plan-json-stderr.txt"
jcode=$?
"$DS" plan --catalog-url "$(sed -n 's/^  url: //p' "$CFG")" --include 'demo.sale' --log-level error >"$LOGS/5-plan-typo.txt" 2>&1
tcode=$?
set -e
[ "$code" = 2 ] || fail "plan exited $code, want 2 (drift found)"
[ "$jcode" = 2 ] || fail "plan -o json exited $jcode, want 2"
expect "$LOGS/5-plan.txt" "would update [OutOfSync]"
expect "$LOGS/5-plan.json" '"would_update": 2'
[ "$tcode" = 1 ] || fail "plan --include 'demo.sale' exited $tcode, want 1 (a rule that selects nothing)"
expect "$LOGS/5-plan-typo.txt" "selected no table"

step "$RUN_CMD"
# Exactly the command demo --serve printed.
$DS ${RUN_CMD#deltasync } >"$LOGS/6-run.txt" 2>&1 &
PIDS+=($!)
ok=""
for _ in $(seq 1 300); do
	if curl -fsS -m 2 "http://$ADDR/readyz" >/dev/null 2>&1; then ok=1; break; fi
	sleep 0.1
done
[ -n "$ok" ] || fail "run did not become ready at http://$ADDR/readyz within 30 s"

step "status page http://$ADDR/ and /metrics"
curl -fsS -m 5 "http://$ADDR/" >"$LOGS/7-status.html" || fail "GET / failed"
expect "$LOGS/7-status.html" "demo.sales.orders"
expect "$LOGS/7-status.html" "demo.ops.events"
curl -fsS -m 5 "http://$ADDR/metrics" >"$LOGS/7-metrics.txt" || fail "GET /metrics failed"
expect "$LOGS/7-metrics.txt" 'deltasync_table_info{mode="sync",sync_status="Synced",table="demo.sales.orders",table_type="EXTERNAL"} 1'

step "a drift made by the demo's writer, fixed live by run"
wait_for "$LOGS/3-serve.txt" 'a writer ' 30
# A later cycle (every 10 s) syncs what the writer changed.
wait_for "$LOGS/6-run.txt" '"cycle": [2-9].*synced|synced.*"cycle": [2-9]' 40
set +e
"$DS" plan --config "$CFG" --log-level error >"$LOGS/8-plan-after.txt" 2>&1
set -e

step "Ctrl-C"
for pid in "${PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
for pid in "${PIDS[@]}"; do
	for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "pid $pid still running 10 s after Ctrl-C"
done
PIDS=()
expect "$LOGS/6-run.txt" "deltasync stopped"
expect "$LOGS/3-serve.txt" "removing the sample tables"
[ ! -e "$DEMO_DIR" ] || fail "demo --serve left $DEMO_DIR behind"

step "first hour replayed: OK"
