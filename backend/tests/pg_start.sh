#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster on loopback and print its SQLAlchemy URL on stdout.
#
#   url=$(bash backend/tests/pg_start.sh)          # start; the cluster lives in a temp dir
#   IODIAG_TEST_POSTGRES_URL=$url make test
#   bash backend/tests/pg_start.sh stop            # stop it and remove the directory
#
# Needs the PostgreSQL server binaries (Debian: apt-get install -y postgresql). PostgreSQL refuses
# to run as root, so as root the cluster runs as the `postgres` system user. Trust authentication,
# loopback only: it is for tests, never for data.
set -euo pipefail

state=${IODIAG_PG_STATE:-/tmp/iodiag-pg-test}

find_bin() {
  local b
  for b in "$(command -v pg_ctl 2>/dev/null || true)" /usr/lib/postgresql/*/bin/pg_ctl; do
    if [ -n "$b" ] && [ -x "$b" ]; then dirname "$(readlink -f "$b")"; return; fi
  done
  echo "pg_start: PostgreSQL server binaries not found (apt-get install -y postgresql)" >&2
  exit 2
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

bin=$(find_bin)
if [ "${1:-start}" = stop ]; then
  if [ -f "$state/dir" ]; then
    dir=$(cat "$state/dir")
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir" "$state"
  fi
  exit 0
fi

if [ -f "$state/url" ] && [ -f "$state/dir" ]; then
  dir=$(cat "$state/dir")
  if as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    cat "$state/url"   # already running: same cluster
    exit 0
  fi
fi

dir=$(mktemp -d /tmp/iodiag-pg.XXXXXX)
chmod 755 "$dir"
[ "$(id -u)" = 0 ] && chown postgres "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 2; }
as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off -c max_connections=200" \
  start >/dev/null || { cat "$dir/server.log" >&2; exit 2; }
as_owner "$bin/../bin/createdb" -h 127.0.0.1 -p "$port" -U postgres iodiag_test 2>/dev/null \
  || as_owner psql -h 127.0.0.1 -p "$port" -U postgres -c 'CREATE DATABASE iodiag_test' >/dev/null
mkdir -p "$state"
echo "$dir" >"$state/dir"
url="postgresql+psycopg://postgres@127.0.0.1:$port/iodiag_test"
echo "$url" >"$state/url"
echo "$url"
