#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benchmarks, owned by an unprivileged user, on a free loopback port.
#   scripts/postgres-cluster.sh start [--fast]   prints "URL DIR"; --fast turns fsync off (tests only, never benchmarks)
#   scripts/postgres-cluster.sh restart DIR     stops the server at once (as a crash would) and starts it again
#   scripts/postgres-cluster.sh stop DIR
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "PostgreSQL is not installed: apt-get install postgresql" >&2
  exit 2
fi
# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "${1:-}" in
start)
  dir=$(mktemp -d /tmp/northwind-pg.XXXXXX)
  chmod 755 "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  options="-h 127.0.0.1 -p $port -k $dir -c max_connections=400"
  if [ "${2:-}" = "--fast" ]; then options="$options -c fsync=off -c synchronous_commit=off -c full_page_writes=off"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U northwind --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
  # The server must inherit none of our descriptors (output, or the socket Foundation's Process watches), or
  # whoever started this script waits for the server to exit.
  if ! (
    for fd in /proc/self/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done
    exec </dev/null >/dev/null 2>&1
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$options" -w start
  ); then
    cat "$dir/server.log" >&2
    exit 1
  fi
  echo "postgres://northwind@127.0.0.1:$port/postgres?sslmode=disable $dir"
  ;;
restart)
  # pg_ctl starts the server again with the options it was started with (postmaster.opts).
  if ! (
    for fd in /proc/self/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done
    exec </dev/null >/dev/null 2>&1
    as_owner "$bin/pg_ctl" -D "$2/data" -l "$2/server.log" -m immediate -w restart
  ); then
    tail -20 "$2/server.log" >&2
    exit 1
  fi
  ;;
stop)
  as_owner "$bin/pg_ctl" -D "$2/data" -m immediate stop >/dev/null || true
  rm -rf "$2"
  ;;
*)
  echo "usage: $0 start [--fast] | restart DIR | stop DIR" >&2
  exit 64
  ;;
esac
