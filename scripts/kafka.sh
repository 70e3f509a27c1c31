#!/usr/bin/env bash
# Real Apache Kafka test bed for connectd: a single-node KRaft broker on loopback.
#
#   scripts/kafka.sh up       fetch jars (cached), format storage, start broker, wait, print env
#   scripts/kafka.sh down     stop the broker (SIGTERM, then SIGKILL) and remove the data dir
#   scripts/kafka.sh restart  stop the broker (SIGTERM, then SIGKILL) and start it again on the
#                             same data (topics, offsets, groups kept), wait until it answers
#   scripts/kafka.sh status   exit 0 if the broker is running and answers
#   scripts/kafka.sh env      print `export CONNECTD_KAFKA_...=` lines (use: eval "$(scripts/kafka.sh env)")
#   scripts/kafka.sh deps     install kcat (and maven) via apt-get when missing
#   scripts/kafka.sh jars     only fetch the broker jars into the cache
#   scripts/kafka.sh logs     tail the broker log
#
# Listeners (all on 127.0.0.1; ports shift with CONNECTD_KAFKA_PORT_BASE):
#   19092 PLAINTEXT                    (base)
#   19093 SASL_PLAINTEXT: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; user connectd / connectd-secret
#         (SCRAM users are created at format time with --add-scram)   (base+1)
#   19094 CONTROLLER (KRaft)           (base+2)
#   19095 SSL                          (base+3)
#   19096 SASL_SSL: the SASL mechanisms and user of SASL_PLAINTEXT, over TLS   (base+4)
#
# TLS: `up` (and `restart`, when missing) generates a throwaway CA and a broker certificate
# for 127.0.0.1 / localhost with openssl into <data dir>/tls, and the client trust stores
# keytool makes from the CA (PKCS12 and JKS, password connectd-secret). Nothing there is
# secret beyond this test bed; `down` deletes it. `env` prints the TLS addresses and store
# paths only for a broker whose config has the TLS listeners (one started by an older copy
# of this script has none; `restart` adds them).
#
# Environment knobs:
#   CONNECTD_KAFKA_VERSION   Apache Kafka version from Maven Central (default below)
#   CONNECTD_KAFKA_CACHE     jar cache dir (default ~/.cache/connectd/kafka-<version>)
#   CONNECTD_KAFKA_DATA      data dir: storage, config, pid, log (default /tmp/connectd-kafka);
#                            the lock is the sibling file <data dir>.lock (it must outlive `down`)
#   CONNECTD_KAFKA_PORT_BASE first listener port (default 19092): PLAINTEXT=base, SASL=base+1,
#                            CONTROLLER=base+2, SSL=base+3, SASL_SSL=base+4
#   CONNECTD_KAFKA_HEAP      JVM heap options (default "-Xms256m -Xmx512m")
#   CONNECTD_KAFKA_START_TIMEOUT  seconds to wait for the broker (default 90)
#
# `up` on a broker that is not running always starts a fresh, empty cluster.
#
# A second, private broker (for tests that stop or restart it) needs both its own ports and
# its own data dir, e.g.:
#   CONNECTD_KAFKA_PORT_BASE=29092 CONNECTD_KAFKA_DATA=/tmp/connectd-kafka-restart scripts/kafka.sh up
# and the same two variables for every later command on that instance.
set -euo pipefail

KAFKA_VERSION="${CONNECTD_KAFKA_VERSION:-4.1.2}"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$SCRIPT_DIR/kafka-pom.xml"
CACHE="${CONNECTD_KAFKA_CACHE:-${HOME:-/root}/.cache/connectd/kafka-$KAFKA_VERSION}"
LIBS="$CACHE/libs"
DATA="${CONNECTD_KAFKA_DATA:-/tmp/connectd-kafka}"
HEAP="${CONNECTD_KAFKA_HEAP:--Xms256m -Xmx512m}"
START_TIMEOUT="${CONNECTD_KAFKA_START_TIMEOUT:-90}"

PORT_BASE="${CONNECTD_KAFKA_PORT_BASE:-19092}"

