#!/usr/bin/env bash
# The Debian package on a real host, as an operator would use it, without the Swift toolchain:
# builds it with Scripts/package.sh (or takes --deb FILE), installs it with dpkg, runs the installed
# binary with nothing of the toolchain on its library path (`--version`; ldd: no library from the
# toolchain; no simulator in it), `migrate` on a fresh SQLite file and one `run` against the simulator
# (`status-poller-demo simulate`, from the build tree: --simulator), as the status-poller user, reading the shared secret from /etc/status-poller as the cron entry does,
# out through an HTTP CONNECT proxy only (HTTP_PROXY; Scripts/reliability/connect_proxy.py), then
# `events deliver --once` to an HTTPS endpoint only that proxy could reach (HTTPS_PROXY: the proxy
# sees the endpoint's CONNECT and refuses it, and the delivery's error says so);
# checks the units (`systemd-analyze verify`, `security --offline=true` at most 3.0) and the
# logrotate file (`logrotate -d`, then one forced rotation); upgrades to a copy with a bumped
# version and checks the settings and secrets were kept; removes it (binary and units gone; /etc,
# /var/lib, the user kept) and purges it (everything gone).
#
#   sudo Scripts/package-check.sh [--deb FILE] [--skip-build] [--simulator PATH] [--allow-skip]
#
# --deb FILE      check this package instead of building one
# --simulator PATH  the status-poller-demo whose `simulate` the run asks (default: the debug build,
#                 else the release build, else one built now)
# --skip-build    package the binary already in .build-static (Scripts/package.sh --skip-build)
# --allow-skip    exit 0 with a message where the check cannot run (not root, no dpkg, status-poller
#                 already on the host), instead of 2 (Scripts/test.sh passes it outside CI)
# Needs root and a Debian host on which status-poller is not installed (no status-poller user, no
# /etc/status-poller): it installs and purges the package for real, and refuses to touch a host
# that has one. Installs logrotate when missing. Leaves the host as it found it, however it ends.
# No step depends on the machine's speed: the only waits are for the simulator and the proxy to listen, each bounded
# at 5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

deb="" skip_build=0 allow_skip=0 simulator=""
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) need_value "$@"; deb="$2"; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    --simulator) need_value "$@"; simulator="$2"; shift 2 ;;
    --allow-skip) allow_skip=1; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
say() { echo "==> package check: $*" >&2; }
cannot() {
  if [ "$allow_skip" -eq 1 ]; then echo "package check skipped: $*" >&2; exit 0; fi
  echo "error: $* (or pass --allow-skip to skip the check)" >&2; exit 2
}
[ "$(id -u)" -eq 0 ] || cannot "the package check installs a .deb for real: run it as root on a throwaway machine (sudo)"
command -v dpkg >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 || cannot "no dpkg: the package check needs a Debian host"
if dpkg-query -W -f='${Status}' status-poller 2>/dev/null | grep -q installed; then
  cannot "status-poller is installed on this host; the check installs and purges it, so it runs only where it is not (dpkg -P status-poller first)"
fi
for leftover in /etc/status-poller /var/lib/status-poller /var/log/status-poller /usr/bin/status-poller; do
  [ ! -e "$leftover" ] || cannot "$leftover exists, and the check's purge would delete it: run it on a host without status-poller"
done
! getent passwd status-poller >/dev/null || cannot "the user status-poller exists, and the check's purge would delete it: run it on a host without status-poller"
[ -z "$deb" ] || [ -f "$deb" ] || { echo "error: no package at $deb" >&2; exit 2; }
if [ -z "$simulator" ]; then
  for candidate in .build/debug/status-poller-demo .build/release/status-poller-demo; do
    [ -x "$candidate" ] && { simulator="$PWD/$candidate"; break; }
  done
fi
if [ -z "$simulator" ]; then
  say "building status-poller-demo for its simulator"
  swift build --product status-poller-demo >&2
  simulator="$PWD/.build/debug/status-poller-demo"
fi
[ -x "$simulator" ] || { echo "error: --simulator $simulator is not an executable" >&2; exit 2; }

failures=0
check() { # check DESCRIPTION COMMAND...: runs COMMAND, counts a failure when it fails.
  local what=$1; shift
  if "$@"; then echo "  ok    $what" >&2; else echo "  FAIL  $what" >&2; failures=$((failures + 1)); fi
}

