#!/usr/bin/env bash
# Installs what Scripts/bench.sh needs on a Debian machine, idempotently:
#   - Debian packages: Go and mattn/go-sqlite3 (GOPATH mode, no module download), the sqlite3 CLI,
#     python3-venv, GNU time (/usr/bin/time for CPU and peak RSS);
#   - .bench/venv: a Python virtual environment with InAppPy 2.5.2 (the Python peer) and matplotlib;
#   - .bench/go-peer: the Go peer, built from Scripts/bench/peer_go over /usr/share/gocode.
# Run as root, or as a user with sudo. Nothing already present is installed again.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
say() { echo "==> $*" >&2; }

# Debian packages.
missing=()
for package in golang-go golang-github-mattn-go-sqlite3-dev sqlite3 python3 python3-venv time; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The Python virtual environment (Debian's interpreter, so the result does not depend on pyenv & co).
venv="$root/.bench/venv"
stamp="$venv/.bench-requirements"
requirements="inapppy==2.5.2 aiohttp matplotlib"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$requirements" ]; then
  say "creating $venv with $requirements"
  mkdir -p "$root/.bench"
  /usr/bin/python3 -m venv "$venv"
  # shellcheck disable=SC2086 # the list is meant to split
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $requirements
  # Byte-compile everything (InAppPy installs without .pyc), so no run pays for compiling imports.
  "$venv/bin/python" -m compileall -q "$venv/lib" >/dev/null || true
  echo "$requirements" > "$stamp"
fi

# The Go programs (the peer, the notifications sender, the events sink), in GOPATH mode over
# Debian's Go sources: no module proxy involved. Each is rebuilt when its source is newer.
go_build() {  # go_build DIR BINARY WHAT
  local src="$root/Scripts/bench/$1/main.go" bin="$2"
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    say "building $3 into $bin"
    mkdir -p "$root/.bench/gopath" "$root/.bench/gocache"
    (cd "$root/Scripts/bench/$1" &&
      GO111MODULE=off GOPATH="$root/.bench/gopath:/usr/share/gocode" GOCACHE="$root/.bench/gocache" GOFLAGS= \
        go build -o "$bin" .)
  fi
}
peer_bin="$root/.bench/go-peer"
go_build peer_go "$peer_bin" "the Go peer"
load_bin="$root/.bench/notify-load"
go_build notify_load "$load_bin" "the notifications sender"
sink_bin="$root/.bench/event-sink"
go_build event_sink "$sink_bin" "the events bench's endpoint"
say "bench dependencies ready"
