# Shared shell helpers of scripts/*: private PostgreSQL+TimescaleDB and Redis instances.
# Sourced, not run. Everything here works as root (CI) and as an ordinary user.

WANMON_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PG_MAJOR="${WANMON_PG_MAJOR:-15}"
PG_BIN="${WANMON_PG_BIN:-/usr/lib/postgresql/${PG_MAJOR}/bin}"
VENV="${WANMON_ROOT}/.venv"
# The local embedded stack: the settings accept the published development secret key here (and only here or
# with WANMON_DEBUG=1) when WANMON_SECRET_KEY is not set.
export WANMON_DEMO="${WANMON_DEMO:-1}"

log() { printf '[wanmon] %s\n' "$*" >&2; }
die() { printf '[wanmon] error: %s\n' "$*" >&2; exit 1; }

# PostgreSQL refuses to run as root: as root, run its programs as the 'postgres' system user.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

port_open() {  # port_open PORT -> 0 when something listens on 127.0.0.1:PORT
  python3 - "$1" <<'PY'
import socket, sys
s = socket.socket()
s.settimeout(0.5)
sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)
PY
}

# pg_start DATADIR PORT [extra postgres -c options...]: initdb on first use, then start.
pg_start() {
  local datadir="$1" port="$2"; shift 2
  mkdir -p "$datadir"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$datadir" && chmod 700 "$datadir"
  if [ ! -f "$datadir/PG_VERSION" ]; then
    as_pg "$PG_BIN/initdb" -D "$datadir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$datadir.initdb.log" 2>&1 \
      || { cat "$datadir.initdb.log" >&2; die "initdb failed in $datadir"; }
  fi
  if as_pg "$PG_BIN/pg_ctl" -D "$datadir" status >/dev/null 2>&1; then
    return 0
  fi
  local opts="-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$datadir"
  opts+=" -c shared_preload_libraries=timescaledb -c timescaledb.telemetry_level=off -c max_connections=200"
  local extra
  for extra in "$@"; do opts+=" -c $extra"; done
  as_pg "$PG_BIN/pg_ctl" -D "$datadir" -l "$datadir/postgresql.log" -o "$opts" -w -t 60 start >/dev/null \
    || { tail -20 "$datadir/postgresql.log" >&2; die "PostgreSQL did not start (log: $datadir/postgresql.log)"; }
}

pg_stop() {
  local datadir="$1"
  [ -f "$datadir/PG_VERSION" ] || return 0
  as_pg "$PG_BIN/pg_ctl" -D "$datadir" -m fast -w stop >/dev/null 2>&1 || true
}

pg_createdb() {  # pg_createdb PORT NAME (no error when it exists)
  local port="$1" name="$2"
  if ! "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -Atqc "SELECT 1 FROM pg_database WHERE datname='$name'" postgres | grep -q 1; then
    "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres "$name"
  fi
}

# redis_start DIR PORT: a private Redis that keeps nothing on disk.
redis_start() {
  local dir="$1" port="$2"
  mkdir -p "$dir"
  if [ -f "$dir/redis.pid" ] && kill -0 "$(cat "$dir/redis.pid")" 2>/dev/null; then
    return 0
  fi
  redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
    --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >/dev/null
  local i
  for i in $(seq 1 50); do port_open "$port" && return 0; sleep 0.1; done
  die "Redis did not start on port $port (log: $dir/redis.log)"
}

redis_stop() {
  local dir="$1"
  if [ -f "$dir/redis.pid" ]; then
    kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
    rm -f "$dir/redis.pid"
  fi
}

# private_services_start RUN_DIR: a throw-away PostgreSQL+TimescaleDB and Redis unless DATABASE_URL /
# REDIS_URL are set; exports them. private_services_stop RUN_DIR stops what was started.
private_services_start() {
  local run_dir="$1" port
  if [ -z "${DATABASE_URL:-}" ]; then
    port="$(free_port)"
    # Durability settings off: a throw-away cluster.
    pg_start "$run_dir/pg" "$port" fsync=off synchronous_commit=off full_page_writes=off
    touch "$run_dir/.started-pg"
    pg_createdb "$port" wanmon
    export DATABASE_URL="postgres://postgres@127.0.0.1:$port/wanmon"
    log "private PostgreSQL+TimescaleDB on port $port"
  fi
  if [ -z "${REDIS_URL:-}" ]; then
    port="$(free_port)"
    redis_start "$run_dir/redis" "$port"
    touch "$run_dir/.started-redis"
    export REDIS_URL="redis://127.0.0.1:$port/0"
    log "private Redis on port $port"
  fi
}

private_services_stop() {
  local run_dir="$1"
  [ -f "$run_dir/.started-pg" ] && pg_stop "$run_dir/pg"
  [ -f "$run_dir/.started-redis" ] && redis_stop "$run_dir/redis"
  rm -rf "$run_dir"
}
