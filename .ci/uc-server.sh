#!/usr/bin/env bash
# uc-server.sh up|down|status — run a real Unity Catalog OSS server on
# 127.0.0.1 for the contract suite (catalog/contract), from its published
# artifact. Used by `make uc-up` / `make uc-down` and by .ci/setup-uc.sh.
#
# `up` finds the server's runtime classpath, in this order:
#   1. $UC_SERVER_CLASSPATH  a ready java classpath (e.g. "/opt/uc/jars/*");
#   2. $UC_SERVER_JAR_DIR    a folder holding the server jar and its dependencies
#      (default: ../shared/uc-server beside the repo, when it holds jars, so that
#      CI runs the real-server tests as soon as the jars are placed there);
#   3. a cached copy in $DELTASYNC_CACHE/uc-server/jars-<version> from an earlier run;
#   4. Maven Central: io.unitycatalog:unitycatalog-server, newest release in
#      [$UC_SERVER_MIN_VERSION, $UC_SERVER_MAX_VERSION) (default [0.5.0, 0.10.0)),
#      resolved with `mvn dependency:copy-dependencies` from a throwaway pom.
# It then starts `java -cp <jars> io.unitycatalog.server.UnityCatalogServer --port <port>`
# in a fresh working directory holding etc/conf/server.properties
# (server.env=dev, server.authorization=disable) and etc/conf/hibernate.properties
# (H2 file store), waits until GET /api/2.1/unity-catalog/catalogs answers and
# prints ONLY `export DELTASYNC_UC_URL=http://127.0.0.1:<port>/api/2.1/unity-catalog`
# on stdout (logs go to stderr).
#
# When no classpath can be had it says on stderr which command failed with
# which error and exits 1. As of this writing Maven Central publishes
# unitycatalog-client and unitycatalog-hadoop but NOT unitycatalog-server,
# so without one of the overrides `up` fails (quickly: one mvn call).
#
# The server has no bind-address option: it listens on all interfaces, on
# UC_SERVER_PORT (a URL transcoder) and UC_SERVER_PORT+1 (the API itself); both
# must be free. Clients use 127.0.0.1:UC_SERVER_PORT.
#
# Environment: UC_SERVER_PORT (default 18080), DELTASYNC_CACHE (default
# <repo>/.cache), UC_SERVER_START_TIMEOUT seconds (default 120), UC_SERVER_JAVA (default java).
set -euo pipefail