work=$(mktemp -d)
chmod 0755 "$work"
simulator_pid="" proxy_pid="" installed=0
cleanup() {
  [ -z "$proxy_pid" ] || kill -KILL "$proxy_pid" 2>/dev/null || true
  if [ -n "$simulator_pid" ] && kill -0 "$simulator_pid" 2>/dev/null; then
    kill -TERM "$simulator_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$simulator_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$simulator_pid" 2>/dev/null || true
  fi
  if [ "$installed" -eq 1 ] && dpkg-query -W status-poller >/dev/null 2>&1; then
    dpkg -P status-poller >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "$deb" ]; then
  flags=()
  [ "$skip_build" -eq 0 ] || flags+=(--skip-build)
  deb=$(Scripts/package.sh --output "$work/dist" "${flags[@]}" | tail -1)
fi
if ! command -v logrotate >/dev/null 2>&1; then
  say "installing logrotate"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq logrotate >/dev/null
fi
version=$(dpkg-deb -f "$deb" Version)
say "$deb (version $version, $(du -k "$deb" | cut -f1) KB)"

# --- install --------------------------------------------------------------------------------------
installed=1
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; echo "error: dpkg -i failed" >&2; exit 1; }
owner_mode() { stat -c '%U:%G %a' "$1" 2>/dev/null; }
check "the binary is /usr/bin/status-poller" test -x /usr/bin/status-poller
check "the user status-poller exists, with no login shell" sh -c 'getent passwd status-poller | grep -q ":/usr/sbin/nologin$"'
for unit in status-poller.service status-poller.timer status-poller-notifications.service; do
  check "$unit installed in /lib/systemd/system" test -f "/lib/systemd/system/$unit"
done
check "no unit is enabled" sh -c '! ls /etc/systemd/system/*.wants/status-poller* >/dev/null 2>&1'
check "no cron entry is installed" test ! -e /etc/cron.d/status-poller
for secret in env shared-secret private-key; do
  check "/etc/status-poller/$secret is status-poller's, mode 0600" test "$(owner_mode /etc/status-poller/$secret)" = "status-poller:status-poller 600"
done
check "/etc/status-poller/config.json is a conffile" sh -c 'dpkg-query -W -f="\${Conffiles}" status-poller | grep -q " /etc/status-poller/config.json "'
check "/var/lib/status-poller and /var/log/status-poller are status-poller's" \
  test "$(stat -c %U /var/lib/status-poller)/$(stat -c %U /var/log/status-poller)" = "status-poller/status-poller"
check "the install printed the migrate hint" grep -q "status-poller migrate --database" "$work/install.log"

# --- without the toolchain -----------------------------------------------------------------------
toolchain=""
if command -v swift >/dev/null 2>&1; then toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")"); fi
ldd /usr/bin/status-poller >"$work/ldd.txt" 2>&1 || true
sed 's/^/        /' "$work/ldd.txt" >&2
check "ldd: every library found" sh -c "! grep -q 'not found' '$work/ldd.txt'"
check "ldd: no Swift runtime library" sh -c "! grep -Eq 'libswift|libFoundation|lib_Foundation|libdispatch' '$work/ldd.txt'"
if [ -n "$toolchain" ]; then
  check "ldd: nothing from the toolchain ($toolchain)" sh -c "! grep -qF '$toolchain/' '$work/ldd.txt'"
fi
bare() { env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= HOME=/nonexistent "$@"; }
# No fake App Store beside the customers' data: the module names of the simulator and the demo
# survive stripping in Swift's type metadata, and neither command is there.
check "the binary carries no simulator (no AppStoreSimulator, no PollingDemo)" sh -c '! grep -aqE "AppStoreSimulator|PollingDemo" /usr/bin/status-poller'
check "no simulate or demo command (exit 2)" sh -c 'for c in simulate demo; do env -i /usr/bin/status-poller $c >/dev/null 2>&1; [ $? -eq 2 ] || exit 1; done'
bare /usr/bin/status-poller --version >"$work/version.txt" 2>&1 || true
sed 's/^/        /' "$work/version.txt" >&2
check "--version: status-poller VERSION, commit HASH, built DATE" python3 - "$work/version.txt" "$version" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
version = sys.argv[2].split("+check")[0]
ok = (len(lines) == 3 and lines[0] == f"status-poller {version}"
      and re.fullmatch(r"commit ([0-9a-f]{7,40}(\+dirty)?|unknown)", lines[1])
      and re.fullmatch(r"built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", lines[2]))
