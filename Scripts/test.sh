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
