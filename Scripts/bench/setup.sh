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

# The Go peer, in GOPATH mode over Debian's Go sources: no module proxy involved.
peer_src="$root/Scripts/bench/peer_go/main.go"
peer_bin="$root/.bench/go-peer"
if [ ! -x "$peer_bin" ] || [ "$peer_src" -nt "$peer_bin" ]; then
  say "building the Go peer into $peer_bin"
  gopath="$root/.bench/gopath"
  mkdir -p "$gopath" "$root/.bench/gocache"
  (cd "$root/Scripts/bench/peer_go" &&
    GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOCACHE="$root/.bench/gocache" GOFLAGS= \
      go build -o "$peer_bin" .)
fi
# The notifications sender, built the same way.
load_src="$root/Scripts/bench/notify_load/main.go"
load_bin="$root/.bench/notify-load"
if [ ! -x "$load_bin" ] || [ "$load_src" -nt "$load_bin" ]; then
  say "building the notifications sender into $load_bin"
  gopath="$root/.bench/gopath"
  mkdir -p "$gopath" "$root/.bench/gocache"
  (cd "$root/Scripts/bench/notify_load" &&
    GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOCACHE="$root/.bench/gocache" GOFLAGS= \
      go build -o "$load_bin" .)
fi
say "bench dependencies ready"