sys.exit(0 if ok else 1)
PY

# --- migrate and one run against the simulator, as the cron entry runs it -----------------------
as_user() { runuser -u status-poller -- env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= HOME=/nonexistent "$@"; }
data="$work/data"
install -d -o status-poller -g status-poller "$data"
database="$data/subscriptions.sqlite"
check "migrate on a fresh SQLite database" as_user /usr/bin/status-poller migrate --database "$database"
printf 'package-check-secret\n' >"$work/simulator-secret"
chmod 0644 "$work/simulator-secret"
# The secret where the operator puts it; the run finds it through CREDENTIALS_DIRECTORY, like cron.
printf 'package-check-secret\n' >/etc/status-poller/shared-secret
"$simulator" simulate --host 127.0.0.1 --port 0 --subscribers 40 --seed 11 --shared-secret-file "$work/simulator-secret" \
  --enrolment-file "$work/enrolment.csv" >"$work/simulator.out" 2>"$work/simulator.err" </dev/null &
simulator_pid=$!
for _ in $(seq 3000); do
  grep -q "^ *sandbox " "$work/simulator.out" 2>/dev/null && break
  kill -0 "$simulator_pid" 2>/dev/null || break
  sleep 0.1
done
production=$(awk '$1 == "production" { print $2; exit }' "$work/simulator.out")
sandbox=$(awk '$1 == "sandbox" { print $2; exit }' "$work/simulator.out")
if [ -z "$production" ] || [ -z "$sandbox" ]; then
  echo "error: the simulator printed no URLs: $(tail -5 "$work/simulator.err")" >&2; exit 1
fi
enrolled=0
tail -n +2 "$work/enrolment.csv" | while IFS=, read -r user receipt; do
  printf '%s' "$receipt" | as_user /usr/bin/status-poller enroll --database "$database" --user-id "$user" --receipt-file - >/dev/null
done
enrolled=$(($(wc -l <"$work/enrolment.csv") - 1))
# Out through a company's proxy only: the App Store client tunnels to the simulator through it, and
# the outbox's endpoint, a name no DNS knows, is reached through it or not at all.
proxy_credentials="status-poller:proxy-check-password"
printf '%s\n' "$proxy_credentials" >"$work/proxy-credentials"
python3 Scripts/reliability/connect_proxy.py --credentials-file "$work/proxy-credentials" --log "$work/proxy.jsonl" \
  --port-file "$work/proxy.port" >"$work/proxy.err" 2>&1 </dev/null &
proxy_pid=$!
for _ in $(seq 3000); do [ -s "$work/proxy.port" ] && break; kill -0 "$proxy_pid" 2>/dev/null || break; sleep 0.1; done
[ -s "$work/proxy.port" ] || { echo "error: the check's proxy did not start: $(tail -5 "$work/proxy.err")" >&2; exit 1; }
proxy_url="http://$proxy_credentials@127.0.0.1:$(cat "$work/proxy.port")"
bare /usr/bin/status-poller events secret >"$work/hooks.whsec"
chown status-poller:status-poller "$work/hooks.whsec"
chmod 0600 "$work/hooks.whsec"
printf '{"event_endpoints": {"hooks": {"url": "https://hooks.example.invalid/events", "secret_file": "%s"}}}\n' "$work/hooks.whsec" >"$work/config.json"
status=0
as_user CREDENTIALS_DIRECTORY=/etc/status-poller HTTP_PROXY="$proxy_url" /usr/bin/status-poller run --config "$work/config.json" \
  --database "$database" --bundle-id com.example.premium \
  --production-url "$production" --sandbox-url "$sandbox" --report json --log-format json >"$work/run.json" 2>"$work/run.err" || status=$?
