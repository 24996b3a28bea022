#!/usr/bin/env bash
# A throwaway PostgreSQL server for the PostgreSQL store's tests, the benchmarks and the demo.
# `start` installs Debian's postgresql (and openssl) when missing, like Scripts/bootstrap.sh, then
# creates a cluster of its own in a temporary directory with the highest server version under
# /usr/lib/postgresql/*/bin (Debian's default cluster and its services are left alone), run by a
# user who is not root: `postgres` when this runs as root, else the current user. It listens on
# 127.0.0.1 only (a free port by default, TLS on with a throwaway CA whose certificate is DIR/ca.crt,
# for sslmode=verify-full to localhost or 127.0.0.1; passwords with scram-sha-256) and on a socket in
# DIR/socket (trust). It is tuned to be fast, not durable: fsync, synchronous_commit and
# full_page_writes are off. Roles: postgres (superuser), poller (owns the databases status_poller
# and status_poller_demo), webservice (login only); random passwords from [A-Za-z0-9].
# `start` writes DIR/env (mode 600: `export` lines to `source`) and prints DIR, its only stdout line:
#
#   pg_dir=$(Scripts/postgres.sh start); trap 'Scripts/postgres.sh stop "$pg_dir"' EXIT
#   source "$pg_dir/env"   # STATUS_POLLER_TEST_POSTGRES_URL (poller), _ADMIN_URL (postgres),
#                          # _DEMO_URL (poller, status_poller_demo), _CA, _SOCKET, _PORT, _DIR,
#                          # STATUS_POLLER_TEST_WEBSERVICE_URL (webservice, status_poller)
#
#   Scripts/postgres.sh start [--dir DIR] [--port N]
#   Scripts/postgres.sh stop DIR
#   Scripts/postgres.sh psql DIR [psql arguments...]
#
# start: --dir defaults to a new `mktemp -d /tmp/status-poller-pg.XXXXXX` (a given DIR must be
# missing or empty); --port defaults to a free loopback port (tried again if another process takes
# it first). stop: stops the server (fast shutdown; nothing to do if it is not running) and removes
# DIR; does nothing for an empty or missing DIR, so it is safe in a `trap ... EXIT`; refuses a
# directory that `start` did not make. psql: psql as the superuser over the socket, on the database
# status_poller unless the arguments name another (-d).
set -euo pipefail

usage() { sed -n '2,28p' "$0"; }
die() { echo "error: $*" >&2; exit 2; }
marker_name=.status-poller-pg

# The value of KEY in DIR's marker file (written by start: bindir, user, port).
marker_get() { awk -v key="$2" 'index($0, key "=") == 1 { print substr($0, length(key) + 2); exit }' "$1/$marker_name"; }

# Runs a command as USER: directly when that is who we are, else (as root) with runuser.
# From / so that a working directory the user may not enter does not matter.
as_user() {
  local user="$1"; shift
  if [ "$user" = "$(id -un)" ]; then
    (cd / && "$@")
  else
    [ "$(id -u)" -eq 0 ] || die "the cluster belongs to $user; run this as $user or as root"
    (cd / && runuser -u "$user" -- "$@")
  fi
}

