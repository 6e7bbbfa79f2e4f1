#!/usr/bin/env bash
# setup-azurite.sh start|stop — runs Azurite (the Azure Blob Storage
# emulator) for the deltalog storage contract test.
#
# `start` installs azurite@3.37.0 with npm into $DELTASYNC_CACHE/azurite when
# missing, starts azurite-blob on 127.0.0.1 on a free port with a fresh data
# dir, waits until it answers, and prints ONLY `export NAME=value` lines on
# stdout (.ci/test.sh evals them); logs go to stderr and to
# $DELTASYNC_CACHE/azurite.log. `stop` ends the process it started (pid in
# $DELTASYNC_CACHE/azurite.pid; SIGTERM, then SIGKILL after 15 s) and returns
# only once it is gone, then removes its data dir.
set -euo pipefail

log() { echo "setup-azurite: $*" >&2; }

VERSION=3.37.0
CACHE="${DELTASYNC_CACHE:-$(cd "$(dirname "$0")/.." && pwd)/.cache}"
PREFIX="$CACHE/azurite"
PIDFILE="$CACHE/azurite.pid"
DATAFILE="$CACHE/azurite.datadir"
LOGFILE="$CACHE/azurite.log"
BIN="$PREFIX/node_modules/.bin/azurite-blob"
# The well-known Azurite development account (public, documented by Microsoft).
ACCOUNT=devstoreaccount1
KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

install() {
	if [ -x "$BIN" ] && [ "$(cat "$PREFIX/.version" 2>/dev/null)" = "$VERSION" ]; then
		return
	fi
	command -v npm >/dev/null || { log "npm not found (install nodejs >= 20)"; exit 1; }
	log "installing azurite@$VERSION into $PREFIX"
	mkdir -p "$PREFIX"
	npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "azurite@$VERSION" >&2
	echo "$VERSION" >"$PREFIX/.version"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null ||
		node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

running() {
	[ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

start() {
	mkdir -p "$CACHE"
	install
	if running; then
		log "already running (pid $(cat "$PIDFILE")); restarting"
		stop
	fi
	local port data pid
	port="$(free_port)"
	data="$(mktemp -d "${TMPDIR:-/tmp}/azurite.XXXXXX")"
	echo "$data" >"$DATAFILE"
	log "starting azurite-blob on 127.0.0.1:$port (data $data, log $LOGFILE)"
	nohup "$BIN" --blobHost 127.0.0.1 --blobPort "$port" --location "$data" \
		--skipApiVersionCheck --loose --silent >"$LOGFILE" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$PIDFILE"
	for _ in $(seq 1 150); do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "azurite exited; log follows"; cat "$LOGFILE" >&2; exit 1
		fi
		# Any HTTP answer (even 400/403) means it is serving.
		if curl -s -o /dev/null -m 1 "http://127.0.0.1:$port/$ACCOUNT?comp=list"; then
			local url="http://127.0.0.1:$port/$ACCOUNT"
			log "ready at $url"
			echo "export DELTASYNC_AZURITE_URL=$url"
			echo "export DELTASYNC_AZURITE_ACCOUNT=$ACCOUNT"
			echo "export DELTASYNC_AZURITE_KEY='$KEY'"
			return
		fi
		sleep 0.2
	done
	log "azurite did not answer on port $port within 30s"
	stop
	exit 1
}

stop() {
	if [ -f "$PIDFILE" ]; then
		local pid
		pid="$(cat "$PIDFILE")"
		if kill -0 "$pid" 2>/dev/null; then
			log "stopping azurite (pid $pid)"
			kill "$pid" 2>/dev/null || true
			# Stop means stopped: wait up to AZURITE_STOP_GRACE (15) s for
			# SIGTERM, then SIGKILL and wait again; the pid file goes only once
			# the process is gone.
			local grace="${AZURITE_STOP_GRACE:-15}"
			for _ in $(seq 1 $((grace * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			if kill -0 "$pid" 2>/dev/null; then
				log "azurite (pid $pid) ignored SIGTERM for ${grace}s; sending SIGKILL"
				kill -KILL "$pid" 2>/dev/null || true
				for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			fi
			if kill -0 "$pid" 2>/dev/null; then
				log "azurite (pid $pid) is still running after SIGKILL; leaving $PIDFILE in place"
				exit 1
			fi
		fi
		rm -f "$PIDFILE"
	fi
	if [ -f "$DATAFILE" ]; then
		rm -rf "$(cat "$DATAFILE")"
		rm -f "$DATAFILE"
	fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
