#!/usr/bin/env bash
# Installs status-poller for nightly runs: builds a release binary, installs it, writes the config
# and the secret's environment file (never overwriting yours), installs the schedule (a systemd
# timer, or a cron entry with --cron), and runs `migrate` on the database.
#
#   sudo Scripts/install.sh --bundle-id com.example.app [--database PATH] [--cron] [--root DIR] [--skip-build]
#
# --root DIR installs under DIR instead of / (a staging tree: nothing is enabled or started).
set -euo pipefail
cd "$(dirname "$0")/.."

bundle_id="" database="/var/lib/status-poller/subscriptions.sqlite" use_cron=0 root="" skip_build=0
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle-id) need_value "$@"; bundle_id="$2"; shift 2 ;;
    --database) need_value "$@"; database="$2"; shift 2 ;;
    --cron) use_cron=1; shift ;;
    --root) need_value "$@"; root="${2%/}"; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$bundle_id" ] || { echo "error: --bundle-id is required (your app's bundle identifier)" >&2; exit 2; }
if [ -z "$root" ] && [ "$(id -u)" -ne 0 ]; then echo "error: run as root (sudo), or stage with --root DIR" >&2; exit 2; fi

say() { echo "==> $*" >&2; }

if [ "$skip_build" -eq 0 ]; then
  Scripts/bootstrap.sh
  say "building the release binary (first build: several minutes on 2 cores)"
  swift build -c release --product status-poller
fi
binary="$(swift build -c release --show-bin-path)/status-poller"
[ -x "$binary" ] || { echo "error: no release binary at $binary; run without --skip-build" >&2; exit 2; }

say "installing $root/usr/local/bin/status-poller"
install -d "$root/usr/local/bin" "$root/usr/local/share/doc/status-poller" "$root/etc/status-poller" \
  "$root$(dirname "$database")" "$root/var/log/status-poller"
install -m 0755 "$binary" "$root/usr/local/bin/status-poller"
install -m 0644 README.md "$root/usr/local/share/doc/status-poller/README.md"
install -d "$root/usr/local/share/doc/status-poller/docs"
install -m 0644 docs/*.md "$root/usr/local/share/doc/status-poller/docs/"

if [ -z "$root" ] && ! id status-poller >/dev/null 2>&1; then
  say "creating the system user status-poller"
  useradd --system --no-create-home --shell /usr/sbin/nologin status-poller
fi

config="$root/etc/status-poller/config.json"
if [ ! -e "$config" ]; then
  say "writing $config"
  sed -e "s|com.example.app|$bundle_id|" -e "s|/var/lib/status-poller/subscriptions.sqlite|$database|" \
    -e "s|/var/lib/status-poller/status_poller.prom|$(dirname "$database")/status_poller.prom|" cron/config.json.example >"$config"
else
  say "keeping the existing $config"
fi
envfile="$root/etc/status-poller/env"
if [ ! -e "$envfile" ]; then
  say "writing $envfile (mode 0600): put the app's shared secret in it"
  install -m 0600 cron/env.example "$envfile"
else
  say "keeping the existing $envfile"
fi

if [ -z "$root" ]; then
  chown -R status-poller:status-poller "$(dirname "$database")" /var/log/status-poller
fi

say "migrating $database"
if [ -z "$root" ]; then
  runuser -u status-poller -- /usr/local/bin/status-poller migrate --database "$database"
else
  "$root/usr/local/bin/status-poller" migrate --database "$root$database"
fi

if [ "$use_cron" -eq 1 ] || ! command -v systemctl >/dev/null 2>&1; then
  say "installing $root/etc/cron.d/status-poller"
  install -d "$root/etc/cron.d"
  install -m 0644 cron/status-poller.cron "$root/etc/cron.d/status-poller"
else
  say "installing the systemd service and timer"
  install -d "$root/etc/systemd/system"
  install -m 0644 cron/status-poller.service cron/status-poller.timer cron/status-poller-notifications.service "$root/etc/systemd/system/"
  if [ -z "$root" ]; then
    systemctl daemon-reload
    systemctl enable --now status-poller.timer
    systemctl list-timers status-poller.timer --no-pager || true
  fi
fi
say "the notifications receiver's unit is installed, not enabled: see docs/NOTIFICATIONS.md (systemctl enable --now status-poller-notifications)"
say "done. Edit /etc/status-poller/env (the shared secret), then try: sudo -u status-poller sh -c 'set -a; . /etc/status-poller/env; /usr/local/bin/status-poller run --dry-run'"
