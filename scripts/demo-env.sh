# Locations and ports of the embedded demo stack under var/ (sourced by scripts/demo and scripts/manage).
VAR_DIR="${WANMON_VAR_DIR:-$WANMON_ROOT/var}"
export WANMON_PG_PORT="${WANMON_PG_PORT:-54329}"
export WANMON_REDIS_PORT="${WANMON_REDIS_PORT:-63799}"
DEMO_PORT="${WANMON_DEMO_PORT:-8000}"
RUN="$VAR_DIR/run"
LOGS="$VAR_DIR/log"

demo_start_database() {
  mkdir -p "$VAR_DIR" "$RUN" "$LOGS"
  [ "$(id -u)" = 0 ] && chmod 755 "$VAR_DIR"
  pg_start "$VAR_DIR/pg" "$WANMON_PG_PORT"
  pg_createdb "$WANMON_PG_PORT" wanmon
}

demo_start_redis() {
  redis_start "$VAR_DIR/redis" "$WANMON_REDIS_PORT"
}