HOST=127.0.0.1
if ! [[ "$PORT_BASE" =~ ^[1-9][0-9]{3,4}$ ]] || ((PORT_BASE > 65531)); then
  echo "kafka.sh: ERROR: CONNECTD_KAFKA_PORT_BASE must be a port in 1000..65531, got '$PORT_BASE'" >&2
  exit 2
fi
PORT_PLAIN=$PORT_BASE
PORT_SASL=$((PORT_BASE + 1))
PORT_CONTROLLER=$((PORT_BASE + 2))
PORT_SSL=$((PORT_BASE + 3))
PORT_SASL_SSL=$((PORT_BASE + 4))
SASL_USER=connectd
SASL_PASSWORD=connectd-secret

# Everything an instance owns is derived from its data dir, so two instances with
# different CONNECTD_KAFKA_DATA never share a pid file, log or lock. The lock sits next
# to the data dir rather than in it: `up` and `down` delete the data dir while holding it.
PIDFILE="$DATA/kafka.pid"
LOGFILE="$DATA/kafka.log"
CONFIG="$DATA/server.properties"
LOG4J="$DATA/log4j2.properties"
LOCKFILE="${DATA%/}.lock"
TLS_DIR="$DATA/tls"
CA_PEM="$TLS_DIR/ca.pem"
BROKER_PEM="$TLS_DIR/broker-keystore.pem"
TRUST_P12="$TLS_DIR/truststore.p12"
TRUST_JKS="$TLS_DIR/truststore.jks"
STORE_PASSWORD=connectd-secret

log() { echo "kafka.sh: $*" >&2; }
die() { echo "kafka.sh: ERROR: $*" >&2; exit 1; }

# ---------------------------------------------------------------- deps

apt_install() {
  # apt_install PKG... : install Debian packages (root only), running apt-get update once.
  if [ "$(id -u)" != 0 ]; then
    die "need '$*' but not root; install it with: sudo apt-get install -y $*"
  fi
  command -v apt-get >/dev/null || die "need '$*' and apt-get is not available"
  log "installing $* with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "$@" >&2 || die "apt-get install $* failed"
}

cmd_deps() {
  local need=()
  command -v kcat >/dev/null || need+=(kcat)
  command -v openssl >/dev/null || need+=(openssl)
  command -v mvn >/dev/null || [ -f "$LIBS/.complete" ] || need+=(maven)
  if [ "${#need[@]}" -gt 0 ]; then apt_install "${need[@]}"; fi
  command -v java >/dev/null || die "java not found (Java 17+ is required to run the broker)"
  command -v keytool >/dev/null || die "keytool not found (it comes with the JDK that runs the broker)"
}

# ---------------------------------------------------------------- jars

cmd_jars() {
  if [ -f "$LIBS/.complete" ] && [ "$(cat "$LIBS/.complete")" = "$KAFKA_VERSION" ]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found; run: scripts/kafka.sh deps"
  log "fetching Apache Kafka $KAFKA_VERSION jars from Maven Central into $LIBS"
  mkdir -p "$CACHE"
  local tmp="$CACHE/libs.tmp.$$"
  rm -rf "$tmp"
  if ! mvn -B -q -Dstyle.color=never -f "$POM" -Dkafka.version="$KAFKA_VERSION" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" >&2; then
    rm -rf "$tmp"
    die "maven could not fetch org.apache.kafka:kafka_2.13:$KAFKA_VERSION (see output above)"
  fi
  ls "$tmp"/kafka_2.13-"$KAFKA_VERSION".jar >/dev/null 2>&1 || { rm -rf "$tmp"; die "kafka_2.13-$KAFKA_VERSION.jar missing after maven run"; }
  echo "$KAFKA_VERSION" >"$tmp/.complete"
  rm -rf "$LIBS"
  mv "$tmp" "$LIBS"
}

# ---------------------------------------------------------------- process helpers