check "run: exit 0 (every selected subscription verified)" test "$status" -eq 0
[ "$status" -eq 0 ] || tail -5 "$work/run.err" >&2
if grep -q 'setsockopt.*Permission denied' "$work/run.err"; then
  echo "        (a socket option only root may set: SO_DEBUG is what .socketOption(.tcp_nodelay) sets; the HTTP client needs .tcpOption(.tcp_nodelay))" >&2
fi
check "run: the report names the build and verified the $enrolled enrolled subscribers" python3 - "$work/run.json" "$enrolled" "$work/version.txt" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
lines = open(sys.argv[3]).read().splitlines()
expected = f"{lines[0].split(' ', 1)[1]} ({lines[1]}, {lines[2]})"
print(f"        selected {report['selected']}, verified {report['verified']}, failed {report['failed']}, version {report.get('version')!r}", file=sys.stderr)
sys.exit(0 if report["selected"] == int(sys.argv[2]) and report["verified"] == report["selected"] and report.get("version") == expected else 1)
PY
check "run: through the proxy only (tunnels to the simulator, with the proxy's credentials)" python3 - "$work/proxy.jsonl" "$production" "$sandbox" <<'PY'
import json, sys
from urllib.parse import urlsplit
asked = [json.loads(line) for line in open(sys.argv[1])]
simulator = {f"{urlsplit(url).hostname}:{urlsplit(url).port}" for url in sys.argv[2:]}
print(f"        the proxy opened {sum(a['status'] == 200 for a in asked)} tunnel(s) to {sorted({a['target'] for a in asked})}", file=sys.stderr)
sys.exit(0 if asked and all(a["target"] in simulator and a["authorized"] and a["status"] == 200 for a in asked) else 1)
PY
: >"$work/proxy.jsonl"
status=0
as_user HTTPS_PROXY="$proxy_url" /usr/bin/status-poller events deliver --once --config "$work/config.json" --database "$database" \
  >"$work/deliver.out" 2>"$work/deliver.err" || status=$?
as_user /usr/bin/status-poller events list --database "$database" --pending --format json >"$work/pending.json" 2>&1 || true
check "events deliver: the endpoint asked for through the proxy, its refusal named (exit 1, retried later)" \
  python3 - "$status" "$work/proxy.jsonl" "$work/pending.json" "$(cat "$work/proxy.port")" <<'PY'
import json, sys
status, port = int(sys.argv[1]), sys.argv[4]
asked = [json.loads(line) for line in open(sys.argv[2])]
pending = json.load(open(sys.argv[3]))
tried = [event for event in pending if event.get("attempts", 0) > 0]
reason = (f"the proxy 127.0.0.1:{port} refused CONNECT hooks.example.invalid:443 (it answered other than 200); "
          "is the host allowed through it and known to its DNS (or should NO_PROXY list it)?")
print(f"        exit {status}; the proxy was asked for {sorted({a['target'] for a in asked})}; "
      f"{len(tried)} of {len(pending)} pending deliveries tried, their error: {sorted({e.get('last_error') for e in tried})}", file=sys.stderr)
sys.exit(0 if status == 1 and asked and all(a["target"] == "hooks.example.invalid:443" and a["authorized"] and a["status"] == 502 for a in asked)
         and tried and all(e["endpoint"] == "hooks" and e["last_error"] == reason for e in tried) else 1)
PY
kill -TERM "$simulator_pid" "$proxy_pid" 2>/dev/null || true
wait "$simulator_pid" "$proxy_pid" 2>/dev/null || true
simulator_pid="" proxy_pid=""

# --- the units and the logrotate file -------------------------------------------------------------
check "systemd-analyze verify: the units are clean" \
  systemd-analyze verify --man=no /lib/systemd/system/status-poller.service /lib/systemd/system/status-poller.timer /lib/systemd/system/status-poller-notifications.service