log() { echo "uc-server: $*" >&2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${DELTASYNC_CACHE:-$ROOT/.cache}"
STATE="$CACHE/uc-server"
PORT="${UC_SERVER_PORT:-18080}"
JAVA="${UC_SERVER_JAVA:-java}"
MIN_VERSION="${UC_SERVER_MIN_VERSION:-0.5.0}"
MAX_VERSION="${UC_SERVER_MAX_VERSION:-0.10.0}"
TIMEOUT="${UC_SERVER_START_TIMEOUT:-120}"
URL="http://127.0.0.1:$PORT/api/2.1/unity-catalog"

answers() { curl -fsS -m 2 -o /dev/null "$URL/catalogs" 2>/dev/null; }

running_pid() {
	local pid
	[ -f "$STATE/pid" ] || return 1
	pid="$(cat "$STATE/pid")"
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# resolve_classpath prints a java classpath on stdout or fails with the reason on stderr.
resolve_classpath() {
	if [ -n "${UC_SERVER_CLASSPATH:-}" ]; then
		log "using UC_SERVER_CLASSPATH"
		echo "$UC_SERVER_CLASSPATH"
		return
	fi
	if [ -z "${UC_SERVER_JAR_DIR:-}" ] && ls "$ROOT/../shared/uc-server"/*.jar >/dev/null 2>&1; then
		UC_SERVER_JAR_DIR="$ROOT/../shared/uc-server"
	fi
	if [ -n "${UC_SERVER_JAR_DIR:-}" ]; then
		if ! ls "$UC_SERVER_JAR_DIR"/*.jar >/dev/null 2>&1; then
			log "UC_SERVER_JAR_DIR=$UC_SERVER_JAR_DIR holds no *.jar"
			return 1
		fi
		log "using the jars in UC_SERVER_JAR_DIR=$UC_SERVER_JAR_DIR"
		echo "$(cd "$UC_SERVER_JAR_DIR" && pwd)/*"
		return
	fi
	local cached
	cached="$(ls -d "$STATE"/jars-* 2>/dev/null | sort -V | tail -n 1 || true)"
	if [ -n "$cached" ] && ls "$cached"/unitycatalog-server-*.jar >/dev/null 2>&1; then
		log "using cached jars $cached"
		echo "$cached/*"
		return
	fi
	resolve_from_maven
}

resolve_from_maven() {
	command -v mvn >/dev/null || { log "mvn is not installed (apt-get install maven), and neither UC_SERVER_CLASSPATH nor UC_SERVER_JAR_DIR is set"; return 1; }
	local work range cmd out
	work="$STATE/maven"
	range="[$MIN_VERSION,$MAX_VERSION)"
	rm -rf "$work" && mkdir -p "$work/jars"
	# A version range makes Maven pick the newest published release in one call.
	cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>deltasync.local</groupId>
  <artifactId>uc-server-classpath</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.unitycatalog</groupId>
      <artifactId>unitycatalog-server</artifactId>
      <version>$range</version>
    </dependency>
  </dependencies>
</project>
EOF
	cmd=(mvn -B -q -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$work/jars")
	log "resolving io.unitycatalog:unitycatalog-server:$range from Maven Central"
	if ! out="$(timeout 50 "${cmd[@]}" 2>&1)"; then
		log "FAILED: ${cmd[*]}"
		echo "$out" | sed 's/\x1b\[[0-9;]*m//g' | grep -E 'No versions|Could not|Missing|ERROR\] Failed' | head -n 3 >&2 || echo "$out" | tail -n 8 >&2
		log "Maven Central does not publish io.unitycatalog:unitycatalog-server (only unitycatalog-client and unitycatalog-hadoop)."
		log "Put the server jar and its runtime dependencies in ../shared/uc-server, or point UC_SERVER_JAR_DIR (or UC_SERVER_CLASSPATH) at them, and retry."
		return 1
	fi
	local jar version
	jar="$(ls "$work"/jars/unitycatalog-server-*.jar 2>/dev/null | head -n 1 || true)"
	if [ -z "$jar" ]; then
		log "FAILED: ${cmd[*]} succeeded but copied no unitycatalog-server jar"
		return 1
	fi
	version="$(basename "$jar" .jar)"
	version="${version#unitycatalog-server-}"
	rm -rf "$STATE/jars-$version"
	mv "$work/jars" "$STATE/jars-$version"
	log "resolved unitycatalog-server $version"
	echo "$STATE/jars-$version/*"
}

write_conf() {
	local dir="$1"
	mkdir -p "$dir/etc/conf" "$dir/etc/db" "$dir/etc/data/managed"
	cat >"$dir/etc/conf/server.properties" <<EOF
server.env=dev
server.authorization=disable
storage-root.models=file://$dir/etc/data/models
storage-root.tables=file://$dir/etc/data/managed
EOF
	cat >"$dir/etc/conf/hibernate.properties" <<EOF
hibernate.connection.driver_class=org.h2.Driver
hibernate.connection.url=jdbc:h2:file:./etc/db/h2db;DB_CLOSE_DELAY=-1
hibernate.hbm2ddl.auto=update
hibernate.show_sql=false
hibernate.archive.autodetection=class
hibernate.use_sql_comments=true
EOF
}

up() {
	mkdir -p "$STATE"
	if running_pid >/dev/null && answers; then
		log "already running (pid $(cat "$STATE/pid")) on port $PORT"
		echo "export DELTASYNC_UC_URL=$URL"
		return
	fi
	if answers || curl -s -m 2 -o /dev/null "http://127.0.0.1:$((PORT + 1))/" 2>/dev/null; then
		log "port $PORT or $((PORT + 1)) is already taken; set UC_SERVER_PORT to a free pair"
		exit 1
	fi
	command -v "$JAVA" >/dev/null || { log "FAILED: $JAVA not found (install a JDK 17)"; exit 1; }
	local cp run pid waited=0
	cp="$(resolve_classpath)" || exit 1
	run="$STATE/run"
	rm -rf "$run"
	write_conf "$run"
	log "starting io.unitycatalog.server.UnityCatalogServer on 127.0.0.1:$PORT in $run (log $STATE/server.log)"
	(cd "$run" && exec nohup "$JAVA" -cp "$cp" io.unitycatalog.server.UnityCatalogServer --port "$PORT" >"$STATE/server.log" 2>&1) &
	pid=$!
	echo "$pid" >"$STATE/pid"
	until answers; do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "FAILED: the server exited during start-up; last log lines:"
			tail -n 20 "$STATE/server.log" >&2 || true
			rm -f "$STATE/pid"
			exit 1
		fi
		if [ "$waited" -ge "$TIMEOUT" ]; then
			log "FAILED: no answer from $URL/catalogs after ${TIMEOUT}s; last log lines:"
			tail -n 20 "$STATE/server.log" >&2 || true
			down
			exit 1
		fi
		sleep 1
		waited=$((waited + 1))
	done
	log "up after ${waited}s"
	echo "export DELTASYNC_UC_URL=$URL"
}

down() {
	local pid
	if pid="$(running_pid)"; then
		log "stopping pid $pid"
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$STATE/pid"
}

case "${1:-}" in
up) up ;;
down) down ;;
status) if running_pid >/dev/null && answers; then echo "running: $URL"; else echo "not running"; exit 1; fi ;;
*) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