# our_pid prints the broker pid if the pid file names a live java process running
# kafka.Kafka with our config (guards against stale pid files and pid reuse).
our_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid="$(cat "$PIDFILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/cmdline" ] || return 1
  local cmdline
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  case "$cmdline" in
    *kafka.Kafka*"$CONFIG"*) echo "$pid" ;;
    *) return 1 ;;
  esac
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# kcat_check [sasl|ssl|sasl_ssl]: a metadata request answered by the broker (needs kcat).
# The SASL checks use PLAIN: Debian's kcat links librdkafka 2.0.2, whose SCRAM client
# is rejected by Kafka 4.x brokers (nonce bug, fixed in librdkafka 2.6.1). SCRAM is
# checked with franz-go in internal/kafkatest instead. The TLS checks verify the chain
# against the generated CA but not the host name: librdkafka 2.0 matches 127.0.0.1 as a
# DNS name, not against the certificate's IP address (the Go tests check host names).
kcat_check() {
  local sasl=(-X sasl.mechanisms=PLAIN -X sasl.username="$SASL_USER" -X sasl.password="$SASL_PASSWORD")
  local tls=(-X ssl.ca.location="$CA_PEM" -X ssl.endpoint.identification.algorithm=none)
  case "${1:-}" in
    sasl) timeout 15 kcat -b "$HOST:$PORT_SASL" -m 10 -X security.protocol=SASL_PLAINTEXT "${sasl[@]}" -L >/dev/null 2>&1 ;;
    ssl) timeout 15 kcat -b "$HOST:$PORT_SSL" -m 10 -X security.protocol=SSL "${tls[@]}" -L >/dev/null 2>&1 ;;
    sasl_ssl) timeout 15 kcat -b "$HOST:$PORT_SASL_SSL" -m 10 -X security.protocol=SASL_SSL "${sasl[@]}" "${tls[@]}" -L >/dev/null 2>&1 ;;
    *) timeout 15 kcat -b "$HOST:$PORT_PLAIN" -m 10 -L >/dev/null 2>&1 ;;
  esac
}

# tls_listeners: the instance's config has the SSL and SASL_SSL listeners (a broker
# started by an older copy of this script has not; it stays healthy without them).
tls_listeners() { [ -f "$CONFIG" ] && grep -q "^listeners=.*SASL_SSL://" "$CONFIG" && [ -f "$CA_PEM" ]; }

healthy() {
  our_pid >/dev/null || return 1
  port_open "$PORT_PLAIN" || return 1
  port_open "$PORT_SASL" || return 1
  if tls_listeners; then
    port_open "$PORT_SSL" || return 1
    port_open "$PORT_SASL_SSL" || return 1
  fi
  if command -v kcat >/dev/null; then kcat_check || return 1; fi
  return 0
}

# ---------------------------------------------------------------- TLS material

