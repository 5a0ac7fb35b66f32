#!/usr/bin/env bash
# Bring up the local services Leaf's tests need, without Docker:
#   * MariaDB/MySQL on 127.0.0.1:$LEAF_MYSQL_PORT with database `leaf`, and
#     root able to log in over TCP with an empty password
#     (mysql://root@127.0.0.1:3306/leaf).
#   * PostgreSQL on 127.0.0.1:$LEAF_PG_PORT answering user `postgres` without a
#     password (trust), with database `test` (postgres://postgres@127.0.0.1:5432/test):
#     Debian's cluster, started with pg_ctlcluster when it is down.
#   * A standalone ZooKeeper on 127.0.0.1:$LEAF_ZK_PORT, run from Debian's
#     `zookeeper` package with this script's own config, data and log dir.
#
# Usage:
#   scripts/services.sh            # (= up) every service up; idempotent
#   scripts/services.sh up         # same
#   scripts/services.sh mysql      # only MariaDB
#   scripts/services.sh pg         # only PostgreSQL
#   scripts/services.sh zk         # only ZooKeeper (installs it if missing)
#   scripts/services.sh zk-start   # start the managed ZooKeeper (quick once installed)
#   scripts/services.sh zk-stop    # stop it and wait until the port is closed
#   scripts/services.sh zk-restart # zk-stop + zk-start
#   scripts/services.sh status     # what answers where; exit 0 only if all do
#   scripts/services.sh faketime   # only Debian's libfaketime (clock-fault tests)
#   scripts/services.sh ccache     # only Debian's ccache (native addon builds, see below)
#
# Environment knobs:
#   LEAF_MYSQL_PORT   MariaDB port                  (default 3306)
#   LEAF_MYSQL_DB     database to create            (default leaf)
#   LEAF_PG_PORT      PostgreSQL port               (default 5432)
#   LEAF_ZK_PORT      ZooKeeper client port         (default 2181)
#   LEAF_ZK_DIR       ZooKeeper config/data/logs    (default /var/lib/leaf-zookeeper/<port>)
#   LEAF_ZK_HEAP      JVM heap for ZooKeeper        (default 256m)
#   LEAF_WAIT_SECS    how long to wait for a server (default 60)
set -euo pipefail

MYSQL_HOST=127.0.0.1
MYSQL_PORT="${LEAF_MYSQL_PORT:-3306}"
MYSQL_DB="${LEAF_MYSQL_DB:-leaf}"
PG_HOST=127.0.0.1
PG_PORT="${LEAF_PG_PORT:-5432}"
PG_DB=test
ZK_HOST=127.0.0.1
ZK_PORT="${LEAF_ZK_PORT:-2181}"
ZK_HEAP="${LEAF_ZK_HEAP:-256m}"
WAIT_SECS="${LEAF_WAIT_SECS:-60}"

if [[ -n "${LEAF_ZK_DIR:-}" ]]; then
  ZK_DIR="$LEAF_ZK_DIR"
elif [[ -w /var/lib ]]; then
  ZK_DIR="/var/lib/leaf-zookeeper/$ZK_PORT"
else
  ZK_DIR="${TMPDIR:-/tmp}/leaf-zk-$ZK_PORT"
fi
ZK_CFG="$ZK_DIR/conf/zoo.cfg"
ZK_LOG4J="$ZK_DIR/conf/log4j.properties"
ZK_DATA="$ZK_DIR/data"
ZK_LOGS="$ZK_DIR/logs"
ZK_OUT="$ZK_LOGS/zookeeper.out"   # JVM stdout/stderr
ZK_LOG="$ZK_LOGS/zookeeper.log"   # ZooKeeper's own (rolling) log
ZK_PID="$ZK_DIR/zookeeper.pid"
ZK_JAR=/usr/share/java/zookeeper.jar

log() { printf '[services] %s\n' "$*"; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }

SUDO=""
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi

# ---------------------------------------------------------------- helpers ---

APT_UPDATED=0
apt_install() {
  if [[ $APT_UPDATED -eq 0 ]]; then
    log "apt-get update"
    $SUDO apt-get update -qq
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# tcp_open HOST PORT: does something accept connections there?
tcp_open() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# zk_cmd WORD: send a ZooKeeper four-letter word, print the reply.
zk_cmd() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2" && printf %s "$3" >&3 && cat <&3' \
    _ "$ZK_HOST" "$ZK_PORT" "$1" 2>/dev/null || true
}

