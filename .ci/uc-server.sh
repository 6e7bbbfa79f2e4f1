#!/usr/bin/env bash
# uc-server.sh up|down|status — run a real Unity Catalog OSS server on
# 127.0.0.1 for the contract suite (catalog/contract), from its published
# artifact. Used by `make uc-up` / `make uc-down` and by .ci/setup-uc.sh.
#
# `up` finds the server's runtime classpath, in this order:
#   1. $UC_SERVER_CLASSPATH  a ready java classpath (e.g. "/opt/uc/jars/*"), for
#      people with their own build;
#   2. $UC_SERVER_JAR_DIR    a folder holding the server jar and all its runtime
#      dependencies, likewise;
#   3. ../shared/uc-server/<version>/ beside the repo (the default; version
#      $UC_SERVER_VERSION, else the newest folder there): the server jar
#      unitycatalog-server-<version>.jar, built from Unity Catalog's release
#      tag because Maven Central does not publish it, and pom.xml, which pins
#      its 258 runtime jars by exact version. `mvn dependency:copy-dependencies`
#      fetches those from Maven Central into ~/.m2 and copies them to
#      $DELTASYNC_CACHE/uc-server/deps-<version> (once; reused while the pom is
#      unchanged). mvn runs on a copy of the pom in the cache, so nothing is
#      ever written into ../shared (read-only in CI).
# It then starts `java -cp <jars> io.unitycatalog.server.UnityCatalogServer --port <port>`
# in a fresh working directory holding etc/conf/server.properties
# (server.env=dev, server.authorization=disable) and etc/conf/hibernate.properties
# (H2 file store), waits until GET /api/2.1/unity-catalog/catalogs answers and
# prints ONLY `export DELTASYNC_UC_URL=http://127.0.0.1:<port>/api/2.1/unity-catalog`
# on stdout (logs go to stderr).
#
# Every failure says on stderr which command failed and why (for a server that
# does not come up: the last lines of its log) and exits 1.
#
# The server has no bind-address option: it listens on all interfaces, on
# UC_SERVER_PORT (a URL transcoder) and UC_SERVER_PORT+1 (the API itself); both
# must be free. Clients use 127.0.0.1:UC_SERVER_PORT.
#
# Environment: UC_SERVER_PORT (default 18080), UC_SERVER_VERSION (default: the
# newest in ../shared/uc-server), UC_SERVER_SHARED (default <repo>/../shared/uc-server),
# DELTASYNC_CACHE (default <repo>/.cache), UC_SERVER_START_TIMEOUT seconds
# (default 120), UC_SERVER_JAVA (default java).
set -euo pipefail

log() { echo "uc-server: $*" >&2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${DELTASYNC_CACHE:-$ROOT/.cache}"
STATE="$CACHE/uc-server"
PORT="${UC_SERVER_PORT:-18080}"
JAVA="${UC_SERVER_JAVA:-java}"
SHARED="${UC_SERVER_SHARED:-$(cd "$ROOT/.." && pwd)/shared/uc-server}"
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
	if [ -n "${UC_SERVER_JAR_DIR:-}" ]; then
		if ! ls "$UC_SERVER_JAR_DIR"/unitycatalog-server-*.jar >/dev/null 2>&1; then
			log "FAILED: UC_SERVER_JAR_DIR=$UC_SERVER_JAR_DIR holds no unitycatalog-server-*.jar"
			return 1
		fi
		log "using the jars in UC_SERVER_JAR_DIR=$UC_SERVER_JAR_DIR"
		echo "$(cd "$UC_SERVER_JAR_DIR" && pwd)/*"
		return
	fi
	from_shared
}

# from_shared resolves the server from ../shared/uc-server/<version>/: its jar
# plus the pinned dependencies, fetched once into the cache.
from_shared() {
	local version dir jar deps stamp sum cmd out
	if [ ! -d "$SHARED" ]; then
		log "FAILED: no $SHARED: the real Unity Catalog server is supplied there (<version>/unitycatalog-server-<version>.jar and <version>/pom.xml); put shared/ beside the repo, or set UC_SERVER_JAR_DIR or UC_SERVER_CLASSPATH to your own build"
		return 1
	fi
	version="${UC_SERVER_VERSION:-$(ls -1 "$SHARED" 2>/dev/null | grep -E '^[0-9]+\.[0-9]+\.[0-9]+' | sort -V | tail -n 1 || true)}"
	dir="$SHARED/$version"
	jar="$dir/unitycatalog-server-$version.jar"
	if [ -z "$version" ] || [ ! -f "$jar" ] || [ ! -f "$dir/pom.xml" ]; then
		log "FAILED: $SHARED${version:+/$version} lacks unitycatalog-server-<version>.jar and pom.xml (found: $(ls "$SHARED" | tr '\n' ' '))"
		return 1
	fi
	command -v mvn >/dev/null || { log "FAILED: mvn not found (apt-get install maven): it fetches the server's pinned dependencies"; return 1; }
	deps="$STATE/deps-$version"
	stamp="$deps/.pom.sha256"
	sum="$(sha256sum "$dir/pom.xml" | cut -d' ' -f1)"
	if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
		rm -rf "$deps" && mkdir -p "$deps/jars"
		# mvn runs on a copy: it may write target/ beside the pom, never into shared/.
		cp "$dir/pom.xml" "$deps/pom.xml"
		cmd=(mvn -B -q -f "$deps/pom.xml" dependency:copy-dependencies "-DoutputDirectory=$deps/jars")
		log "fetching the $(grep -c '<dependency>' "$dir/pom.xml") pinned dependencies of unitycatalog-server $version (~1.5 min cold, then cached in ~/.m2 and $deps)"
		if ! out="$("${cmd[@]}" 2>&1)"; then
			log "FAILED: ${cmd[*]}"
			echo "$out" | sed 's/\x1b\[[0-9;]*m//g' | tail -n 15 >&2
			return 1
		fi
		echo "$sum" >"$stamp"
	fi
	log "using $jar with $(ls "$deps/jars" | wc -l) dependencies from $deps/jars"
	echo "$jar:$deps/jars/*"
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
	local start_cmd="$JAVA -cp $cp io.unitycatalog.server.UnityCatalogServer --port $PORT"
	log "starting io.unitycatalog.server.UnityCatalogServer on 127.0.0.1:$PORT in $run (log $STATE/server.log)"
	(cd "$run" && exec nohup "$JAVA" -cp "$cp" io.unitycatalog.server.UnityCatalogServer --port "$PORT" >"$STATE/server.log" 2>&1) &
	pid=$!
	echo "$pid" >"$STATE/pid"
	until answers; do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "FAILED: \`$start_cmd\` (in $run) exited during start-up; last log lines of $STATE/server.log:"
			tail -n 20 "$STATE/server.log" >&2 || true
			rm -f "$STATE/pid"
			exit 1
		fi
		if [ "$waited" -ge "$TIMEOUT" ]; then
			log "FAILED: \`$start_cmd\` (in $run): no answer from $URL/catalogs after ${TIMEOUT}s; last log lines of $STATE/server.log:"
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
