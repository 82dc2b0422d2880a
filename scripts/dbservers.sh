#!/usr/bin/env bash
# Starts, stops or restarts private PostgreSQL and MariaDB servers for iolab's tests and
# benchmarks: own data directories under $IOLAB_DBSERVERS (default /tmp/iolab-dbservers), own
# ports on 127.0.0.1 only (PostgreSQL 55432, MariaDB 53306). Needs root and Debian's postgresql
# and mariadb-server packages. Prints the URLs to use with `start` and `env`:
#   IOLAB_TEST_PG_URL=postgres://iolab:iolab@127.0.0.1:55432/iolab
#   IOLAB_TEST_MYSQL_URL=mysql://iolab:iolab@127.0.0.1:53306/iolab
# Usage: scripts/dbservers.sh start|stop|restart|env [pg|mysql|all]
set -euo pipefail
BASE=${IOLAB_DBSERVERS:-/tmp/iolab-dbservers}
PG_PORT=${IOLAB_PG_PORT:-55432}
MY_PORT=${IOLAB_MY_PORT:-53306}
what=${2:-all}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

pg_start() {
  [ -n "$PGBIN" ] || { echo "dbservers: PostgreSQL is not installed" >&2; return 1; }
  mkdir -p "$BASE"
  chmod 755 "$BASE"
  if [ ! -f "$BASE/pg/PG_VERSION" ]; then
    mkdir -p "$BASE/pg" && chown postgres:postgres "$BASE/pg"
    runuser -u postgres -- "$PGBIN/initdb" -D "$BASE/pg" -U postgres --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  fi
  mkdir -p "$BASE/pgsock" && chown postgres:postgres "$BASE/pgsock"
  if runuser -u postgres -- "$PGBIN/pg_ctl" -D "$BASE/pg" status >/dev/null 2>&1; then
    return 0 # already running
  fi
  touch "$BASE/pg.log" && chown postgres:postgres "$BASE/pg.log"
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$BASE/pg" -l "$BASE/pg.log" -w -t 60 \
    -o "-p $PG_PORT -k $BASE/pgsock -c listen_addresses=127.0.0.1 -c shared_buffers=64MB -c max_connections=100" start >/dev/null
  runuser -u postgres -- psql -q -h "$BASE/pgsock" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=0 >/dev/null 2>&1 <<SQL || true
CREATE ROLE iolab LOGIN SUPERUSER PASSWORD 'iolab';
CREATE DATABASE iolab OWNER iolab;
SQL
}

pg_stop() {
  [ -n "$PGBIN" ] && [ -f "$BASE/pg/postmaster.pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$BASE/pg" -m fast -w stop >/dev/null || true
}

my_start() {
  command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || { echo "dbservers: MariaDB is not installed" >&2; return 1; }
  mkdir -p "$BASE"
  chmod 755 "$BASE"
  if [ ! -d "$BASE/my/mysql" ]; then
    mkdir -p "$BASE/my" && chown mysql:mysql "$BASE/my"
    mariadb-install-db --datadir="$BASE/my" --user=mysql --auth-root-authentication-method=socket >/dev/null 2>&1
  fi
  mkdir -p "$BASE/myrun" && chown mysql:mysql "$BASE/myrun"
  if mariadb -S "$BASE/myrun/my.sock" -u root -e "SELECT 1" >/dev/null 2>&1; then
    return 0 # already running
  fi
  /usr/sbin/mariadbd --datadir="$BASE/my" --port="$MY_PORT" --bind-address=127.0.0.1 \
    --socket="$BASE/myrun/my.sock" --pid-file="$BASE/myrun/my.pid" --log-error="$BASE/myrun/my.err" --user=mysql \
    --innodb-buffer-pool-size=64M --skip-name-resolve >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    [ -S "$BASE/myrun/my.sock" ] && mariadb -S "$BASE/myrun/my.sock" -u root -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.5
  done
  mariadb -S "$BASE/myrun/my.sock" -u root >/dev/null 2>&1 <<SQL
CREATE USER IF NOT EXISTS 'iolab'@'127.0.0.1' IDENTIFIED BY 'iolab';
CREATE USER IF NOT EXISTS 'iolab'@'localhost' IDENTIFIED BY 'iolab';
GRANT ALL ON *.* TO 'iolab'@'127.0.0.1';
GRANT ALL ON *.* TO 'iolab'@'localhost';
CREATE DATABASE IF NOT EXISTS iolab;
SQL
}

my_stop() {
  if [ -f "$BASE/myrun/my.pid" ]; then
    kill "$(cat "$BASE/myrun/my.pid")" 2>/dev/null || true
    for _ in $(seq 1 120); do [ -f "$BASE/myrun/my.pid" ] || break; sleep 0.5; done
  fi
}

env_lines() {
  case $what in pg|all) echo "IOLAB_TEST_PG_URL=postgres://iolab:iolab@127.0.0.1:$PG_PORT/iolab" ;; esac
  case $what in mysql|all) echo "IOLAB_TEST_MYSQL_URL=mysql://iolab:iolab@127.0.0.1:$MY_PORT/iolab" ;; esac
  echo "IOLAB_DBSERVERS=$BASE"
}

case ${1:-} in
  start) case $what in pg) pg_start ;; mysql) my_start ;; all) pg_start; my_start ;; esac; env_lines ;;
  stop) case $what in pg) pg_stop ;; mysql) my_stop ;; all) pg_stop; my_stop ;; esac ;;
  restart) case $what in pg) pg_stop; pg_start ;; mysql) my_stop; my_start ;; all) pg_stop; my_stop; pg_start; my_start ;; esac >/dev/null ;;
  env) env_lines ;;
  *) echo "usage: $0 start|stop|restart|env [pg|mysql|all]" >&2; exit 2 ;;
esac
