#!/usr/bin/env bash
# setup-golangci-lint.sh start|stop — golangci-lint, pinned, for the lint
# step of .ci/test.sh (configured by .golangci.yml at the repository root).
#
# Built from source with `go install` through the Go module proxy (no
# prebuilt binary is downloaded), into the cache, once per version. Bump
# GOLANGCI_LINT_VERSION to move to a newer release; fix what it then finds.
#
# `start` installs what is missing and prints ONLY
# `export DELTASYNC_GOLANGCI_LINT=<binary>` on stdout (.ci/test.sh evals it);
# logs go to stderr. Nothing runs as a service, so `stop` does nothing.
set -euo pipefail

log() { echo "setup-golangci-lint: $*" >&2; }

GOLANGCI_LINT_VERSION="v2.15.0"
CACHE="${DELTASYNC_CACHE:-$(cd "$(dirname "$0")/.." && pwd)/.cache}"
BIN="$CACHE/golangci-lint-$GOLANGCI_LINT_VERSION/bin"

start() {
	mkdir -p "$CACHE"
	if [ ! -x "$BIN/golangci-lint" ]; then
		log "installing github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION (a few minutes, once)"
		GOBIN="$BIN" GOFLAGS=-mod=mod go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION" >&2
	fi
	echo "export DELTASYNC_GOLANGCI_LINT=$BIN/golangci-lint"
}

case "${1:-}" in
start) start ;;
stop) : ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
