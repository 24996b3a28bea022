#!/usr/bin/env bash
# The test command: installs what the build needs, starts a throwaway PostgreSQL server
# (Scripts/postgres.sh) unless STATUS_POLLER_TEST_POSTGRES_URL names one, builds everything, runs
# every test.
# A first build takes about 6 minutes on 2 cores; later ones are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/bootstrap.sh
# A throwaway PostgreSQL server for the tests and the harnesses (Scripts/postgres.sh), stopped and
# removed on exit; none when STATUS_POLLER_TEST_POSTGRES_URL already names one. Its env file exports
# every STATUS_POLLER_TEST_* variable into `swift test` and the harnesses.
if [ -z "${STATUS_POLLER_TEST_POSTGRES_URL:-}" ]; then
  pg_dir=""
  trap 'Scripts/postgres.sh stop "$pg_dir" || true' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  pg_dir=$(Scripts/postgres.sh start)
  . "$pg_dir/env"
  echo "==> PostgreSQL for the tests: 127.0.0.1:$STATUS_POLLER_TEST_POSTGRES_PORT (throwaway cluster in $pg_dir)" >&2
else
  echo "==> PostgreSQL for the tests: the server of STATUS_POLLER_TEST_POSTGRES_URL (given)" >&2
fi
echo "==> building (first build: ~6 min on 2 cores)" >&2
swift build --build-tests
echo "==> testing" >&2
# The parallel suite holds up to ~1,600 descriptors at once (loopback servers, PostgreSQL
# connections, SQLite files); a login shell's soft limit is often 1,024. Raise it where allowed.
ulimit -Sn 8192 2>/dev/null || ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true
swift test --skip-build "$@"
# The whole suite (no filter given): the short versions of the reliability harnesses too.
if [ $# -eq 0 ]; then
  echo "==> crash consistency, short (docs/RELIABILITY.md)" >&2
  Scripts/crash-test.sh --short --binary .build/debug/status-poller
  echo "==> several workers under SIGKILL (PostgreSQL), short (docs/RELIABILITY.md)" >&2
  Scripts/worker-kill-test.sh --short --binary .build/debug/status-poller
  echo "==> the notification receiver under SIGKILL, short (docs/RELIABILITY.md)" >&2
  Scripts/notification-kill-test.sh --short --binary .build/debug/status-poller
  echo "==> the event deliverer under SIGKILL, short (docs/RELIABILITY.md)" >&2
  Scripts/event-kill-test.sh --short --binary .build/debug/status-poller
  echo "==> the consumption sender under SIGKILL, short (docs/RELIABILITY.md)" >&2
  Scripts/consumption-kill-test.sh --short --binary .build/debug/status-poller
  echo "==> the web service beside a run, short (docs/RELIABILITY.md)" >&2
  Scripts/beside-test.sh --short --binary .build/debug/status-poller
  echo "==> the simulator's App Store Server API against Apple's Python library" >&2
  Scripts/server-api-crosscheck.sh --binary .build/debug/status-poller
  echo "==> the report page in a real browser (chromium, headless)" >&2
  Scripts/report-check.sh --binary .build/debug/status-poller
  echo "==> the report page with Apple's prices (Server API and notifications): revenue and offers" >&2
  Scripts/report-check.sh --binary .build/debug/status-poller --notifications
  echo "==> the Debian package on this host, without the toolchain (docs/OPERATIONS.md#the-package)" >&2
  if [ "${CI:-}" = true ]; then Scripts/package-check.sh; else Scripts/package-check.sh --allow-skip; fi
fi
