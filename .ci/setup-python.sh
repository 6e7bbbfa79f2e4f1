#!/usr/bin/env bash
# setup-python.sh start|stop — a Python venv with delta-rs (`deltalake`) and
# pyarrow, for the deltalog differential test and the peer benchmark, and
# openlineage-python, whose generated classes check deltasync's OpenLineage
# events (sync/notify).
#
# `start` creates $DELTASYNC_CACHE/venv when missing, pip-installs the pinned
# packages when they are not already there, and prints ONLY
# `export DELTASYNC_PYTHON=<venv python>` on stdout (.ci/test.sh evals it);
# logs go to stderr. Nothing runs as a service, so `stop` does nothing.
set -euo pipefail

log() { echo "setup-python: $*" >&2; }

DELTALAKE_VERSION="${DELTASYNC_DELTALAKE_VERSION:-1.6.6}"
PYARROW_SPEC="pyarrow==26.0.1"
OPENLINEAGE_VERSION="1.54.0"
CACHE="${DELTASYNC_CACHE:-$(cd "$(dirname "$0")/.." && pwd)/.cache}"
VENV="$CACHE/venv"
PY="$VENV/bin/python"

start() {
	mkdir -p "$CACHE"
	if [ ! -x "$PY" ]; then
		local base
		base="$(command -v python3 || true)"
		[ -n "$base" ] || { log "python3 not found"; exit 1; }
		log "creating venv $VENV with $($base --version 2>&1)"
		"$base" -m venv "$VENV" >&2
	fi
	if ! "$PY" -c "import deltalake, pyarrow, sys; sys.exit(0 if deltalake.__version__ == '$DELTALAKE_VERSION' else 1)" 2>/dev/null; then
		log "installing deltalake==$DELTALAKE_VERSION and pyarrow"
		"$PY" -m pip install --disable-pip-version-check -q "deltalake==$DELTALAKE_VERSION" "$PYARROW_SPEC" >&2
	fi
	if ! "$PY" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('openlineage-python') == '$OPENLINEAGE_VERSION' else 1)" 2>/dev/null; then
		log "installing openlineage-python==$OPENLINEAGE_VERSION"
		"$PY" -m pip install --disable-pip-version-check -q "openlineage-python==$OPENLINEAGE_VERSION" >&2
	fi
	echo "export DELTASYNC_PYTHON=$PY"
}

case "${1:-}" in
start) start ;;
stop) : ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
