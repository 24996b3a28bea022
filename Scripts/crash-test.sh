#!/usr/bin/env bash
# Crash consistency (issue 11): SIGKILL the poller at random moments and check that nothing is lost,
# half-written or unaccounted for. Against `status-poller-demo simulate` (a free loopback port, a seeded
# population, latency uniform:1ms-5ms, a small rate of faults that fail a request) and a fresh
# database enrolled through the database contract, it repeatedly moves the simulated clock (0–5
# days), starts `run`, `backfill --all` or `backfill --resume` at random (concurrency 2–32) and
# SIGKILLs most of them (seeded): around start-up, at a random point of the run, or right after
# its n-th commit. After every process: PRAGMA integrity_check, the audit trail chains and ends in
# the row, bookkeeping agrees, the backfill checkpoint covers only done rows, the run history.
# After the kills: every unfinished backfill is resumed, a clean nightly run, then a backfill of
# every row; every row must equal the simulator's truth at the final clock, and the runs left
# `running` must be exactly the runs whose last process was killed while open.
# (Scripts/reliability/crash_test.py says precisely what each check means.)
#
#   Scripts/crash-test.sh [--short] [--kills N] [--subscribers N] [--seed S] [--binary PATH] [--keep]
#
# Default: 50 kills among 4,000 subscribers; --short (for CI): 8 kills among 1,500. --binary
# defaults to .build/debug/status-poller when present (after `swift build --build-tests`), else
# .build/release/status-poller, else builds the debug binary. Prints the totals; exits 1 on any
# violation, keeping the database and each process's logs under /tmp/crash-test-*.
set -euo pipefail
cd "$(dirname "$0")/.."

short=0 kills="" subscribers="" seed=11 binary="" keep=()
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --kills) need_value "$@"; kills="$2"; shift 2 ;;
    --subscribers) need_value "$@"; subscribers="$2"; shift 2 ;;
    --seed) need_value "$@"; seed="$2"; shift 2 ;;
    --binary) need_value "$@"; binary="$(realpath "$2")"; shift 2 ;;
    --keep) keep=(--keep); shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$kills" ] || { [ "$short" -eq 1 ] && kills=8 || kills=50; }
[ -n "$subscribers" ] || { [ "$short" -eq 1 ] && subscribers=1500 || subscribers=4000; }
[[ "$kills" =~ ^[1-9][0-9]*$ && "$subscribers" =~ ^[1-9][0-9]*$ && "$seed" =~ ^[0-9]+$ ]] \
  || { echo "error: --kills and --subscribers take positive whole numbers, --seed a whole number" >&2; exit 2; }

. Scripts/reliability/binary.sh
resolve_binary
echo "==> crash test: $kills kills, $subscribers subscribers, seed $seed, binary $binary" >&2
started=$(date +%s)
rc=0
python3 Scripts/reliability/crash_test.py --binary "$binary" --kills "$kills" --subscribers "$subscribers" --seed "$seed" "${keep[@]}" || rc=$?
echo "==> crash test took $(($(date +%s) - started)) s" >&2
exit "$rc"
