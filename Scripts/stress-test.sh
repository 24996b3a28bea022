#!/usr/bin/env bash
# The suite under load (issue 11): every test must pass on a slow, busy machine, so this runs the
# whole suite N times in a row (default 5) while stress-ng keeps every core busy.
#
#   Scripts/stress-test.sh [--runs N] [--workers W]     (W: stress-ng CPU workers, default: cores)
#
# Installs stress-ng from Debian's packages when it is missing, builds the tests once, and stops
# at the first failing run (its output is in .build/stress/run-K.log).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5
workers=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ && "$workers" =~ ^[1-9][0-9]*$ ]] || { echo "error: --runs and --workers take positive whole numbers" >&2; exit 2; }
if ! command -v stress-ng >/dev/null; then
  echo "==> installing stress-ng" >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get install -y -qq stress-ng >/dev/null
fi
Scripts/bootstrap.sh
swift build --build-tests
mkdir -p .build/stress
stress-ng --cpu "$workers" --timeout 0 --quiet &
stress_pid=$!
trap 'kill $stress_pid 2>/dev/null || true' EXIT
echo "==> stress-ng: $workers CPU workers on $(nproc) cores; running the suite $runs times" >&2
for run in $(seq "$runs"); do
  start=$(date +%s)
  if swift test --skip-build > ".build/stress/run-$run.log" 2>&1; then
    echo "run $run/$runs: passed ($(grep -Eo 'with [0-9]+ tests in [0-9]+ suites' ".build/stress/run-$run.log" | tail -1)) in $(( $(date +%s) - start )) s"
  else
    echo "run $run/$runs: FAILED after $(( $(date +%s) - start )) s; see .build/stress/run-$run.log:"
    grep -E "✘" ".build/stress/run-$run.log" | head -20
    exit 1
  fi
done
echo "all $runs runs passed under load"
