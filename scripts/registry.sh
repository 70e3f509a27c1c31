#!/usr/bin/env bash
# A Confluent-compatible schema registry on loopback, for the avro-confluent test bed.
#
#   scripts/registry.sh up      build the server (cached), start it, wait until it answers, print env
#   scripts/registry.sh down    stop it (SIGTERM, then SIGKILL) and remove its data dir
#   scripts/registry.sh status  exit 0 if it is running and answers
#   scripts/registry.sh env     print `export CONNECTD_SCHEMA_REGISTRY_URL=...`
#                               (use: eval "$(scripts/registry.sh env)")
#   scripts/registry.sh logs    tail its log
#
# The server is franz-go's srfake (github.com/twmb/franz-go/pkg/sr/srfake, from the Go module
# proxy): an independent, in-memory implementation of the Confluent Schema Registry REST API
# (subjects, versions, schemas by id, config, compatibility, mode), served on a real TCP port
# by a ten-line main that this script writes into its cache and builds as a module of its own,
# so the project's go.mod does not change. It keeps schemas in memory only: a restart forgets
# them, and it is not backed by Kafka (no _schemas topic). Karapace (not on PyPI here) and a
# runnable Apicurio Registry (its modules are only partly on Maven Central) could not be had;
# the commit that added this script lists what was tried.
#
# Environment knobs:
#   CONNECTD_REGISTRY_PORT      listen port on 127.0.0.1 (default 18081)
#   CONNECTD_REGISTRY_SRFAKE    github.com/twmb/franz-go/pkg/sr version (default below)
#   CONNECTD_REGISTRY_CACHE     build cache dir (default ~/.cache/connectd/srfake-<version>)
#   CONNECTD_REGISTRY_DATA      pid file and log (default /tmp/connectd-registry)
#   CONNECTD_REGISTRY_START_TIMEOUT  seconds to wait for it to answer (default 60)
set -euo pipefail

SR_VERSION="${CONNECTD_REGISTRY_SRFAKE:-v1.8.0}"
PORT="${CONNECTD_REGISTRY_PORT:-18081}"
CACHE="${CONNECTD_REGISTRY_CACHE:-${HOME:-/root}/.cache/connectd/srfake-$SR_VERSION}"
DATA="${CONNECTD_REGISTRY_DATA:-/tmp/connectd-registry}"
START_TIMEOUT="${CONNECTD_REGISTRY_START_TIMEOUT:-60}"
HOST=127.0.0.1
BIN="$CACHE/connectd-srfake"
PIDFILE="$DATA/registry.pid"
LOGFILE="$DATA/registry.log"
URL="http://$HOST:$PORT"

log() { echo "registry.sh: $*" >&2; }
die() { echo "registry.sh: ERROR: $*" >&2; exit 1; }

if ! [[ "$PORT" =~ ^[1-9][0-9]{3,4}$ ]] || ((PORT > 65535)); then
  die "CONNECTD_REGISTRY_PORT must be a port in 1000..65535, got '$PORT'"
fi

build() {
  if [ -x "$BIN" ]; then return 0; fi
  command -v go >/dev/null || die "go not found (the registry is built from the Go module proxy)"
  log "building franz-go srfake $SR_VERSION into $CACHE"
  mkdir -p "$CACHE"
  cat >"$CACHE/main.go" <<'EOF'
// Command connectd-srfake serves franz-go's in-memory Confluent Schema Registry fake on a
// TCP address, for scripts/registry.sh.
package main

import (
	"flag"
	"log"
	"net"
	"net/http"

	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("schema registry (franz-go srfake) on http://%s", ln.Addr())
	log.Fatal(http.Serve(ln, srfake.NewRegistry().Handler()))
}
EOF
  (
    cd "$CACHE"
    [ -f go.mod ] || go mod init connectd.local/srfake >/dev/null 2>&1
    go get "github.com/twmb/franz-go/pkg/sr@$SR_VERSION" >&2
    go mod tidy >&2
    CGO_ENABLED=0 go build -o "$BIN.tmp" . >&2
    mv "$BIN.tmp" "$BIN"
  ) || die "building srfake $SR_VERSION failed (see output above)"
}

# our_pid prints the server pid if the pid file names a live connectd-srfake process.
our_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid="$(cat "$PIDFILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "connectd-srfake" || return 1
  echo "$pid"
}

healthy() { curl -fsS -m 2 "$URL/subjects" >/dev/null 2>&1; }

cmd_up() {
  if our_pid >/dev/null && healthy; then
    log "already running at $URL"
    cmd_env
    return 0
  fi
  command -v curl >/dev/null || die "curl not found"
  if our_pid >/dev/null; then
    log "running but not answering at $URL; restarting it"
    cmd_down
  fi
  # Another server on the port would answer the health check below for the one
  # started here, which then could not listen.
  if healthy; then
    die "something that this script did not start already answers at $URL (stop it, or set CONNECTD_REGISTRY_PORT)"
  fi
  build
  rm -rf "$DATA"
  mkdir -p "$DATA"
  nohup "$BIN" -addr "$HOST:$PORT" >"$LOGFILE" 2>&1 &
  local pid=$!
  echo "$pid" >"$PIDFILE"
  local deadline=$((SECONDS + START_TIMEOUT))
  until healthy; do
    # kill -0, not our_pid: until the forked shell has exec'd the server,
    # its command line is still this script's.
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 20 "$LOGFILE" >&2 || true
      die "the registry exited before answering (log: $LOGFILE)"
    fi
    ((SECONDS < deadline)) || die "the registry did not answer at $URL within ${START_TIMEOUT}s (log: $LOGFILE)"
    sleep 0.2
  done
  our_pid >/dev/null || die "the registry exited after start (log: $LOGFILE)"
  log "up at $URL (pid $(cat "$PIDFILE"))"
  cmd_env
}

cmd_down() {
  local pid deadline
  if pid="$(our_pid)"; then
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 5))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
    log "stopped (pid $pid)"
  fi
  rm -rf "$DATA"
}

cmd_status() {
  local pid
  if pid="$(our_pid)" && healthy; then
    echo "schema registry (srfake $SR_VERSION) running at $URL (pid $pid)"
    return 0
  fi
  echo "schema registry not running at $URL"
  return 1
}

cmd_env() { echo "export CONNECTD_SCHEMA_REGISTRY_URL=$URL"; }

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  logs) tail -n 100 -f "$LOGFILE" ;;
  *) echo "usage: $0 up|down|status|env|logs" >&2; exit 2 ;;
esac
