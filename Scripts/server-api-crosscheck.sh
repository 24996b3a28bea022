#!/usr/bin/env bash
# Cross-checks the simulator's App Store Server API with code nobody here wrote: Apple's
# app-store-server-library for Python, pinned, installed into .venv-crosscheck/. Starts
# `status-poller-demo simulate` on a free loopback port (its key files in a temporary --key-dir), then
# Scripts/crosscheck/server_api_crosscheck.py calls Get All Subscription Statuses and Get
# Transaction History v2 through Apple's client, verifies every signature with Apple's
# SignedDataVerifier against the simulator's root (and sees it rejected under another root), and
# compares the decoded values with /simulator/truth. Prints a summary; exits 1 on any mismatch.
#
#   Scripts/server-api-crosscheck.sh [--binary PATH] [--subscribers N] [--per-clock N]
#
# --binary defaults to .build/debug/status-poller when present (after `swift build --build-tests`),
# else .build/release/status-poller, else builds the debug binary (Scripts/reliability/binary.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

library_version="3.1.2"
binary="" subscribers=400 per_clock=40
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) need_value "$@"; binary="$(realpath "$2")"; shift 2 ;;
    --subscribers) need_value "$@"; subscribers="$2"; shift 2 ;;
    --per-clock) need_value "$@"; per_clock="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$subscribers" =~ ^[1-9][0-9]*$ && "$per_clock" =~ ^[1-9][0-9]*$ ]] \
  || { echo "error: --subscribers and --per-clock take positive whole numbers" >&2; exit 2; }

. Scripts/reliability/binary.sh
resolve_binary

# Apple's library into an ignored virtual environment (python3-venv from Debian when missing).
venv=.venv-crosscheck
if ! "$venv/bin/python" -c "import appstoreserverlibrary" 2>/dev/null \
   || [ "$("$venv/bin/python" -m pip show app-store-server-library 2>/dev/null | sed -n 's/^Version: //p')" != "$library_version" ]; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" 2>/dev/null; then
    rm -rf "$venv"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "==> installing python3-venv" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  echo "==> installing app-store-server-library $library_version into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "app-store-server-library==$library_version"
fi

work="$(mktemp -d /tmp/server-api-crosscheck-XXXXXX)"
simulator_pid=""
cleanup() {
  if [ -n "$simulator_pid" ] && kill -0 "$simulator_pid" 2>/dev/null; then
    kill -TERM "$simulator_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$simulator_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$simulator_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A population with more sandbox subscribers and more lifecycle events than the default, so that
# both environments and every status show up in a small sample.
"$(demo_binary_of "$binary")" simulate --host 127.0.0.1 --port 0 --subscribers "$subscribers" --seed 7 \
  --start 2026-03-01T00:00:00Z --key-dir "$work/keys" \
  --rate sandbox=0.25 --rate churn=0.15 --rate billing_failure=0.2 --rate refund=0.05 --rate upgrade=0.05 \
  > "$work/simulator.out" 2> "$work/simulator.err" < /dev/null &
simulator_pid=$!
for _ in $(seq 600); do
  grep -q "server-api-sandbox" "$work/simulator.out" 2>/dev/null && break
  kill -0 "$simulator_pid" 2>/dev/null || { echo "error: the simulator exited: $(tail -5 "$work/simulator.err")" >&2; exit 1; }
  sleep 0.1
done
grep -q "server-api-sandbox" "$work/simulator.out" || { echo "error: the simulator printed no Server API URL in 60 s" >&2; exit 1; }
if grep -q "BEGIN PRIVATE KEY" "$work/simulator.out" "$work/simulator.err"; then
  echo "error: the simulator printed its private key" >&2; exit 1
fi
[ "$(stat -c %a "$work"/keys/SubscriptionKey_*.p8)" = "600" ] || { echo "error: the key file is not mode 0600" >&2; exit 1; }

echo "==> crosscheck: $subscribers subscribers, Apple's app-store-server-library $library_version, binary $binary" >&2
"$venv/bin/python" Scripts/crosscheck/server_api_crosscheck.py --simulator-output "$work/simulator.out" \
  --subscribers "$subscribers" --per-clock "$per_clock"
