#!/usr/bin/env bash
# Apache Flink SQL in a local MiniCluster, the referee of connectd's formats (docs/interop.md).
#
#   scripts/flink-sql.sh build              fetch Flink from Maven Central and build the runner
#                                           (interop/flink) once into the cache; print its dir
#   scripts/flink-sql.sh run [OPTS] FILE    run the SQL statements of FILE (- for stdin), building
#                                           first if needed; JSON lines on stdout:
#       {"stmt":N,"columns":[{"name":..,"type":..},..]}  a query's columns, with Flink's types
#       {"stmt":N,"kind":"+I","row":[..]}                 a row of it and its change kind
#       {"stmt":N,"done":"query"|"insert"|"ddl"}          the statement finished
#       {"stmt":N,"error":".."}                            it failed (the run goes on; exit 1)
#     OPTS: --timeout SECONDS per statement (default 300), --parallelism N (default 1),
#           --conf key=value (any Flink option; table.local-time-zone is UTC unless set)
#
# Statements are separated by ';' (EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END is one
# statement: its INSERTs run as one job). Queries run in streaming mode until their job ends: bound the
# Kafka scans ('scan.bounded.mode' = 'latest-offset'). How values are written: interop/flink's
# Json.java. Flink's log (WARN and up) goes to a file whose tail is printed when a run fails.
#
# Environment knobs:
#   CONNECTD_FLINK_VERSION        Apache Flink version (default below; flink-connector-kafka,
#                                 flink-csv and the SQL avro jar are pinned in interop/flink/pom.xml)
#   CONNECTD_FLINK_CACHE          cache dir (default ~/.cache/connectd/flink-<version>); the
#                                 runner is built in <cache>/sql, beside bench/'s <cache>/job
#   CONNECTD_FLINK_SQL_JAVA_OPTS  extra JVM options (default "-Xmx1g -XX:+UseSerialGC")
set -euo pipefail

FLINK_VERSION="${CONNECTD_FLINK_VERSION:-2.2.1}"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$SCRIPT_DIR/../interop/flink"
CACHE="${CONNECTD_FLINK_CACHE:-${HOME:-/root}/.cache/connectd/flink-$FLINK_VERSION}"
DIR="$CACHE/sql"
JAVA_OPTS="${CONNECTD_FLINK_SQL_JAVA_OPTS:--Xmx1g -XX:+UseSerialGC}"

# The module options a Flink 2.x distribution passes every JVM on Java 17 (flink-dist's
# config.yaml, env.java.opts.all; bench/flinkjob.go has the same list): Flink reflects into
# java.base, for instance to serialize a task's failure.
JAVA17_OPTS=(
  --add-exports=java.base/sun.net.util=ALL-UNNAMED
  --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED
  --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.text=ALL-UNNAMED
  --add-opens=java.base/java.time=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED
)

log() { echo "flink-sql.sh: $*" >&2; }
die() { echo "flink-sql.sh: ERROR: $*" >&2; exit 2; }

# build_key names a build: the Flink version and every source file of the runner.
build_key() {
  (
    cd "$SRC"
    echo "flink $FLINK_VERSION"
    find pom.xml src -type f | LC_ALL=C sort | xargs sha256sum
  ) | sha256sum | cut -d' ' -f1
}

cmd_build() {
  [ -f "$SRC/pom.xml" ] || die "no runner sources at $SRC"
  local key
  key="$(build_key)"
  if [ -f "$DIR/.complete" ] && [ "$(cat "$DIR/.complete")" = "$key" ]; then
    echo "$DIR"
    return 0
  fi
  mkdir -p "$CACHE"
  # One build at a time (tests of several packages may ask at once); the lock sits beside the
  # build dir, which is replaced whole.
  exec 9>"$CACHE/sql.lock"
  flock 9
  if [ -f "$DIR/.complete" ] && [ "$(cat "$DIR/.complete")" = "$key" ]; then
    echo "$DIR"
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found (Maven, for the Flink jars from Maven Central): apt-get install maven"
  command -v java >/dev/null || die "java not found (Java 17 or later)"
  local tmp="$CACHE/sql.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  cp -r "$SRC/pom.xml" "$SRC/src" "$tmp/"
  log "building the Flink $FLINK_VERSION SQL runner with Maven in $DIR (once; jars from Maven Central)"
  local start=$SECONDS
  if ! (cd "$tmp" && mvn -B -q -Dstyle.color=never -Dflink.version="$FLINK_VERSION" \
      package dependency:copy-dependencies >&2); then
    rm -rf "$tmp"
    die "mvn package of interop/flink (org.apache.flink:flink-table-*:$FLINK_VERSION and the Kafka connector and formats from Maven Central) failed; output above"
  fi
  echo "$key" >"$tmp/.complete"
  rm -rf "$DIR"
  mv "$tmp" "$DIR"
  log "built in $((SECONDS - start))s"
  echo "$DIR"
}

cmd_run() {
  [ $# -gt 0 ] || die "run wants a SQL file (or - for stdin)"
  cmd_build >/dev/null
  local logf rc=0
  logf="$(mktemp "${TMPDIR:-/tmp}/flink-sql-XXXXXX.log")"
  # shellcheck disable=SC2086 # JAVA_OPTS is a list of options
  java "${JAVA17_OPTS[@]}" $JAVA_OPTS -Dflink.sql.log="$logf" \
    -cp "$DIR/target/flink-sql.jar:$DIR/target/libs/*" io.connectd.interop.FlinkSql "$@" || rc=$?
  if [ "$rc" != 0 ]; then
    log "exit $rc; Flink's log (WARN and up) is kept in $logf; its tail:"
    tail -n 30 "$logf" >&2 || true
  else
    rm -f "$logf"
  fi
  return "$rc"
}

usage() {
  # The comment block at the top of this file, up to the first non-comment line.
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${BASH_SOURCE[0]}"
}

main() {
  local cmd="${1:-}"
  [ $# -gt 0 ] && shift
  case "$cmd" in
    build) cmd_build ;;
    run) cmd_run "$@" ;;
    -h | --help | help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
