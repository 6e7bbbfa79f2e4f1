#!/usr/bin/env bash
# setup-govulncheck.sh start|stop — govulncheck and a Go vulnerability
# database, both pinned, for the vulnerability test (deploy/vuln_test.go).
#
# vuln.go.dev is not reachable from CI, so the database is built from the
# golang.org/x/vulndb module (its data/osv/*.json, fetched through the Go
# module proxy like any module) with that module's own cmd/indexdb, and
# govulncheck reads it with -db file://. Bump VULNDB_VERSION to a newer
# pseudo-version (`go list -m golang.org/x/vulndb@latest`) to get newer
# reports.
#
# `start` installs what is missing and prints ONLY
# `export DELTASYNC_GOVULNCHECK=<binary>` and `export DELTASYNC_VULNDB=<dir>`
# on stdout (.ci/test.sh evals it); logs go to stderr. Nothing runs as a
# service, so `stop` does nothing.
set -euo pipefail

log() { echo "setup-govulncheck: $*" >&2; }

GOVULNCHECK_VERSION="v1.9.0"
VULNDB_VERSION="v0.0.0-20261105234957-e22db6528018"
CACHE="${DELTASYNC_CACHE:-$(cd "$(dirname "$0")/.." && pwd)/.cache}"
BIN="$CACHE/govulncheck-$GOVULNCHECK_VERSION/bin"
DB="$CACHE/vulndb-$VULNDB_VERSION"

start() {
	mkdir -p "$CACHE"
	if [ ! -x "$BIN/govulncheck" ]; then
		log "installing golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION"
		GOBIN="$BIN" GOFLAGS=-mod=mod go install "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" >&2
	fi
	if [ ! -f "$DB/index/db.json" ]; then
		log "building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION"
		local src
		src="$(GOFLAGS=-mod=mod go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
		[ -d "$src/data/osv" ] || { log "no data/osv in $src"; exit 1; }
		rm -rf "$DB.tmp"
		GOFLAGS=-mod=mod go run "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION" -vulns "$src/data/osv" -out "$DB.tmp" >&2
		rm -rf "$DB"
		mv "$DB.tmp" "$DB"
	fi
	echo "export DELTASYNC_GOVULNCHECK=$BIN/govulncheck"
	echo "export DELTASYNC_VULNDB=$DB"
}

case "${1:-}" in
start) start ;;
stop) : ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
