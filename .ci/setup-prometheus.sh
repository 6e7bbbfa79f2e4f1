#!/usr/bin/env bash
# setup-prometheus.sh start|stop — makes promtool (and the prometheus binary)
# available to the deploy tests, which check and unit-test
# deploy/monitoring/alerts.yaml and the dashboard's queries.
#
# `start` installs Debian's prometheus package when promtool or prometheus is
# missing, makes sure the package leaves no service running on :9090, and
# prints ONLY `export NAME=value` lines on stdout (.ci/test.sh evals them);
# the install (apt, /usr/sbin/policy-rc.d, disabling the packaged service)
# changes the host, so it happens only in CI (CI=true): on a developer's
# machine `start` says what to install and prints nothing, and the tests
# that need promtool skip;
# everything else goes to stderr. It is idempotent and returns at once when
# the tools are already there. `stop` has nothing to stop: the tests run
# promtool as a command, no Prometheus server is kept running.
set -euo pipefail

log() { echo "setup-prometheus: $*" >&2; }

PROMTOOL=/usr/bin/promtool
PROMETHEUS=/usr/bin/prometheus

# no_service_start installs a policy-rc.d that forbids invoke-rc.d from
# starting services during the install, keeping any existing one aside.
POLICY=/usr/sbin/policy-rc.d
POLICY_SAVED=""
no_service_start() {
	if [ -e "$POLICY" ]; then
		POLICY_SAVED="$(mktemp)"
		cp -p "$POLICY" "$POLICY_SAVED"
	fi
	printf '#!/bin/sh\n# written by deltasync .ci/setup-prometheus.sh during apt-get install\nexit 101\n' >"$POLICY"
	chmod 0755 "$POLICY"
}
restore_policy() {
	if [ -n "$POLICY_SAVED" ]; then
		cp -p "$POLICY_SAVED" "$POLICY"
		rm -f "$POLICY_SAVED"
	else
		rm -f "$POLICY"
	fi
}

# stop_packaged_service makes sure the package's own service is not left
# running: it disables the unit/init script and ends only a prometheus process
# run by the package's "prometheus" user (the one the postinst would start).
stop_packaged_service() {
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
	if command -v update-rc.d >/dev/null 2>&1 && [ -e /etc/init.d/prometheus ]; then
		update-rc.d prometheus disable >/dev/null 2>&1 || true
	fi
	if id prometheus >/dev/null 2>&1; then
		local pid
		for pid in $(pgrep -u prometheus -x prometheus 2>/dev/null || true); do
			log "stopping the packaged prometheus service (pid $pid)"
			kill "$pid" 2>/dev/null || true
		done
	fi
}

install() {
	if [ "$(id -u)" != 0 ]; then
		log "promtool/prometheus missing and not root: install Debian's prometheus package yourself"
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	# One apt-get update, only when the package is unknown to apt.
	if ! apt-cache show prometheus >/dev/null 2>&1; then
		log "apt-get update"
		apt-get update -qq >&2
	fi
	no_service_start
	trap restore_policy EXIT
	log "apt-get install prometheus"
	if ! apt-get install -y -qq --no-install-recommends prometheus >&2; then
		log "install failed; retrying after apt-get update"
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends prometheus >&2
	fi
	restore_policy
	trap - EXIT
	stop_packaged_service
}

case "${1:-}" in
start)
	if [ ! -x "$PROMTOOL" ] || [ ! -x "$PROMETHEUS" ]; then
		if [ "${CI:-}" != "true" ]; then
			log "promtool/prometheus missing; the deploy tests that need them skip. To run them, install Debian's prometheus package (apt-get install --no-install-recommends prometheus; it starts a Prometheus service on :9090: systemctl disable --now prometheus)"
			exit 0
		fi
		install
	fi
	log "$("$PROMTOOL" --version 2>&1 | head -n1)"
	echo "export DELTASYNC_PROMTOOL=$PROMTOOL"
	echo "export DELTASYNC_PROMETHEUS=$PROMETHEUS"
	;;
stop)
	# Nothing of ours is running; the tests only run promtool.
	:
	;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