# generate_tls writes a throwaway CA and a broker certificate signed by it (for
# 127.0.0.1 and localhost, valid 10 years) into $TLS_DIR: broker-keystore.pem (the
# broker's unencrypted PKCS#8 key and its chain, Kafka's PEM key store), ca.pem (the
# clients' PEM trust store) and the same CA as PKCS12 and JKS trust stores. The CA key
# is deleted once the broker certificate is signed.
generate_tls() {
  command -v openssl >/dev/null || die "openssl not found; run: scripts/kafka.sh deps"
  command -v keytool >/dev/null || die "keytool not found (it comes with the JDK that runs the broker)"
  log "generating a throwaway CA and broker certificate in $TLS_DIR"
  rm -rf "$TLS_DIR"
  mkdir -p "$TLS_DIR"
  local d="$TLS_DIR"
  cat >"$d/openssl.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[broker]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = IP:$HOST, DNS:localhost
authorityKeyIdentifier = keyid
EOF
  {
    openssl req -x509 -config "$d/openssl.cnf" -extensions ca -newkey rsa:2048 -nodes -sha256 -days 3650 \
      -subj "/O=connectd test bed/CN=connectd test CA $PORT_BASE $(date -u +%Y%m%dT%H%M%S)" \
      -keyout "$d/ca.key" -out "$CA_PEM" &&
      openssl req -new -config "$d/openssl.cnf" -newkey rsa:2048 -nodes -subj "/O=connectd test bed/CN=localhost" \
        -keyout "$d/broker.key" -out "$d/broker.csr" &&
      openssl x509 -req -in "$d/broker.csr" -CA "$CA_PEM" -CAkey "$d/ca.key" -set_serial "0x$(openssl rand -hex 8)" \
        -days 3650 -sha256 -extfile "$d/openssl.cnf" -extensions broker -out "$d/broker.pem"
  } >"$d/openssl.log" 2>&1 || { cat "$d/openssl.log" >&2; die "openssl could not generate the test CA and broker certificate"; }
  cat "$d/broker.key" "$d/broker.pem" "$CA_PEM" >"$BROKER_PEM"
  rm -f "$d/ca.key" "$d/broker.csr" "$d/broker.key" "$d/broker.pem"
  local t
  for t in PKCS12:"$TRUST_P12" JKS:"$TRUST_JKS"; do
    keytool -importcert -noprompt -alias connectd-test-ca -file "$CA_PEM" -storetype "${t%%:*}" \
      -keystore "${t#*:}" -storepass "$STORE_PASSWORD" >>"$d/keytool.log" 2>&1 ||
      { cat "$d/keytool.log" >&2; die "keytool could not write the ${t%%:*} trust store"; }
  done
}

# ---------------------------------------------------------------- config

write_config() {
  mkdir -p "$DATA/kraft"
  cat >"$CONFIG" <<EOF
# Written by scripts/kafka.sh: single-node KRaft broker+controller for connectd tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$PORT_CONTROLLER
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://$HOST:$PORT_PLAIN,SASL_PLAINTEXT://$HOST:$PORT_SASL,CONTROLLER://$HOST:$PORT_CONTROLLER,SSL://$HOST:$PORT_SSL,SASL_SSL://$HOST:$PORT_SASL_SSL
advertised.listeners=PLAINTEXT://$HOST:$PORT_PLAIN,SASL_PLAINTEXT://$HOST:$PORT_SASL,SSL://$HOST:$PORT_SSL,SASL_SSL://$HOST:$PORT_SASL_SSL
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL
inter.broker.listener.name=PLAINTEXT
log.dirs=$DATA/kraft

# SSL and SASL_SSL: the broker's key and certificate chain from generate_tls (a PEM key
# store); clients present no certificate.
ssl.keystore.type=PEM
ssl.keystore.location=$BROKER_PEM
ssl.client.auth=none

sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$SASL_USER" password="$SASL_PASSWORD" user_$SASL_USER="$SASL_PASSWORD";
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$SASL_USER" password="$SASL_PASSWORD" user_$SASL_USER="$SASL_PASSWORD";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;

# One node: every internal topic has replication 1 so groups and transactions work.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
default.replication.factor=1
min.insync.replicas=1
num.partitions=1
auto.create.topics.enable=true
delete.topic.enable=true
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
log.retention.check.interval.ms=300000
EOF
  cat >"$LOG4J" <<'EOF'
status = warn
name = connectd-kafka
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = out
logger.request.name = kafka.request.logger
logger.request.level = warn
logger.zk.name = org.apache.zookeeper
logger.zk.level = warn
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = warn
EOF
}

java_run() {
  # java_run MAINCLASS ARGS... (in the foreground, logging to the console config)
  local main="$1"
  shift
  # shellcheck disable=SC2086
  java $HEAP -Dlog4j2.configurationFile="$LOG4J" -cp "$LIBS/*" "$main" "$@"
}

format_storage() {
  local cid
  cid="$(java -cp "$LIBS/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n1)"
  [[ "$cid" =~ ^[A-Za-z0-9_-]{22}$ ]] || die "could not generate a cluster id (got '$cid')"
  log "formatting KRaft storage in $DATA/kraft (cluster id $cid)"
  java -Dlog4j2.configurationFile="$LOG4J" -cp "$LIBS/*" kafka.tools.StorageTool format \
    --config "$CONFIG" --cluster-id "$cid" \
    --add-scram "SCRAM-SHA-256=[name=$SASL_USER,password=$SASL_PASSWORD]" \
    --add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$SASL_PASSWORD]" \
    >"$DATA/format.log" 2>&1 || { cat "$DATA/format.log" >&2; die "storage format failed"; }
}

