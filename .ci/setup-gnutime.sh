#!/usr/bin/env bash
# setup-gnutime.sh start|stop — GNU time (Debian's package `time`), with
# which TestIsolation measures the peak RSS of the deltasync binary (Go's
# ru_maxrss of an exec'd child carries the test process's own RSS).
#
# `start` prints nothing on stdout (TestIsolation looks for /usr/bin/time).
# When it is missing: in CI (CI=true) and as root it is installed with
# apt-get; elsewhere the reason goes to stderr and the test skips.
set -uo pipefail

log() { echo "setup-gnutime: $*" >&2; }

start() {
	[ -x /usr/bin/time ] && return 0
	if [ "${CI:-}" != "true" ] || [ "$(id -u)" != 0 ]; then
		log "/usr/bin/time missing: apt-get install time (TestIsolation skips without it)"
		return 0
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-cache show time >/dev/null 2>&1; then
		apt-get update -qq >&2
	fi
	log "apt-get install time"
	if ! apt-get install -y -qq --no-install-recommends time >&2; then
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends time >&2 || { log "FAILED: apt-get install time"; return 1; }
	fi
}

case "${1:-}" in
start) start ;;
stop) ;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
