#!/usr/bin/env bash
# setup-hms.sh start|stop — real Hive Metastores on 127.0.0.1 for the
# catalog/hms contract suite, wrapped for .ci/test.sh.
#
#   HMS 4.0.1: the classpath pinned by ../shared/hms-server/4.0.1/pom.xml (mvn
#              runs on a copy of it; nothing is written into ../shared), the
#              schema scripts from the server's bin tarball (Maven Central);
#   HMS 3.1.3: its own bin tarball (lib/ included) plus the Hadoop 3.3.6,
#              commons-cli/-io/-logging/-collections/-codec and slf4j jars borrowed from the 4.0.1 copy.
#
# Both run on embedded Derby. HMS 4's optimistic guard (expected_parameter_key
# in the alter's environment context) cannot work on the stock Derby schema:
# the script declares TABLE_PARAMS.PARAM_VALUE a CLOB and Derby cannot compare
# CLOBs. The server's own JDO mapping says VARCHAR(32672), so the script is made
# to agree with it (one sed, checked). Derby rather than PostgreSQL: one JVM per
# metastore and nothing else, no OS user to switch to (PostgreSQL refuses to
# run as root), nothing to install in CI beyond java and maven, and the same
# store for 3.1.3. ../shared/docs/hms-notes.md says what was found and why.
#
# Everything lives under $DELTASYNC_CACHE/hms: the jars and scripts once, an
# initialised Derby store per version once (copied, not re-initialised, on each
# start), and one run directory per version. `start` prints ONLY
# `export DELTASYNC_HMS4_URL=thrift://127.0.0.1:PORT` and
# `export DELTASYNC_HMS3_URL=...` on stdout (.ci/test.sh evals them); the rest
# goes to stderr. A metastore that already answers (started earlier by this
# script) is reused. When java or maven is missing, or a metastore does not
# come up: with CI=true or DELTASYNC_REQUIRE_EXTERNAL=1 it exits 1 saying why;
# otherwise it says why, prints no URL for it, and its tests skip.
# DELTASYNC_HMS_VERSIONS (default "4.0.1 3.1.3") picks which to run.
# `stop` stops only metastores this script started.
set -uo pipefail

log() { echo "setup-hms: $*" >&2; }

DIR="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$DIR/.." && pwd)"
CACHE="${DELTASYNC_CACHE:-$REPO/.cache}"
ROOT="$CACHE/hms"
SHARED_POM="${DELTASYNC_HMS_POM:-$REPO/../shared/hms-server/4.0.1/pom.xml}"
VERSIONS="${DELTASYNC_HMS_VERSIONS:-4.0.1 3.1.3}"
M2="${HOME}/.m2/repository/org/apache/hive"

required() { [ "${CI:-}" = "true" ] || [ "${DELTASYNC_REQUIRE_EXTERNAL:-}" = "1" ]; }

# fail WHY: exit 1 when the metastores are required, else warn and go on.
fail() {
	if required; then
		log "FAILED: $* (CI=true / DELTASYNC_REQUIRE_EXTERNAL=1 make the metastore tests mandatory)"
		exit 1
	fi
	log "$*: its tests will skip"
	return 1
}

