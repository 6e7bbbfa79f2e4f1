#!/usr/bin/env bash
# setup-moto.sh start|stop — moto's server on 127.0.0.1, the AWS Glue (and
# S3, STS) API the Glue catalog-kind tests (catalog/glue, internal/fakeglue)
# run against. moto ignores UpdateTable's VersionId and SkipArchive and
# GetTables' MaxResults; internal/fakeglue is the proxy that answers as Glue
# does there, and its contract test pins both.
#
# `start` creates its own venv $DELTASYNC_CACHE/moto/venv (kept apart from
# setup-python.sh's venv: moto pins boto3/botocore/Flask, which that venv
# does not need) with the pinned moto[server] when missing, starts
# moto_server on a free port unless the one this script started still
# answers, and prints ONLY `export DELTASYNC_MOTO_URL=http://127.0.0.1:PORT`
# and `export DELTASYNC_MOTO_PYTHON=<venv python>` (it has boto3, for the
# test that reads a record back with it) on stdout (.ci/test.sh evals
# them); everything else goes to stderr.
# Idempotent. Every failure exits non-zero with the reason and the server's
# log. `stop` stops only the server this script started (its pid file).
set -euo pipefail

log() { echo "setup-moto: $*" >&2; }

DIR="$(cd "$(dirname "$0")" && pwd)"
CACHE="${DELTASYNC_CACHE:-$(cd "$DIR/.." && pwd)/.cache}"
HOME_DIR="$CACHE/moto"
MOTO_VERSION="${DELTASYNC_MOTO_VERSION:-5.2.6}"
VENV="$HOME_DIR/venv"
PY="$VENV/bin/python"
PIDFILE="$HOME_DIR/server.pid"
PORTFILE="$HOME_DIR/server.port"
SERVER_LOG="$HOME_DIR/server.log"

# answers: a Glue call (GetDatabases; moto answers it without signature
# checks) gets a 200 at $1.
answers() {
	curl -fsS -m 2 -X POST "$1/" \
		-H 'Content-Type: application/x-amz-json-1.1' \
		-H 'X-Amz-Target: AWSGlue.GetDatabases' \
		-H 'Authorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/glue/aws4_request, SignedHeaders=host, Signature=0' \
		-d '{}' >/dev/null 2>&1
}

install() {
	if [ ! -x "$PY" ]; then
		local base
		base="$(command -v python3 || true)"
		[ -n "$base" ] || { log "python3 not found; install python3 (with venv) to run the Glue tests"; exit 1; }
		mkdir -p "$HOME_DIR"
		log "creating venv $VENV with $($base --version 2>&1)"
		"$base" -m venv "$VENV" >&2 || { log "python3 -m venv failed (Debian: apt-get install python3-venv)"; exit 1; }
	fi
	if ! "$PY" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('moto') == '$MOTO_VERSION' else 1)" 2>/dev/null; then
		log "installing moto[server]==$MOTO_VERSION"
		"$PY" -m pip install --disable-pip-version-check -q "moto[server]==$MOTO_VERSION" >&2 ||
			{ log "pip install moto[server]==$MOTO_VERSION failed (its messages are above)"; exit 1; }
	fi
}

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

start() {
	mkdir -p "$HOME_DIR"
	if running && [ -f "$PORTFILE" ] && answers "http://127.0.0.1:$(cat "$PORTFILE")"; then
		log "moto already answers at http://127.0.0.1:$(cat "$PORTFILE")"
		echo "export DELTASYNC_MOTO_URL=http://127.0.0.1:$(cat "$PORTFILE")"
		echo "export DELTASYNC_MOTO_PYTHON=$PY"
		return 0
	fi
	stop
	install
	local port url pid
	port="${DELTASYNC_MOTO_PORT:-$(free_port)}"
	url="http://127.0.0.1:$port"
	log "starting moto $MOTO_VERSION on $url"
	nohup "$VENV/bin/moto_server" -H 127.0.0.1 -p "$port" >"$SERVER_LOG" 2>&1 &
	pid=$!
	echo "$pid" >"$PIDFILE"
	echo "$port" >"$PORTFILE"
	for _ in $(seq 1 120); do
		if answers "$url"; then
			echo "export DELTASYNC_MOTO_URL=$url"
			echo "export DELTASYNC_MOTO_PYTHON=$PY"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "moto (pid $pid) did not answer a Glue GetDatabases at $url within 30 s; its log:"
		kill "$pid" 2>/dev/null || true
	else
		log "moto_server exited before answering (port $port taken?); its log:"
	fi
	rm -f "$PIDFILE" "$PORTFILE"
	tail -n 30 "$SERVER_LOG" >&2 || true
	exit 1
}

stop() {
	if [ -f "$PIDFILE" ]; then
		local pid
		pid="$(cat "$PIDFILE")"
		# Only our moto_server: the pid file may be stale and the pid reused.
		if grep -qa moto_server "/proc/$pid/cmdline" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			for _ in $(seq 1 20); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.25
			done
		fi
		rm -f "$PIDFILE" "$PORTFILE"
	fi
	return 0
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