# A password of 32 characters from [A-Za-z0-9] (nothing to percent-encode in a URL).
random_password() {
  local password=""
  while [ ${#password} -lt 32 ]; do
    password+=$(openssl rand -base64 48 | tr -dc 'A-Za-z0-9')
  done
  printf '%s' "${password:0:32}"
}

# A loopback TCP port that nobody listens on right now.
free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    local port
    while :; do
      port=$((20000 + RANDOM % 12000))
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
    done
  fi
}

install_packages() {
  local missing=() package
  for package in postgresql openssl; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "==> installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

cmd_start() {
  # Not `local`: the EXIT trap below reads them.
  dir="" port="" fixed_port=0 bindir="" server_user="" server_group="" created_dir=0 ok=0
  need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see --help)"; }
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) need_value "$@"; dir="$2"; shift 2 ;;
      --port) need_value "$@"; port="$2"; fixed_port=1; shift 2 ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown option $1 (see --help)" ;;
    esac
  done
  if [ "$fixed_port" -eq 1 ]; then
    [[ "$port" =~ ^[1-9][0-9]{0,4}$ ]] && [ "$port" -le 65535 ] || die "--port takes a port number (1-65535)"
  fi

  install_packages
  bindir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
  [ -n "$bindir" ] && [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ] \
    || die "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"

  # Who runs the server: never root (the server refuses to).
  if [ "$(id -u)" -eq 0 ]; then
    server_user=postgres
    id -u "$server_user" >/dev/null 2>&1 || die "no user postgres (Debian's postgresql package creates it)"
  else
    server_user=$(id -un)
  fi

  # The directory: ours (0711, so that the server user may pass through it but not list it).
  if [ -z "$dir" ]; then
    dir=$(mktemp -d /tmp/status-poller-pg.XXXXXX)
    created_dir=1
  else
    dir=$(realpath -m "$dir")
    # Paths go unquoted into the env file and quoted into postgresql.conf: keep them plain.
    [[ "$dir" =~ ^[A-Za-z0-9_./+-]+$ ]] || die "use a --dir made of [A-Za-z0-9_./+-] only"
    if [ -e "$dir" ]; then
      [ -d "$dir" ] && [ -z "$(ls -A "$dir")" ] || die "--dir $dir exists and is not an empty directory"
    else
      mkdir -p "$dir"
      created_dir=1
    fi
  fi
  chmod 0711 "$dir"
  as_user "$server_user" test -x "$dir" \
    || { [ "$created_dir" -eq 0 ] || rm -rf "$dir"; die "$server_user cannot enter $dir (choose a --dir under /tmp)"; }

  # On any failure from here on: show the server's log, stop the server if it started, and remove a
  # directory this made.
  # shellcheck disable=SC2317
  cleanup_failed_start() {
    [ "$ok" -eq 0 ] || return 0
    echo "error: could not start the PostgreSQL cluster in $dir" >&2
    if [ -s "$dir/server.log" ]; then
      echo "--- the end of $dir/server.log:" >&2
      tail -n 20 "$dir/server.log" >&2 || true
    fi
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_user "$server_user" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    if [ "$created_dir" -eq 1 ]; then rm -rf "$dir"; else echo "(left $dir as it is)" >&2; fi
  }
  trap cleanup_failed_start EXIT

  printf 'bindir=%s\nuser=%s\n' "$bindir" "$server_user" > "$dir/$marker_name"
  chmod 0644 "$dir/$marker_name"
  server_group=$(id -gn "$server_user")
  install -d -m 0700 -o "$server_user" -g "$server_group" "$dir/data" "$dir/socket"
  install -m 0600 -o "$server_user" -g "$server_group" /dev/null "$dir/server.log"

  local admin_password poller_password webservice_password
  admin_password=$(random_password)
  poller_password=$(random_password)
  webservice_password=$(random_password)

  echo "==> initdb ($("$bindir/postgres" --version), run by $server_user) in $dir" >&2
  local pwfile="$dir/data.pwfile"
  install -m 0600 -o "$server_user" -g "$server_group" /dev/null "$pwfile"
  printf '%s\n' "$admin_password" > "$pwfile"
  as_user "$server_user" "$bindir/initdb" -D "$dir/data" -U postgres --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 \
    --no-instructions --no-sync >/dev/null
  rm -f "$pwfile"

  # TLS: a throwaway CA (its key is deleted once it has signed) and a server certificate for
  # localhost and 127.0.0.1. The server's key and certificate live in the data directory.
  echo "==> TLS: a throwaway CA ($dir/ca.crt) and a certificate for localhost, 127.0.0.1" >&2
  local tls
  tls=$(mktemp -d "$dir/tls.XXXXXX")
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
    -subj "/CN=status-poller throwaway test CA" -keyout "$tls/ca.key" -out "$tls/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=localhost" \
    -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" "subjectAltName=DNS:localhost,IP:127.0.0.1" > "$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
    -days 365 -extfile "$tls/server.ext" -out "$tls/server.crt" 2>/dev/null
  install -m 0644 "$tls/ca.crt" "$dir/ca.crt"
  install -m 0600 -o "$server_user" -g "$server_group" "$tls/server.crt" "$dir/data/server.crt"
  install -m 0600 -o "$server_user" -g "$server_group" "$tls/server.key" "$dir/data/server.key"
  rm -rf "$tls"

  [ "$fixed_port" -eq 1 ] || port=$(free_port)
  # This cluster is thrown away after the tests: durability is traded for speed (fsync,
  # synchronous_commit and full_page_writes off). Never copy these settings to a real server.
  cat >> "$dir/data/postgresql.conf" <<CONF

# --- Scripts/postgres.sh: a throwaway cluster for tests, benchmarks and the demo ---
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir/socket'
max_connections = 400
shared_buffers = 256MB
# Throwaway: not crash-safe, on purpose (speed).
fsync = off
synchronous_commit = off
full_page_writes = off
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
CONF
  cat > "$dir/data/pg_hba.conf" <<HBA