# version_of PORT prints what the metastore on PORT answers to getVersion
# (a raw Thrift binary call: no client needed), or fails.
version_of() {
	# The reply's first 29 bytes are the message header, the result struct's
	# field header and the string's length; the version string follows.
	timeout 5 bash -c '
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "\x80\x01\x00\x01\x00\x00\x00\x0agetVersion\x00\x00\x00\x00\x00" >&3
		n=$(head -c 29 <&3 | od -An -tu1 -j25 | awk "{print \$1*16777216+\$2*65536+\$3*256+\$4}")
		[ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" -lt 64 ] && head -c "$n" <&3
	' _ "$1" 2>/dev/null | grep -E '^[0-9]+(\.[0-9]+)+$'
}

port_free() { ! timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

free_port() {
	local p
	for p in $(seq "$1" $(($1 + 40))); do
		if port_free "$p"; then echo "$p"; return 0; fi
	done
	return 1
}

have_tools() {
	if command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then return 0; fi
	if [ "${CI:-}" = "true" ] && [ "$(id -u)" = 0 ]; then
		log "installing java and maven from Debian"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q default-jre-headless maven >&2 && return 0
	fi
	fail "java or maven missing (apt-get install default-jre-headless maven)"
}

# The 4.0.1 classpath (120 jars, ~140 MiB) and its scripts, once.
install4() {
	local lib="$ROOT/lib-4.0.1" dist="$ROOT/dist-4.0.1"
	if [ ! -f "$lib/.complete" ]; then
		[ -f "$SHARED_POM" ] || { fail "no $SHARED_POM (../shared beside the clone)"; return 1; }
		mkdir -p "$ROOT" && cp "$SHARED_POM" "$ROOT/pom-4.0.1.xml"
		log "fetching the HMS 4.0.1 classpath from Maven Central (once; ~50 s cold)"
		rm -rf "$lib"
		mvn -B -q -f "$ROOT/pom-4.0.1.xml" dependency:copy-dependencies -DincludeScope=runtime \
			-DoutputDirectory="$lib" >&2 || { fail "mvn copy-dependencies for HMS 4.0.1 failed"; return 1; }
		touch "$lib/.complete"
	fi
	if [ ! -f "$dist/.complete" ]; then
		fetch_tarball org.apache.hive:hive-standalone-metastore-server:4.0.1:tar.gz:bin \
			"$M2/hive-standalone-metastore-server/4.0.1/hive-standalone-metastore-server-4.0.1-bin.tar.gz" \
			"$dist" '*/scripts/*' '*/conf/*' || return 1
		local sql="$dist/scripts/metastore/upgrade/derby/hive-schema-4.0.0.derby.sql"
		sed -i 's|"PARAM_VALUE" CLOB);|"PARAM_VALUE" VARCHAR(32672));|' "$sql"
		# The one line it must hit is TABLE_PARAMS'; the guard fails without it.
		if ! grep -q '^CREATE TABLE "APP"."TABLE_PARAMS" .*"PARAM_VALUE" VARCHAR(32672));' "$sql"; then
			fail "patching TABLE_PARAMS.PARAM_VALUE in $sql did not take (the script changed?)"
			return 1
		fi
		touch "$dist/.complete"
	fi
}

# HMS 3.1.3: its whole tarball (lib/ has no Hadoop) plus borrowed jars, once.
install3() {
	local dist="$ROOT/dist-3.1.3" extra="$ROOT/lib-3.1.3-extra" j
	install4 || return 1
	if [ ! -f "$dist/.complete" ]; then
		fetch_tarball org.apache.hive:hive-standalone-metastore:3.1.3:tar.gz:bin \
			"$M2/hive-standalone-metastore/3.1.3/hive-standalone-metastore-3.1.3-bin.tar.gz" \
			"$dist" || return 1
		touch "$dist/.complete"
	fi
	if [ ! -f "$extra/.complete" ]; then
		rm -rf "$extra" && mkdir -p "$extra"
		for j in hadoop-client-api-3.3.6 hadoop-client-runtime-3.3.6 hadoop-hdfs-3.3.6 commons-cli-1.5.0 commons-io-2.11.0 commons-logging-1.1.3 commons-collections-3.2.2 commons-codec-1.11 slf4j-api-1.7.36; do
			cp "$ROOT/lib-4.0.1/$j.jar" "$extra/" || { fail "no $j.jar in the 4.0.1 classpath to borrow"; return 1; }
		done
		touch "$extra/.complete"
	fi
}

# fetch_tarball ARTIFACT M2PATH DEST [PATTERNS...]: the bin tarball from Maven
# Central, extracted (only PATTERNS when given) into DEST.
fetch_tarball() {
	local artifact="$1" tgz="$2" dest="$3"
	shift 3
	if [ ! -f "$tgz" ]; then
		log "fetching $artifact from Maven Central (once)"
		mvn -B -q dependency:get -Dartifact="$artifact" -Dtransitive=false >&2 || { fail "mvn dependency:get $artifact failed"; return 1; }
	fi
	rm -rf "$dest" && mkdir -p "$dest"
	if [ $# -gt 0 ]; then
		tar xzf "$tgz" -C "$dest" --strip-components=1 --wildcards "$@" || { fail "extracting $tgz failed"; return 1; }
	else
		tar xzf "$tgz" -C "$dest" --strip-components=1 || { fail "extracting $tgz failed"; return 1; }
	fi
}

# write_conf DIR PORT DB: metastore-site.xml and a console log4j2 config.
write_conf() {
	local conf="$1/conf" port="$2" db="$3"
	mkdir -p "$conf"
	cat >"$conf/metastore-site.xml" <<XML
<configuration>
  <property><name>metastore.thrift.uris</name><value>thrift://127.0.0.1:$port</value></property>
  <property><name>metastore.thrift.port</name><value>$port</value></property>
  <property><name>metastore.thrift.bind.host</name><value>127.0.0.1</value></property>
  <property><name>javax.jdo.option.ConnectionURL</name><value>jdbc:derby:;databaseName=$db;create=true</value></property>
  <property><name>javax.jdo.option.ConnectionDriverName</name><value>org.apache.derby.jdbc.EmbeddedDriver</value></property>
  <property><name>metastore.warehouse.dir</name><value>file://$1/warehouse</value></property>
  <property><name>metastore.warehouse.external.dir</name><value>file://$1/warehouse-ext</value></property>
  <property><name>metastore.task.threads.always</name><value>org.apache.hadoop.hive.metastore.events.EventCleanerTask</value></property>
  <property><name>metastore.expression.proxy</name><value>org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy</value></property>
  <property><name>metastore.schema.verification</name><value>true</value></property>
  <property><name>metastore.event.db.notification.api.auth</name><value>false</value></property>
  <!-- the default retries a failing call 10 x 2 s on the server: ~20 s per refused request -->
  <property><name>metastore.hmshandler.retry.attempts</name><value>1</value></property>
</configuration>
XML
	cat >"$conf/metastore-log4j2.properties" <<'LOG'
status = WARN
name = deltasync-test
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %5p [%t] %c{2}: %m%n
rootLogger.level = WARN
rootLogger.appenderRefs = console
rootLogger.appenderRef.console.ref = console
LOG
}

# jvm DIR ARGS...: java with DIR's log config, small heap, serial GC (2 cores).
jvm() {
	local d="$1"
	shift
	exec java -Xmx512m -XX:+UseSerialGC -Dlog4j.configurationFile="$d/conf/metastore-log4j2.properties" "$@"
}

# start_one VERSION VAR BASEPORT
start_one() {
	local v="$1" var="$2" base="$3"
	local run="$ROOT/run-$v" cp home tool
	if [ -f "$run/port" ] && [ -f "$run/server.pid" ] && kill -0 "$(cat "$run/server.pid")" 2>/dev/null; then
		local p got
		p="$(cat "$run/port")"
		got="$(version_of "$p")"
		if [ -n "$got" ]; then
			log "HMS $v already answers on 127.0.0.1:$p (getVersion $got)"
			echo "export $var=thrift://127.0.0.1:$p"
			return 0
		fi
	fi
	case "$v" in
	4.0.1)
		install4 || return 0
		home="$ROOT/dist-4.0.1"; cp="$ROOT/lib-4.0.1/*"
		tool=org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool ;;
	3.1.3)
		install3 || return 0
		home="$ROOT/dist-3.1.3"; cp="$ROOT/dist-3.1.3/lib/*:$ROOT/lib-3.1.3-extra/*"
		tool=org.apache.hadoop.hive.metastore.tools.MetastoreSchemaTool ;;
	*) fail "unknown HMS version $v (4.0.1 or 3.1.3)"; return 0 ;;
	esac
	# An initialised Derby store, once per version; each start copies it.
	local tmpl="$ROOT/derby-$v"
	if [ ! -f "$tmpl/.complete" ]; then
		rm -rf "$tmpl" "$ROOT/init-$v" && mkdir -p "$ROOT/init-$v"
		write_conf "$ROOT/init-$v" 0 "$tmpl/db"
		log "initialising the HMS $v Derby schema (once)"
		local t0=$SECONDS
		if ! (cd "$ROOT/init-$v" && METASTORE_HOME="$home" jvm "$ROOT/init-$v" -cp "$ROOT/init-$v/conf:$cp" "$tool" -dbType derby -initSchema >"$ROOT/init-$v/schematool.log" 2>&1); then
			tail -n 20 "$ROOT/init-$v/schematool.log" >&2
			fail "schematool -initSchema for HMS $v failed (log above)"
			return 0
		fi
		log "schema init: $((SECONDS - t0)) s"
		touch "$tmpl/.complete"
	fi
	stop_one "$v"
	# The last run's log outlives its directory: a server that died is
	# diagnosable after the next start.
	[ -f "$run/server.log" ] && mv "$run/server.log" "$ROOT/server-$v.previous.log"
	rm -rf "$run" && mkdir -p "$run"
	cp -r "$tmpl/db" "$run/db"
	local port
	port="$(free_port "$base")" || { fail "no free port from $base"; return 0; }
	write_conf "$run" "$port" "$run/db"
	echo "$port" >"$run/port"
	log "starting HMS $v on 127.0.0.1:$port"
	local t0=$SECONDS
	(cd "$run" && METASTORE_HOME="$home" jvm "$run" -cp "$run/conf:$cp" \
		org.apache.hadoop.hive.metastore.HiveMetaStore -p "$port" >"$run/server.log" 2>&1 &
		echo $! >"$run/server.pid")
	local got=""
	for _ in $(seq 1 240); do
		got="$(version_of "$port")"
		if [ -n "$got" ]; then
			log "HMS $v answers getVersion=$got after $((SECONDS - t0)) s"
			echo "export $var=thrift://127.0.0.1:$port"
			return 0
		fi
		kill -0 "$(cat "$run/server.pid")" 2>/dev/null || break
		sleep 0.5
	done
	log "HMS $v did not answer on 127.0.0.1:$port; the end of its log ($run/server.log):"
	tail -n 30 "$run/server.log" >&2
	stop_one "$v"
	fail "HMS $v did not come up"
	return 0
}

stop_one() {
	local pidfile="$ROOT/run-$1/server.pid" pid
	[ -f "$pidfile" ] || return 0
	pid="$(cat "$pidfile")"
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 1 40); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$pidfile"
}

start() {
	have_tools || return 0
	local v
	for v in $VERSIONS; do
		case "$v" in
		4.0.1) start_one 4.0.1 DELTASYNC_HMS4_URL 19183 ;;
		3.1.3) start_one 3.1.3 DELTASYNC_HMS3_URL 19193 ;;
		*) fail "unknown HMS version $v (4.0.1 or 3.1.3)" ;;
		esac
	done
	return 0
}

stop() {
	local v
	for v in 4.0.1 3.1.3; do stop_one "$v"; done
	return 0
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
