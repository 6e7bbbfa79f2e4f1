#!/usr/bin/env bash
# setup-uc.sh start|stop — a real Unity Catalog server for the contract suite
# (catalog/contract), wrapped for .ci/test.sh.
#
# `start` runs `.ci/uc-server.sh up`. When it succeeds, it prints ONLY
# `export DELTASYNC_UC_URL=...` on stdout. When no server can be had (Maven
# Central does not publish unitycatalog-server; see uc-server.sh for the
# UC_SERVER_JAR_DIR / UC_SERVER_CLASSPATH overrides) it prints nothing on
# stdout, the reason on stderr, and exits 0 so CI still runs everything
# else; the real-server tests then skip, saying why (they fail only when
# DELTASYNC_REQUIRE_UC=1, for a machine that is meant to have the server).
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
		return 0
	fi
	local out was_running=0
	bash "$DIR/uc-server.sh" status >/dev/null 2>&1 && was_running=1
	if out="$(bash "$DIR/uc-server.sh" up)"; then
		# Stop it at the end only if this script started it (not `make uc-up`).
		if [ "$was_running" = 0 ]; then mkdir -p "$(dirname "$MARK")" && touch "$MARK"; fi
		echo "$out" | grep '^export DELTASYNC_UC_URL=' || true
	else
		log "no real Unity Catalog server: the real-server contract test will not run (see the uc-server lines above)"
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
