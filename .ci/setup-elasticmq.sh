#!/usr/bin/env bash
# setup-elasticmq.sh start|stop — an SQS-compatible server (ElasticMQ) on
# 127.0.0.1 for the event tests, which drive it through gocloud's awssnssqs
# driver exactly as the daemon drives Amazon SQS.
#
# `start` fetches org.elasticmq:elasticmq-server_2.13 and its runtime jars
# from Maven Central (with Debian's maven, installed if missing) into
# $DELTASYNC_CACHE/elasticmq (java and maven are installed with apt in CI
# only, CI=true; on a developer's machine without them it says what to
# install, prints nothing and the SQS tests skip), starts it unless it
# already answers, and prints
# ONLY `export DELTASYNC_SQS_ENDPOINT=http://127.0.0.1:PORT` on stdout
# (.ci/test.sh evals it); everything else goes to stderr. Idempotent.
# `stop` stops only a server this script started.
set -euo pipefail

log() { echo "setup-elasticmq: $*" >&2; }

DIR="$(cd "$(dirname "$0")" && pwd)"
CACHE="${DELTASYNC_CACHE:-$(cd "$DIR/.." && pwd)/.cache}"
HOME_DIR="$CACHE/elasticmq"
VERSION="${ELASTICMQ_VERSION:-1.7.1}"
PORT="${ELASTICMQ_PORT:-19324}"
LIB="$HOME_DIR/lib-$VERSION"
PIDFILE="$HOME_DIR/server.pid"
ENDPOINT="http://127.0.0.1:$PORT"

answers() { curl -fsS -m 2 "$ENDPOINT/?Action=ListQueues" >/dev/null 2>&1; }

install() {
	if [ -f "$LIB/.complete" ]; then
		return 0
	fi
	if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
		if [ "$(id -u)" != 0 ]; then
			log "need java and maven (apt-get install default-jre-headless maven) and am not root"
			exit 1
		fi
		log "installing java and maven from Debian"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q default-jre-headless maven >&2
	fi
	mkdir -p "$HOME_DIR"
	local pom="$HOME_DIR/pom-$VERSION.xml"
	cat >"$pom" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>deltasync.ci</groupId>
  <artifactId>elasticmq-runtime</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.elasticmq</groupId>
      <artifactId>elasticmq-server_2.13</artifactId>
      <version>$VERSION</version>
    </dependency>
  </dependencies>
</project>
POM
	log "fetching elasticmq-server $VERSION and its runtime jars from Maven Central"
	rm -rf "$LIB"
	mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB" >&2
	touch "$LIB/.complete"
}

start() {
	if answers; then
		log "ElasticMQ already answers at $ENDPOINT"
		echo "export DELTASYNC_SQS_ENDPOINT=$ENDPOINT"
		return 0
	fi
	if [ "${CI:-}" != "true" ] && { ! command -v java >/dev/null 2>&1 || { [ ! -f "$LIB/.complete" ] && ! command -v mvn >/dev/null 2>&1; }; }; then
		log "java or maven missing; the SQS event tests skip. To run them, install java and maven (apt-get install default-jre-headless maven)"
		return 0
	fi
	install
	local conf="$HOME_DIR/elasticmq.conf"
	cat >"$conf" <<CONF
include classpath("application.conf")
node-address { protocol = http, host = 127.0.0.1, port = $PORT, context-path = "" }
rest-sqs { enabled = true, bind-port = $PORT, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
CONF
	log "starting ElasticMQ on $ENDPOINT"
	nohup java -Xmx256m -Dconfig.file="$conf" -cp "$LIB/*" org.elasticmq.server.Main >"$HOME_DIR/server.log" 2>&1 &
	echo $! >"$PIDFILE"
	for _ in $(seq 1 120); do
		if answers; then
			echo "export DELTASYNC_SQS_ENDPOINT=$ENDPOINT"
			return 0
		fi
		if ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	log "ElasticMQ did not come up; its log:"
	tail -n 30 "$HOME_DIR/server.log" >&2 || true
	exit 1
}

stop() {
	if [ -f "$PIDFILE" ]; then
		local pid
		pid="$(cat "$PIDFILE")"
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 20); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.25
		done
		rm -f "$PIDFILE"
	fi
	return 0
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
