#!/usr/bin/env bash
# setup-chromium.sh start|stop — makes Debian's headless Chromium available to
# cmd/deltasync/browser_test.go, which renders the daemon's status page and
# saves a screenshot as a CI artifact.
#
# `start` installs the chromium package when /usr/bin/chromium is missing
# (one `apt-get update` first if apt does not know the package) in CI
# (CI=true) only: on a developer's machine it says what to install and the
# browser test skips. It creates the
# artifact directory and prints ONLY `export NAME=value` lines on stdout
# (.ci/test.sh evals them); logs go to stderr. It is idempotent and returns
# at once when Chromium is already installed. `stop` has nothing to stop:
# the tests start and end their own Chromium processes.
#
# Artifacts: tests write files meant for humans (screenshots) to
# $DELTASYNC_ARTIFACTS (= <repo>/.cache/artifacts, gitignored); CI uploads
# that directory.
set -euo pipefail

log() { echo "setup-chromium: $*" >&2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${DELTASYNC_CACHE:-$ROOT/.cache}"
ARTIFACTS="$CACHE/artifacts"
CHROMIUM=/usr/bin/chromium

install() {
	if [ "$(id -u)" != 0 ]; then
		log "chromium missing and not root: install Debian's chromium package yourself"
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-cache show chromium >/dev/null 2>&1; then
		log "apt-get update"
		apt-get update -qq >&2
	fi
	log "apt-get install chromium"
	if ! apt-get install -y -qq --no-install-recommends chromium >&2; then
		log "install failed; retrying after apt-get update"
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends chromium >&2
	fi
}

case "${1:-}" in
start)
	if [ ! -x "$CHROMIUM" ]; then
		if [ "${CI:-}" != "true" ]; then
			log "chromium missing; the status page's browser test skips. To run it, install Debian's chromium package (apt-get install --no-install-recommends chromium)"
			exit 0
		fi
		install
	fi
	log "$("$CHROMIUM" --version 2>/dev/null | head -n1)"
	mkdir -p "$ARTIFACTS"
	echo "export DELTASYNC_CHROMIUM=$CHROMIUM"
	echo "export DELTASYNC_ARTIFACTS=$ARTIFACTS"
	;;
stop)
	# Nothing of ours is running; each test ends its own Chromium.
	:
	;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
