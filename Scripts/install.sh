#!/usr/bin/env bash
# Installs status-poller for nightly runs from its package, so the host needs no Swift toolchain:
# the Debian package (dpkg -i; built with Scripts/package.sh when dist/ has none) or, on a host
# without dpkg, the tarball. Then sets the bundle id and the database in the config (an edited
# config is kept, and so are the secret files), runs `migrate` on the database, and installs the
# schedule (the systemd timer, or the cron entry with --cron).
#
#   sudo Scripts/install.sh --bundle-id com.example.app [--database PATH] [--cron] [--root DIR]
#                           [--deb FILE | --tarball FILE] [--skip-build]
#
# --deb FILE      this package (default: the newest dist/status-poller_*_ARCH.deb)
# --tarball FILE  this tarball (dist/status-poller-VERSION-linux-ARCH.tar.gz), for hosts without dpkg
# --skip-build    never build: fail when dist/ has no package
# --root DIR      stage everything under DIR instead of / (the package unpacked with dpkg-deb -x,
#                 nothing enabled, started, or registered with dpkg; migrate runs on DIR's database)
set -euo pipefail
cd "$(dirname "$0")/.."

bundle_id="" database="/var/lib/status-poller/subscriptions.sqlite" use_cron=0 root="" skip_build=0 deb="" tarball=""
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle-id) need_value "$@"; bundle_id="$2"; shift 2 ;;
    --database) need_value "$@"; database="$2"; shift 2 ;;
    --cron) use_cron=1; shift ;;
    --root) need_value "$@"; root="${2%/}"; shift 2 ;;
    --deb) need_value "$@"; deb="$2"; shift 2 ;;
    --tarball) need_value "$@"; tarball="$2"; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$bundle_id" ] || { echo "error: --bundle-id is required (your app's bundle identifier)" >&2; exit 2; }
case "$database" in /*) ;; *) echo "error: --database must be an absolute path, got '$database'" >&2; exit 2 ;; esac
[ -z "$deb" ] || [ -z "$tarball" ] || { echo "error: give --deb or --tarball, not both" >&2; exit 2; }
[ -z "$deb" ] || [ -f "$deb" ] || { echo "error: no package at $deb" >&2; exit 2; }
[ -z "$tarball" ] || [ -f "$tarball" ] || { echo "error: no tarball at $tarball" >&2; exit 2; }
if [ -z "$root" ] && [ "$(id -u)" -ne 0 ]; then echo "error: run as root (sudo), or stage with --root DIR" >&2; exit 2; fi

say() { echo "==> $*" >&2; }

# Which artifact: the one given, else the newest package in dist/ (built when there is none).
if [ -z "$deb" ] && [ -z "$tarball" ]; then
  if ! command -v dpkg >/dev/null 2>&1; then
    echo "error: no dpkg on this host: pass --tarball dist/status-poller-VERSION-linux-$(uname -m).tar.gz (made by Scripts/package.sh)" >&2; exit 2
  fi
  deb=$(ls -t dist/status-poller_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    [ "$skip_build" -eq 0 ] || { echo "error: no package in dist/; run Scripts/package.sh, or drop --skip-build" >&2; exit 2; }
    say "no package in dist/: building one (Scripts/package.sh; a first build takes about 6 min on 2 idle cores)"
    deb=$(Scripts/package.sh | tail -1)
  fi
fi

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
if [ -n "$deb" ]; then
  dpkg-deb -x "$deb" "$tree"
else
  tar -xzf "$tarball" -C "$tree" --strip-components=1
fi
[ -x "$tree/usr/bin/status-poller" ] || { echo "error: ${deb:-$tarball} holds no usr/bin/status-poller" >&2; exit 2; }

# An earlier install built from source put its units in /etc/systemd/system, where they would
# override the package's: move them aside (and its binary in /usr/local/bin is left unused).
for old in "$root/etc/systemd/system/status-poller.service" "$root/etc/systemd/system/status-poller.timer" \
  "$root/etc/systemd/system/status-poller-notifications.service" "$root/etc/cron.d/status-poller"; do
  if [ -f "$old" ] && grep -q /usr/local/bin/status-poller "$old" 2>/dev/null; then
    say "moving the earlier install's $old aside to $old.pre-package (it ran /usr/local/bin/status-poller)"
    mv "$old" "$old.pre-package"
  fi
done

if [ -n "$deb" ] && [ -z "$root" ]; then
  say "installing $deb (dpkg -i)"
  dpkg -i "$deb"
else
  # The tarball, or a staging root: the package's tree, keeping whatever /etc files exist.
  say "installing ${deb:-$tarball} under ${root:-/}"
  (cd "$tree" && find . -type d ! -path ./DEBIAN ! -path './DEBIAN/*' -print) | while read -r dir; do
    install -d "$root/${dir#./}"
  done
  (cd "$tree" && find . \( -type f -o -type l \) ! -path './DEBIAN/*' -print) | while read -r file; do
    target="$root/${file#./}"
    case "$file" in ./etc/*) [ -e "$target" ] && { say "keeping the existing $target"; continue; } ;; esac
    cp -a "$tree/$file" "$target"
  done
  if [ -z "$root" ]; then
    # The package's maintainer script, from the tarball (kept in /usr/share/status-poller with prerm
    # and postrm, for removing it by hand): the user, its directories, the secrets' owner.
    sh "$tree/usr/share/status-poller/postinst" configure
  fi
fi

config="$root/etc/status-poller/config.json"
if grep -q '"bundle_id": "com.example.app"' "$config" 2>/dev/null; then
  say "writing the bundle id and the database into $config"
  sed -i -e "s|com.example.app|$bundle_id|" -e "s|/var/lib/status-poller/subscriptions.sqlite|$database|" \
    -e "s|/var/lib/status-poller/status_poller.prom|$(dirname "$database")/status_poller.prom|" "$config"
else
  say "keeping the existing $config"
fi

database_dir=$(dirname "$database")
install -d "$root$database_dir"
if [ -z "$root" ]; then
  chown status-poller:status-poller "$database_dir"
fi
if [ "$database_dir" != /var/lib/status-poller ]; then
  # The units may write only the database directory: let them write this one.
  say "writing $root/etc/systemd/system/status-poller.service.d/database.conf (ReadWritePaths=$database_dir)"
  for unit in status-poller.service status-poller-notifications.service; do
    install -d "$root/etc/systemd/system/$unit.d"
    printf '# Written by Scripts/install.sh --database %s\n[Service]\nReadWritePaths=%s\n' "$database" "$database_dir" >"$root/etc/systemd/system/$unit.d/database.conf"
  done
fi

say "migrating $database"
if [ -z "$root" ]; then
  runuser -u status-poller -- /usr/bin/status-poller migrate --database "$database"
else
  "$root/usr/bin/status-poller" migrate --database "$root$database"
fi

# cron where asked, or where systemd does not run this host (no systemctl, or not PID 1: a container).
if [ "$use_cron" -eq 1 ] || ! command -v systemctl >/dev/null 2>&1 || { [ -z "$root" ] && [ ! -d /run/systemd/system ]; }; then
  say "installing $root/etc/cron.d/status-poller"
  install -d "$root/etc/cron.d"
  install -m 0644 "$tree/usr/share/doc/status-poller/examples/status-poller.cron" "$root/etc/cron.d/status-poller"
else
  say "the systemd service and timer are in $root/lib/systemd/system"
  if [ -z "$root" ]; then
    systemctl daemon-reload
    systemctl enable --now status-poller.timer
    systemctl list-timers status-poller.timer --no-pager || true
  fi
fi
say "the notifications receiver's unit is installed, not enabled: see docs/NOTIFICATIONS.md (systemctl enable --now status-poller-notifications)"
if [ ! -s "$root/etc/status-poller/shared-secret" ]; then
  say "put the app's shared secret in $root/etc/status-poller/shared-secret (mode 0600; the In-App Purchase key, for the Server API, in $root/etc/status-poller/private-key)"
fi
say "done: $("$root/usr/bin/status-poller" --version | head -1). Try: sudo -u status-poller CREDENTIALS_DIRECTORY=/etc/status-poller STATUS_POLLER_CONFIG=/etc/status-poller/config.json status-poller run --dry-run"