# ---------------------------------------------------------------- commands

cmd_env() {
  cat <<EOF
export CONNECTD_KAFKA_BROKERS=$HOST:$PORT_PLAIN
export CONNECTD_KAFKA_SASL_BROKERS=$HOST:$PORT_SASL
export CONNECTD_KAFKA_SASL_USER=$SASL_USER
export CONNECTD_KAFKA_SASL_PASSWORD=$SASL_PASSWORD
EOF
  if tls_listeners; then
    cat <<EOF
export CONNECTD_KAFKA_SSL_BROKERS=$HOST:$PORT_SSL
export CONNECTD_KAFKA_SASL_SSL_BROKERS=$HOST:$PORT_SASL_SSL
export CONNECTD_KAFKA_SSL_CA=$CA_PEM
export CONNECTD_KAFKA_SSL_TRUSTSTORE_PKCS12=$TRUST_P12
export CONNECTD_KAFKA_SSL_TRUSTSTORE_JKS=$TRUST_JKS
export CONNECTD_KAFKA_SSL_TRUSTSTORE_PASSWORD=$STORE_PASSWORD
EOF
  fi
}

stop_broker() {
  local pid
  if pid="$(our_pid)"; then
    log "stopping broker (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 300; i++)); do # 30 s
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "broker did not stop in 30s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
  fi
  rm -f "$PIDFILE"
}

cmd_down() {
  exec 9>"$LOCKFILE"
  flock 9
  stop_broker
  rm -rf "$DATA"
  log "broker down, $DATA removed"
}

cmd_status() {
  local pid
  if pid="$(our_pid)" && healthy; then
    local tls=" (no TLS listeners: started by an older kafka.sh; restart adds them)"
    if tls_listeners; then tls=", SSL $HOST:$PORT_SSL, SASL_SSL $HOST:$PORT_SASL_SSL"; fi
    echo "kafka $KAFKA_VERSION running (pid $pid), PLAINTEXT $HOST:$PORT_PLAIN, SASL_PLAINTEXT $HOST:$PORT_SASL$tls, data $DATA"
    return 0
  fi
  if pid="$(our_pid)"; then
    echo "kafka broker process $pid exists but does not answer yet (log: $LOGFILE)"
    return 1
  fi
  echo "kafka broker not running"
  return 1
}

fail_start() {
  echo "kafka.sh: ERROR: $1" >&2
  if [ -f "$LOGFILE" ]; then
    echo "---- last 60 lines of $LOGFILE ----" >&2
    tail -n 60 "$LOGFILE" >&2 || true
    echo "----" >&2
  fi
  stop_broker
  exit 1
}

cmd_up() {
  cmd_deps
  exec 9>"$LOCKFILE"
  flock 9
  if healthy; then
    log "broker already running (pid $(our_pid))"
    cmd_env
    return 0
  fi
  cmd_jars

  # Not running (or not answering): start a fresh cluster.
  stop_broker
  ports_free
  rm -rf "$DATA"
  mkdir -p "$DATA"
  generate_tls
  write_config
  format_storage
  start_broker
}

# ports_free dies if any of our listener ports is taken by another process.
ports_free() {
  local p
  for p in "$PORT_PLAIN" "$PORT_SASL" "$PORT_CONTROLLER" "$PORT_SSL" "$PORT_SASL_SSL"; do
    if port_open "$p"; then
      die "port $HOST:$p is already in use by another process (another broker? check: ss -ltnp | grep $p)"
    fi
  done
}