for unit in status-poller.service status-poller-notifications.service; do
  score=$(systemd-analyze security --offline=true "/lib/systemd/system/$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  echo "        $unit: exposure ${score:-?}" >&2
  check "systemd-analyze security: $unit at most 3.0" awk -v s="${score:-99}" 'BEGIN { exit !(s + 0 <= 3.0) }'
done
logrotate -d /etc/logrotate.d/status-poller >"$work/logrotate-d.txt" 2>&1 || true
check "logrotate -d: the file is valid" sh -c "! grep -Eiq '^error|error:' '$work/logrotate-d.txt' && grep -q 'rotating pattern: /var/log/status-poller/' '$work/logrotate-d.txt'"
echo '{"run": 1}' | runuser -u status-poller -- tee -a /var/log/status-poller/runs.jsonl >/dev/null
echo 'a log line' | runuser -u status-poller -- tee -a /var/log/status-poller/status-poller.log >/dev/null
logrotate -f -s "$work/logrotate.state" /etc/logrotate.d/status-poller >"$work/logrotate-f.txt" 2>&1 || cat "$work/logrotate-f.txt" >&2
check "logrotate: rotated, and the new runs.jsonl is status-poller's" \
  sh -c 'test -s /var/log/status-poller/runs.jsonl.1 && test "$(stat -c %U:%a /var/log/status-poller/runs.jsonl)" = status-poller:640'

# --- upgrade: the same package with a bumped version ----------------------------------------------
sed -i 's/"bundle_id": "[^"]*"/"bundle_id": "com.example.checked"/' /etc/status-poller/config.json
printf 'PRIVATE KEY PLACEHOLDER OF THE CHECK\n' >/etc/status-poller/private-key
before=$(cat /etc/status-poller/config.json /etc/status-poller/shared-secret /etc/status-poller/private-key | sha256sum)
mkdir "$work/bumped"
dpkg-deb -R "$deb" "$work/bumped/root"
sed -i "s/^Version: .*/Version: $version+check1/" "$work/bumped/root/DEBIAN/control"
dpkg-deb --root-owner-group --build "$work/bumped/root" "$work/bumped/status-poller_${version}+check1.deb" >/dev/null
DEBIAN_FRONTEND=noninteractive dpkg -i --force-confdef --force-confold "$work/bumped/status-poller_${version}+check1.deb" >"$work/upgrade.log" 2>&1 \
  || { cat "$work/upgrade.log" >&2; echo "error: the upgrade failed" >&2; exit 1; }
check "upgrade: version $version+check1 installed" test "$(dpkg-query -W -f='${Version}' status-poller)" = "$version+check1"
check "upgrade: the config and the secrets were kept" test "$(cat /etc/status-poller/config.json /etc/status-poller/shared-secret /etc/status-poller/private-key | sha256sum)" = "$before"
check "upgrade: the secrets are still status-poller's, mode 0600" test "$(owner_mode /etc/status-poller/shared-secret)" = "status-poller:status-poller 600"
check "upgrade: the database is untouched and still opens" as_user /usr/bin/status-poller migrate --database "$database"
check "upgrade: the binary still runs" sh -c 'env -i PATH=/usr/bin:/bin /usr/bin/status-poller --version >/dev/null'

# --- remove, then purge ---------------------------------------------------------------------------
dpkg -r status-poller >"$work/remove.log" 2>&1 || { cat "$work/remove.log" >&2; echo "error: dpkg -r failed" >&2; exit 1; }
check "remove: the binary is gone" test ! -e /usr/bin/status-poller
check "remove: the units are gone" sh -c '! ls /lib/systemd/system/status-poller* >/dev/null 2>&1'
check "remove: /etc/status-poller (settings, secrets) is kept" test -s /etc/status-poller/shared-secret
check "remove: /var/lib/status-poller and the user are kept" sh -c 'test -d /var/lib/status-poller && getent passwd status-poller >/dev/null'
dpkg -P status-poller >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; echo "error: dpkg -P failed" >&2; exit 1; }
installed=0
check "purge: /etc/status-poller, /var/lib/status-poller, /var/log/status-poller are gone" \
  sh -c 'test ! -e /etc/status-poller && test ! -e /var/lib/status-poller && test ! -e /var/log/status-poller'
check "purge: /etc/logrotate.d/status-poller is gone" test ! -e /etc/logrotate.d/status-poller
check "purge: the user and the group are gone" sh -c '! getent passwd status-poller >/dev/null && ! getent group status-poller >/dev/null'
check "purge: dpkg knows nothing of status-poller" sh -c '! dpkg-query -W status-poller >/dev/null 2>&1'

if [ "$failures" -gt 0 ]; then
  echo "package check: $failures check(s) failed" >&2
  exit 1
fi
echo "package check: passed ($deb)" >&2