# Scripts/postgres.sh: the socket (only its owner and root may reach it) trusts; TCP, on
# 127.0.0.1 only, wants a password (scram-sha-256), with or without TLS.
# TYPE   DATABASE  USER  ADDRESS       METHOD
local    all       all                 trust
hostssl  all       all   127.0.0.1/32  scram-sha-256
host     all       all   127.0.0.1/32  scram-sha-256
HBA

  # Start; with a port of our choosing, choose again if someone took it meanwhile.
  local attempt
  for attempt in 1 2 3 4 5; do
    (( ${#dir} + 20 < 107 )) || die "$dir is too long for a Unix socket path; use a shorter --dir"
    echo "==> starting the server on 127.0.0.1:$port" >&2
    if as_user "$server_user" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null; then
      break
    fi
    if [ "$fixed_port" -eq 0 ] && [ "$attempt" -lt 5 ] && grep -q 'could not \(bind\|create any TCP/IP sockets\)' "$dir/server.log"; then
      echo "==> port $port was taken meanwhile; another one" >&2
      port=$(free_port)
      : > "$dir/server.log"
      sed -i "s/^port = [0-9]*\$/port = $port/" "$dir/data/postgresql.conf"
      continue
    fi
    exit 1
  done
  echo "port=$port" >> "$dir/$marker_name"

  echo "==> roles poller, webservice; databases status_poller, status_poller_demo" >&2
  "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/socket" -p "$port" -U postgres -d postgres >&2 <<SQL
CREATE ROLE poller LOGIN PASSWORD '$poller_password';
CREATE ROLE webservice LOGIN PASSWORD '$webservice_password';
CREATE DATABASE status_poller OWNER poller;
CREATE DATABASE status_poller_demo OWNER poller;
SQL

  local tcp="127.0.0.1:$port"
  (
    umask 077
    cat > "$dir/env" <<ENV
# Scripts/postgres.sh: the throwaway PostgreSQL cluster in $dir (\`source\` this file).
export STATUS_POLLER_TEST_POSTGRES_URL=postgres://poller:$poller_password@$tcp/status_poller
export STATUS_POLLER_TEST_POSTGRES_ADMIN_URL=postgres://postgres:$admin_password@$tcp/postgres
export STATUS_POLLER_TEST_POSTGRES_DEMO_URL=postgres://poller:$poller_password@$tcp/status_poller_demo
export STATUS_POLLER_TEST_WEBSERVICE_URL=postgres://webservice:$webservice_password@$tcp/status_poller
export STATUS_POLLER_TEST_POSTGRES_CA=$dir/ca.crt
export STATUS_POLLER_TEST_POSTGRES_SOCKET=$dir/socket
export STATUS_POLLER_TEST_POSTGRES_PORT=$port
export STATUS_POLLER_TEST_POSTGRES_DIR=$dir
ENV
  )
  chmod 0600 "$dir/env"
  ok=1
  trap - EXIT
  echo "==> PostgreSQL ready on $tcp (stop: Scripts/postgres.sh stop $dir)" >&2
  echo "$dir"
}

cmd_stop() {
  [ $# -le 1 ] || die "stop takes one directory (see --help)"
  local dir="${1:-}"
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  dir=$(realpath "$dir")
  [ -f "$dir/$marker_name" ] || die "$dir is not a cluster of Scripts/postgres.sh start (no $marker_name); not touching it"
  local bindir user
  bindir=$(marker_get "$dir" bindir)
  user=$(marker_get "$dir" user)
  if [ -f "$dir/data/postmaster.pid" ] && [ -x "$bindir/pg_ctl" ]; then
    echo "==> stopping the PostgreSQL cluster in $dir" >&2
    as_user "$user" "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 \
      || as_user "$user" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 \
      || true
  fi
  rm -rf "$dir"
}

cmd_psql() {
  [ $# -ge 1 ] && [ -n "$1" ] || die "psql needs the cluster's directory (see --help)"
  local dir
  dir=$(realpath "$1"); shift
  [ -f "$dir/$marker_name" ] || die "$dir is not a cluster of Scripts/postgres.sh start"
  local bindir port
  bindir=$(marker_get "$dir" bindir)
  port=$(marker_get "$dir" port)
  [ -n "$port" ] || die "the cluster in $dir did not finish starting"
  PGDATABASE=status_poller exec "$bindir/psql" -X -h "$dir/socket" -p "$port" -U postgres "$@"
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
command="$1"; shift
case "$command" in
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  psql) cmd_psql "$@" ;;
  -h|--help) usage ;;
  *) die "unknown command $command (see --help)" ;;
esac
