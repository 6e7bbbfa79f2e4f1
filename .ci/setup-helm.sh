#!/usr/bin/env bash
# setup-helm.sh start|stop — the helm binary (pinned) for the chart tests
# (deploy/helm_test.go: helm template, helm lint).
#
# Helm's release downloads are not reachable from CI, so helm is built from
# its module, helm.sh/helm/v3, through the Go module proxy. Built as a binary
# rather than imported by the tests: the chart engine drags in client-go and
# most of k8s.io (~150 modules) that deltasync's go.mod, go.sum and
# govulncheck would then carry for a test. Cold build here: about 8 minutes
# (mostly downloads, on 2 shared cores); cached afterwards in $DELTASYNC_CACHE.
#
# `start` installs what is missing and prints ONLY `export DELTASYNC_HELM=<binary>`
# on stdout (.ci/test.sh evals it); logs go to stderr. Nothing runs as a
# service, so `stop` does nothing.
set -euo pipefail

log() { echo "setup-helm: $*" >&2; }

HELM_VERSION="v3.22.0"
CACHE="${DELTASYNC_CACHE:-$(cd "$(dirname "$0")/.." && pwd)/.cache}"
BIN="$CACHE/helm-$HELM_VERSION/bin"

start() {
	mkdir -p "$CACHE"
	if [ ! -x "$BIN/helm" ]; then
		log "building helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
		GOBIN="$BIN" GOFLAGS=-mod=mod go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
	fi
	echo "export DELTASYNC_HELM=$BIN/helm"
}

case "${1:-}" in
start) start ;;
stop) : ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
