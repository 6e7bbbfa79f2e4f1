#!/usr/bin/env bash
# setup-cyclonedx.sh start|stop — cyclonedx-gomod (pinned), which writes the
# release's SBOM (CycloneDX, from the module graph of ./cmd/deltasync) for
# `make release` (.ci/release.sh). Built from the Go module proxy (~1 minute
# cold), cached in $DELTASYNC_CACHE.
#
# `start` installs what is missing and prints ONLY
# `export DELTASYNC_CYCLONEDX_GOMOD=<binary>` on stdout; logs go to stderr.
set -euo pipefail

log() { echo "setup-cyclonedx: $*" >&2; }

CYCLONEDX_GOMOD_VERSION="v1.10.0"
CACHE="${DELTASYNC_CACHE:-$(cd "$(dirname "$0")/.." && pwd)/.cache}"
BIN="$CACHE/cyclonedx-gomod-$CYCLONEDX_GOMOD_VERSION/bin"

start() {
	mkdir -p "$CACHE"
	if [ ! -x "$BIN/cyclonedx-gomod" ]; then
		log "installing github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$CYCLONEDX_GOMOD_VERSION"
		GOBIN="$BIN" GOFLAGS=-mod=mod go install "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$CYCLONEDX_GOMOD_VERSION" >&2
	fi
	echo "export DELTASYNC_CYCLONEDX_GOMOD=$BIN/cyclonedx-gomod"
}

case "${1:-}" in
start) start ;;
stop) : ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
