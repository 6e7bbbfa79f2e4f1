#!/usr/bin/env bash
# The test command behind `make test` and CI. It installs what the tests need,
# starts the services they use on 127.0.0.1, runs the Go tests with the race
# detector, and stops the services whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
export DELTASYNC_CACHE="${DELTASYNC_CACHE:-$PWD/.cache}"
mkdir -p "$DELTASYNC_CACHE"

# In CI a test that needs an outside part fails instead of skipping; that
# includes the real Unity Catalog server (from ../shared/uc-server).
if [ "${CI:-}" = "true" ]; then
	export DELTASYNC_REQUIRE_EXTERNAL=1 DELTASYNC_REQUIRE_UC=1
fi

cleanup() {
	for s in .ci/setup-*.sh; do [ -f "$s" ] && bash "$s" stop || true; done
}
trap cleanup EXIT

# Each setup script installs its part if missing, starts it if it is a
# service, and prints `export NAME=value` lines for the tests.
for s in .ci/setup-*.sh; do
	[ -f "$s" ] || continue
	echo "== $s"
	if ! exports="$(bash "$s" start)"; then
		echo "FAILED: bash $s start (its messages are above)" >&2
		exit 1
	fi
	eval "$exports"
done

# The release artifacts (built, not published), so a broken cross-build
# fails the run; deploy/release_test.go and the release vulnerability scan
# (deploy/vuln_test.go) check them. Built with the release toolchain into
# the cache: every target compiles the whole dependency tree once per
# toolchain and platform, and the build cache keeps it for later runs.
# Two of the four targets (one per OS, one per architecture: the
# platform-specific files of every dependency are compiled at least once);
# with an empty build cache each target costs 2-5 minutes on two cores, and
# `make release` still builds all four. RELEASE_TARGETS also tells
# deploy/release_test.go which binaries to expect.
export RELEASE_TARGETS="${RELEASE_TARGETS:-linux/amd64 darwin/arm64}"
echo "== .ci/release.sh (make release; $RELEASE_TARGETS)"
start=$SECONDS
DIST="$DELTASYNC_CACHE/dist" bash .ci/release.sh
echo "release build: $((SECONDS - start)) s"
export DELTASYNC_RELEASE_DIST="$DELTASYNC_CACHE/dist"

echo "== go vet"
go vet ./...
echo "== golangci-lint (.golangci.yml)"
"$DELTASYNC_GOLANGCI_LINT" run ./...
echo "== go test -race ./..."
# -v into a log, so the log names every test; shown here: each package's
# result and each top-level test's PASS/FAIL/SKIP line (with the skip's
# reason), so a real-server test that skipped is visible by name.
log="$DELTASYNC_CACHE/go-test.log"
status=0
go test -race -timeout 20m -v ./... >"$log" 2>&1 || status=$?
grep -E -A1 '^--- SKIP' "$log" | grep -v '^--$' || true
grep -E '^(ok  |FAIL|--- (PASS|FAIL)|panic: )' "$log" || true
if [ "$status" -ne 0 ]; then
	echo "== go test failed (exit $status); its whole output:"
	cat "$log"
fi
# Every fuzz target for a fixed budget (DELTASYNC_FUZZTIME, 15s each); a
# failing input lands in the package's testdata/fuzz and fails the run.
echo "== .ci/fuzz.sh"
bash .ci/fuzz.sh || status=$?
exit "$status"
