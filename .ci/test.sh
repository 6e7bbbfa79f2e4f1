#!/usr/bin/env bash
# The test command behind `make test` and CI. It installs what the tests need,
# starts the services they use on 127.0.0.1, runs the Go tests with the race
# detector, and stops the services whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
export DELTASYNC_CACHE="${DELTASYNC_CACHE:-$PWD/.cache}"
mkdir -p "$DELTASYNC_CACHE"

# In CI a test that needs an outside part fails instead of skipping.
if [ "${CI:-}" = "true" ]; then export DELTASYNC_REQUIRE_EXTERNAL=1; fi

cleanup() {
	for s in .ci/setup-*.sh; do [ -f "$s" ] && bash "$s" stop || true; done
}
trap cleanup EXIT

# Each setup script installs its part if missing, starts it if it is a
# service, and prints `export NAME=value` lines for the tests.
for s in .ci/setup-*.sh; do
	[ -f "$s" ] || continue
	echo "== $s"
	eval "$(bash "$s" start)"
done

echo "== go vet"
go vet ./...
echo "== go test -race ./..."
go test -race -timeout 20m ./...
