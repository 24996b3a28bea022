#!/usr/bin/env bash
# The test command: installs what the build needs, builds everything, runs every test.
# A first build takes about 6 minutes on 2 cores; later ones are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/bootstrap.sh
echo "==> building (first build: ~6 min on 2 cores)" >&2
swift build --build-tests
echo "==> testing" >&2
swift test --skip-build "$@"
# The whole suite (no filter given): the short versions of the reliability harnesses too.
if [ $# -eq 0 ]; then
  echo "==> crash consistency, short (docs/RELIABILITY.md)" >&2
  Scripts/crash-test.sh --short --binary .build/debug/status-poller
  echo "==> the web service beside a run, short (docs/RELIABILITY.md)" >&2
  Scripts/beside-test.sh --short --binary .build/debug/status-poller
  echo "==> the simulator's App Store Server API against Apple's Python library" >&2
  Scripts/server-api-crosscheck.sh --binary .build/debug/status-poller
fi