# Up = answers ruok with imok AND serves requests: right after a start ruok
# already says imok while srvr still says "not currently serving requests".
zk_ok() {
  [[ "$(zk_cmd ruok)" == imok ]] || return 1
  [[ "$(zk_cmd srvr)" != *"not currently serving"* ]]
}

# For waiting on a start: true once ZooKeeper answers, or once the process
# we started is gone (no point waiting longer then).
# Dead = the process we just launched exited (checked by pid: right after the fork its
# command line is not java's yet, so a cmdline match would call a starting server dead).
zk_ok_or_dead() {
  zk_ok && return 0
  if [[ -n ${ZK_STARTED:-} ]]; then
    ! kill -0 "$ZK_STARTED" 2>/dev/null
  else
    ! zk_pid >/dev/null
  fi
}

# wait_for SECONDS COMMAND...: poll COMMAND five times a second until it
# succeeds or SECONDS have passed.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  while ((SECONDS < deadline)); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  "$@"
}

# ---------------------------------------------------------------- MariaDB ---

mysql_client() {
  if command -v mariadb >/dev/null 2>&1; then echo mariadb; else echo mysql; fi
}
mysql_admin() {
  if command -v mariadb-admin >/dev/null 2>&1; then echo mariadb-admin; else echo mysqladmin; fi
}
mysql_server_bin() {
  local b
  for b in /usr/sbin/mariadbd /usr/sbin/mysqld; do
    [[ -x $b ]] && { echo "$b"; return 0; }
  done
  return 1
}

# Server alive? (ping succeeds even on "access denied", which is what we want.)
mysql_alive() {
  command -v "$(mysql_admin)" >/dev/null 2>&1 || return 1
  "$(mysql_admin)" --protocol=tcp -h"$MYSQL_HOST" -P"$MYSQL_PORT" -uroot \
    --connect-timeout=2 ping >/dev/null 2>&1
}

mysql_tcp() {  # SQL over TCP as root with an empty password
  "$(mysql_client)" --protocol=tcp -h"$MYSQL_HOST" -P"$MYSQL_PORT" -uroot \
    --connect-timeout=5 -N -B -e "$1"
}

mysql_socket() {  # SQL over the unix socket as root (unix_socket auth)
  $SUDO "$(mysql_client)" -uroot -N -B -e "$1"
}

mysql_start() {
  local bin
  bin=$(mysql_server_bin) || return 1
  log "starting $bin"
  $SUDO mkdir -p /run/mysqld
  $SUDO chown mysql:mysql /run/mysqld 2>/dev/null || true
  local args=()
  [[ $MYSQL_PORT != 3306 ]] && args+=(--port="$MYSQL_PORT")
  if command -v start-stop-daemon >/dev/null 2>&1; then
    $SUDO start-stop-daemon --start --oknodo --background --exec "$bin" -- "${args[@]}"
  elif command -v mysqld_safe >/dev/null 2>&1; then
    $SUDO nohup mysqld_safe "${args[@]}" >/dev/null 2>&1 </dev/null &
  else
    die "no start-stop-daemon or mysqld_safe to start $bin"
  fi
}

mysql_up() {
  if mysql_alive; then
    log "MariaDB answers on $MYSQL_HOST:$MYSQL_PORT"
  else
    if ! mysql_server_bin >/dev/null; then
      apt_install mariadb-server mariadb-client
    fi
    mysql_alive || mysql_start
    log "waiting (<= ${WAIT_SECS}s) for MariaDB on $MYSQL_HOST:$MYSQL_PORT"
    wait_for "$WAIT_SECS" mysql_alive \
      || die "MariaDB did not answer on $MYSQL_HOST:$MYSQL_PORT (see /var/log/mysql/error.log)"
    log "MariaDB is up"
  fi

  # root over TCP with an empty password, as mysql2 will connect.
  if ! mysql_tcp 'SELECT 1' >/dev/null 2>&1; then
    log "root@$MYSQL_HOST cannot log in over TCP; granting via the unix socket"
    mysql_socket "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
                  ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '';
                  GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
                  FLUSH PRIVILEGES;" \
      || die "cannot reach MariaDB as root over the unix socket to fix TCP login"
    if ! mysql_tcp 'SELECT 1' >/dev/null 2>&1; then
      # The connection may be matched to root@localhost (no skip-name-resolve):
      # let that account take an empty password too, keeping unix_socket.
      log "also allowing an empty password for root@localhost"
      mysql_socket "ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket
                      OR mysql_native_password USING PASSWORD('');
                    FLUSH PRIVILEGES;" || true
    fi
    mysql_tcp 'SELECT 1' >/dev/null 2>&1 \
      || die "root still cannot log in over TCP to $MYSQL_HOST:$MYSQL_PORT with an empty password"
  fi
  mysql_tcp "CREATE DATABASE IF NOT EXISTS \`$MYSQL_DB\`"
  log "MariaDB ready: mysql://root@$MYSQL_HOST:$MYSQL_PORT/$MYSQL_DB"
}

