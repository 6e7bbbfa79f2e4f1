#!/usr/bin/env bash
# setup-uc.sh start|stop — a real Unity Catalog server for the contract suite
# (catalog/contract), wrapped for .ci/test.sh.
#
# `start` runs `.ci/uc-server.sh up`, which starts the server from
# ../shared/uc-server (see there). When it succeeds, it prints ONLY
# `export DELTASYNC_UC_URL=...` and `export DELTASYNC_REQUIRE_UC=...` on stdout.
# When no server can be had:
#   - with CI=true or DELTASYNC_REQUIRE_UC=1 it exits 1: CI must run the
#     real-server tests, so a server that does not start fails the run;
#   - otherwise (a developer's machine) it prints nothing on stdout, the
#     reason on stderr, and exits 0; the real-server tests then skip, saying why.
# If DELTASYNC_UC_URL is already set, that server is used and nothing starts.
# `stop` stops only a server this script started.
set -uo pipefail

log() { echo "setup-uc: $*" >&2; }

DIR="$(cd "$(dirname "$0")" && pwd)"
CACHE="${DELTASYNC_CACHE:-$(cd "$DIR/.." && pwd)/.cache}"
MARK="$CACHE/uc-server/started-by-setup"

start() {
	if [ -n "${DELTASYNC_UC_URL:-}" ]; then
		log "using the server at DELTASYNC_UC_URL=$DELTASYNC_UC_URL"
		echo "export DELTASYNC_UC_URL=$DELTASYNC_UC_URL"
		if [ "${CI:-}" = "true" ]; then echo "export DELTASYNC_REQUIRE_UC=1"; fi
		return 0
	fi
	local out was_running=0 require=0
	if [ "${CI:-}" = "true" ] || [ "${DELTASYNC_REQUIRE_UC:-}" = "1" ]; then require=1; fi
	bash "$DIR/uc-server.sh" status >/dev/null 2>&1 && was_running=1
	if out="$(bash "$DIR/uc-server.sh" up)"; then
		# Stop it at the end only if this script started it (not `make uc-up`).
		if [ "$was_running" = 0 ]; then mkdir -p "$(dirname "$MARK")" && touch "$MARK"; fi
		echo "$out" | grep '^export DELTASYNC_UC_URL=' || true
		if [ "$require" = 1 ]; then echo "export DELTASYNC_REQUIRE_UC=1"; fi
	elif [ "$require" = 1 ]; then
		log "FAILED: no real Unity Catalog server, and CI=true / DELTASYNC_REQUIRE_UC=1 make the real-server tests mandatory (the uc-server lines above say why)"
		return 1
	else
		log "no real Unity Catalog server: the real-server tests will skip (the uc-server lines above say why)"
	fi
	return 0
}

stop() {
	if [ -f "$MARK" ]; then
		bash "$DIR/uc-server.sh" down || true
		rm -f "$MARK"
	fi
	return 0
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