# start_broker starts kafka.Kafka on the config and formatted storage in $DATA, waits
# until it answers on both listeners and prints the env lines. Caller holds the lock.
start_broker() {
  log "starting Apache Kafka $KAFKA_VERSION (log: $LOGFILE)"
  local t0=$SECONDS
  local detach=()
  command -v setsid >/dev/null && detach=(setsid)
  # shellcheck disable=SC2086
  nohup "${detach[@]}" java $HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$LOG4J" -Dkafka.logs.dir="$DATA" \
    -cp "$LIBS/*" kafka.Kafka "$CONFIG" </dev/null >"$LOGFILE" 2>&1 9>&- &
  echo $! >"$PIDFILE"

  local pid
  pid="$(cat "$PIDFILE")"
  while :; do
    kill -0 "$pid" 2>/dev/null || fail_start "broker process exited during startup"
    if grep -q "Kafka Server started" "$LOGFILE" 2>/dev/null && port_open "$PORT_PLAIN" && port_open "$PORT_SASL" &&
      port_open "$PORT_SSL" && port_open "$PORT_SASL_SSL"; then
      break
    fi
    ((SECONDS - t0 < START_TIMEOUT)) || fail_start "broker did not start within ${START_TIMEOUT}s"
    sleep 0.5
  done
  if command -v kcat >/dev/null; then
    kcat_check || fail_start "broker started but kcat metadata request on PLAINTEXT $HOST:$PORT_PLAIN failed"
    kcat_check sasl || fail_start "broker started but kcat SASL/PLAIN login on $HOST:$PORT_SASL failed"
    kcat_check ssl || fail_start "broker started but kcat metadata request on SSL $HOST:$PORT_SSL (CA $CA_PEM) failed"
    kcat_check sasl_ssl || fail_start "broker started but kcat SASL/PLAIN login on SASL_SSL $HOST:$PORT_SASL_SSL failed"
  fi
  log "broker up in $((SECONDS - t0))s (pid $pid)"
  cmd_env
}

# cmd_restart stops the broker and starts it again on the same storage: no reformat, so
# topics, committed offsets and producer state survive. A broker that is not running is
# just started, provided `up` formatted its data dir before.
cmd_restart() {
  cmd_deps
  exec 9>"$LOCKFILE"
  flock 9
  if [ ! -f "$CONFIG" ] || [ ! -f "$DATA/kraft/meta.properties" ]; then
    die "no formatted broker in $DATA to restart; run: scripts/kafka.sh up"
  fi
  cmd_jars
  local t0=$SECONDS
  stop_broker
  log "broker stopped in $((SECONDS - t0))s; restarting on the data in $DATA"
  # The config is written again, so that a broker started by an older copy of this
  # script gains the TLS listeners; the CA is kept (clients hold its path) unless missing.
  if ! [ -f "$CA_PEM" ] || ! [ -f "$BROKER_PEM" ] || ! [ -f "$TRUST_JKS" ]; then generate_tls; fi
  write_config
  # A kill makes the ports free at once, but give a lingering socket a moment.
  local i p busy
  for ((i = 0; i < 100; i++)); do # 10 s
    busy=
    for p in "$PORT_PLAIN" "$PORT_SASL" "$PORT_CONTROLLER" "$PORT_SSL" "$PORT_SASL_SSL"; do
      if port_open "$p"; then busy=$p; fi
    done
    [ -z "$busy" ] && break
    sleep 0.1
  done
  ports_free
  if [ -f "$LOGFILE" ]; then mv -f "$LOGFILE" "$LOGFILE.1"; fi
  start_broker
}

cmd_logs() {
  [ -f "$LOGFILE" ] || die "no log at $LOGFILE"
  tail -n "${1:-100}" "$LOGFILE"
}

usage() {
  # The comment block at the top of this file, up to the first non-comment line.
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${BASH_SOURCE[0]}"
}

main() {
  local cmd="${1:-}"
  [ $# -gt 0 ] && shift
  case "$cmd" in
    up) cmd_up ;;
    down) cmd_down ;;
    restart) cmd_restart ;;
    status) cmd_status ;;
    env) cmd_env ;;
    deps) cmd_deps ;;
    jars) cmd_jars ;;
    logs) cmd_logs "$@" ;;
    -h | --help | help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