# ------------------------------------------------------------- PostgreSQL ---

pg_alive() {
  command -v pg_isready >/dev/null 2>&1 || return 1
  pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2
}

pg_sql() {  # SQL over TCP as postgres, no password (trust)
  psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -d postgres -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"
}

# Debian's cluster (the newest installed version), started without systemd.
pg_start() {
  local version
  version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n1)
  [[ -n $version ]] || return 1
  log "starting PostgreSQL $version (cluster main)"
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
}

pg_up() {
  if pg_alive; then
    log "PostgreSQL answers on $PG_HOST:$PG_PORT"
  else
    if ! command -v pg_ctlcluster >/dev/null 2>&1 || [[ -z "$(ls /etc/postgresql 2>/dev/null)" ]]; then
      apt_install postgresql postgresql-client
    fi
    pg_start
    log "waiting (<= ${WAIT_SECS}s) for PostgreSQL on $PG_HOST:$PG_PORT"
    wait_for "$WAIT_SECS" pg_alive \
      || die "PostgreSQL did not answer on $PG_HOST:$PG_PORT (see /var/log/postgresql/)"
    log "PostgreSQL is up"
  fi
  pg_sql 'SELECT 1' >/dev/null 2>&1 \
    || die "user postgres cannot log in over TCP to $PG_HOST:$PG_PORT without a password (pg_hba.conf: trust for 127.0.0.1)"
  if [[ -z "$(pg_sql "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" ]]; then
    pg_sql "CREATE DATABASE $PG_DB"
  fi
  log "PostgreSQL ready: postgres://postgres@$PG_HOST:$PG_PORT/$PG_DB"
}

# -------------------------------------------------------------- ZooKeeper ---

java_bin() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then echo "$JAVA_HOME/bin/java"; return; fi
  command -v java 2>/dev/null || { ls /usr/lib/jvm/*/bin/java 2>/dev/null | head -n1; }
}

zk_install() {
  if [[ -f $ZK_JAR && -n "$(java_bin)" ]]; then return 0; fi
  log "installing ZooKeeper from Debian's packages (about half a minute the first time)"
  # The `zookeeper` package (not `zookeeperd`): jars and scripts, no service.
  apt_install zookeeper
  [[ -f $ZK_JAR ]] || die "$ZK_JAR missing after installing zookeeper"
  [[ -n "$(java_bin)" ]] || die "no java after installing zookeeper"
}

# zookeeper.jar's manifest lists its dependencies but no slf4j binding, so
# add log4j 1.2 + its slf4j binding (both Debian deps) to get a real log.
zk_classpath() {
  local cp="$ZK_DIR/conf:$ZK_JAR" j
  for j in /usr/share/java/slf4j-log4j12.jar /usr/share/java/log4j-1.2.jar; do
    [[ -f $j ]] && cp="$cp:$j"
  done
  echo "$cp"
}

zk_write_config() {
  mkdir -p "$ZK_DIR/conf" "$ZK_DATA" "$ZK_LOGS"
  local tmp="$ZK_CFG.tmp"
  cat >"$tmp" <<EOF
# Written by scripts/services.sh; edits are overwritten on the next start.
# Standalone ZooKeeper for Leaf's local tests.
tickTime=1000
minSessionTimeout=2000
maxSessionTimeout=60000
initLimit=10
syncLimit=5
dataDir=$ZK_DATA
clientPort=$ZK_PORT
clientPortAddress=$ZK_HOST
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,stat
# Test server: skip fsync per write (data still survives a process stop).
forceSync=no
autopurge.snapRetainCount=3
autopurge.purgeInterval=1
EOF
  if ! cmp -s "$tmp" "$ZK_CFG" 2>/dev/null; then
    mv "$tmp" "$ZK_CFG"
  else
    rm -f "$tmp"
  fi
  cat >"$ZK_LOG4J" <<EOF
log4j.rootLogger=INFO, ROLLINGFILE
log4j.appender.ROLLINGFILE=org.apache.log4j.RollingFileAppender
log4j.appender.ROLLINGFILE.File=$ZK_LOG
log4j.appender.ROLLINGFILE.MaxFileSize=10MB
log4j.appender.ROLLINGFILE.MaxBackupIndex=3
log4j.appender.ROLLINGFILE.layout=org.apache.log4j.PatternLayout
log4j.appender.ROLLINGFILE.layout.ConversionPattern=%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n
EOF
}

# Pid of the ZooKeeper this script started (with this config), if running.
zk_pid() {
  local pid p
  if [[ -f $ZK_PID ]]; then
    pid=$(<"$ZK_PID")
    if [[ $pid =~ ^[0-9]+$ ]] && tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$ZK_CFG"; then
      echo "$pid"; return 0
    fi
  fi
  # Pid file lost or stale: look for a java process started with our config.
  for p in $(grep -lsaF -- "$ZK_CFG" /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${p#/proc/}; pid=${pid%/cmdline}
    if tr '\0' ' ' 2>/dev/null <"$p" | grep -qF -- "ZooKeeperServerMain $ZK_CFG"; then
      echo "$pid"; return 0
    fi
  done
  return 1
}

zk_start() {
  if zk_ok; then
    log "ZooKeeper answers on $ZK_HOST:$ZK_PORT"
    return 0
  fi
  if tcp_open "$ZK_HOST" "$ZK_PORT" && ! zk_pid >/dev/null; then
    die "$ZK_HOST:$ZK_PORT is taken by something that does not answer ruok"
  fi
  zk_install
  zk_write_config
  if ! zk_pid >/dev/null; then
    local java
    java=$(java_bin)
    log "starting ZooKeeper on $ZK_HOST:$ZK_PORT (config $ZK_CFG, log $ZK_LOG)"
    printf '\n=== %s start\n' "$(date -Is)" >>"$ZK_OUT"
    (
      exec 9>&-   # do not hand our lock to the daemon
      cd "$ZK_DIR"
      exec setsid nohup "$java" \
        -Xms64m -Xmx"$ZK_HEAP" -XX:+UseSerialGC \
        -Dzookeeper.log.dir="$ZK_LOGS" \
        -Dzookeeper.log.file=zookeeper.log \
        -Dzookeeper.root.logger=INFO,ROLLINGFILE \
        -Dlog4j.configuration="file:$ZK_LOG4J" \
        -Dzookeeper.admin.enableServer=false \
        -Dzookeeper.4lw.commands.whitelist=srvr,ruok,stat \
        -cp "$(zk_classpath)" \
        org.apache.zookeeper.server.ZooKeeperServerMain "$ZK_CFG" \
        >>"$ZK_OUT" 2>&1 </dev/null
    ) &
    ZK_STARTED=$!
    echo "$ZK_STARTED" >"$ZK_PID"
    disown 2>/dev/null || true
  else
    log "ZooKeeper process $(zk_pid) exists; waiting for it to answer"
  fi
  log "waiting (<= ${WAIT_SECS}s) for ZooKeeper ruok"
  if ! wait_for "$WAIT_SECS" zk_ok_or_dead || ! zk_ok; then
    tail -n 30 "$ZK_OUT" "$ZK_LOG" >&2 2>/dev/null || true
    die "ZooKeeper did not answer ruok on $ZK_HOST:$ZK_PORT"
  fi
  log "ZooKeeper is up: $(zk_cmd srvr | head -n1)"
}

zk_stop() {
  local pid i
  if ! pid=$(zk_pid); then
    rm -f "$ZK_PID"
    if tcp_open "$ZK_HOST" "$ZK_PORT"; then
      die "$ZK_HOST:$ZK_PORT is served by a ZooKeeper this script did not start; not stopping it"
    fi
    log "ZooKeeper (managed) is not running"
    return 0
  fi
  log "stopping ZooKeeper (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do       # up to 10 s for a clean stop
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "still alive after 10s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$ZK_PID"
  for ((i = 0; i < 100; i++)); do
    tcp_open "$ZK_HOST" "$ZK_PORT" || { log "ZooKeeper stopped; $ZK_HOST:$ZK_PORT closed"; return 0; }
    sleep 0.1
  done
  die "$ZK_HOST:$ZK_PORT still open after stopping ZooKeeper"
}

# ----------------------------------------------------------------- status ---

status() {
  local rc=0 pid
  if mysql_alive; then
    if mysql_tcp 'SELECT 1' >/dev/null 2>&1; then
      log "MariaDB:   up on $MYSQL_HOST:$MYSQL_PORT ($(mysql_tcp 'SELECT VERSION()'))," \
        "database $MYSQL_DB $(mysql_tcp "SHOW DATABASES LIKE '$MYSQL_DB'" | grep -q . && echo exists || echo MISSING)"
    else
      log "MariaDB:   up on $MYSQL_HOST:$MYSQL_PORT, but root cannot log in over TCP"; rc=1
    fi
  else
    log "MariaDB:   DOWN on $MYSQL_HOST:$MYSQL_PORT"; rc=1
  fi
  if pg_alive && pg_sql 'SELECT 1' >/dev/null 2>&1; then
    log "PostgreSQL: up on $PG_HOST:$PG_PORT ($(pg_sql 'SHOW server_version')), database $PG_DB" \
      "$(pg_sql "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'" | grep -q . && echo exists || echo MISSING)"
  else
    log "PostgreSQL: DOWN on $PG_HOST:$PG_PORT (or postgres cannot log in over TCP)"; rc=1
  fi
  if zk_ok; then
    log "ZooKeeper: up on $ZK_HOST:$ZK_PORT ($(zk_cmd srvr | sed -n 's/^Zookeeper version: //p' | cut -d, -f1))"
  else
    log "ZooKeeper: DOWN on $ZK_HOST:$ZK_PORT"; rc=1
  fi
  if pid=$(zk_pid); then
    log "ZooKeeper: managed pid $pid, config $ZK_CFG, log $ZK_LOG"
  else
    log "ZooKeeper: no managed process (config would be $ZK_CFG)"
  fi
  return $rc
}

# --------------------------------------------------------------- faketime ---

# Debian's libfaketime, preloaded into app processes by the clock-fault tests
# (test/support/faketime.ts). Only the library is needed, not a server.
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1

faketime_install() {
  if [[ -f $FAKETIME_LIB ]]; then return 0; fi
  log "installing libfaketime from Debian's packages"
  apt_install faketime
  [[ -f $FAKETIME_LIB ]] || die "$FAKETIME_LIB missing after installing faketime"
}

# ----------------------------------------------------------------- ccache ---

# Debian's ccache: its compiler links in /usr/lib/ccache, put first on PATH by .ci/run
# and by the consumer tests (test/support/consumer-app.ts), so the native addons that npm
# builds from source at every install (zookeeper's C client, better-sqlite3's SQLite) are
# compiled once per Node version and taken from ~/.cache/ccache afterwards.
CCACHE_LINKS=/usr/lib/ccache

ccache_install() {
  if [[ -x $CCACHE_LINKS/gcc ]]; then return 0; fi
  log "installing ccache from Debian's packages"
  apt_install ccache
  [[ -x $CCACHE_LINKS/gcc ]] || die "$CCACHE_LINKS/gcc missing after installing ccache"
}

# ------------------------------------------------------------------- main ---

# One run at a time (parallel test workers may call zk-start/zk-stop).
lock_run() {
  local lock="${TMPDIR:-/tmp}/leaf-services-$ZK_PORT.lock"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$lock"
    flock -w 600 9 || die "could not take $lock"
  fi
}

cmd="${1:-up}"
case "$cmd" in
  up | all)      lock_run; mysql_up; pg_up; zk_start; faketime_install; ccache_install ;;
  mysql)         lock_run; mysql_up ;;
  pg)            lock_run; pg_up ;;
  zk | zk-start) lock_run; zk_start ;;
  zk-stop)       lock_run; zk_stop ;;
  zk-restart)    lock_run; zk_stop; zk_start ;;
  faketime)      lock_run; faketime_install ;;
  ccache)        lock_run; ccache_install ;;
  status)        status ;;
  -h | --help | help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' ;;
  *) die "unknown command '$cmd' (try: up, mysql, pg, zk, zk-start, zk-stop, zk-restart, faketime, status)" ;;
esac
