#!/usr/bin/env bash
# Builds the release artifacts for a server without a Swift toolchain: a release binary with the
# Swift runtime linked in (--static-swift-stdlib), stripped (its debug symbols kept apart), wrapped
# with the systemd units, the cron and logrotate files, the example config and the docs into
#
#   dist/status-poller-VERSION-linux-ARCH.tar.gz         the same tree as the package, under one folder
#   dist/status-poller_VERSION_DEBARCH.deb                a Debian package (dpkg-deb)
#   dist/status-poller-VERSION-linux-ARCH-debug.tar.gz    status-poller.debug (gdb finds it by debuglink)
#
#   Scripts/package.sh [--skip-build] [--output DIR]
#
# --skip-build   package the binary already in .build-static (no build)
# --output DIR   write the artifacts into DIR (default: dist)
# The build uses its own scratch path, .build-static, so .build stays as it was. VERSION is what the
# binary's `--version` prints (a v* tag on HEAD, else BuildInfo.declaredVersion).
set -euo pipefail
cd "$(dirname "$0")/.."

skip_build=0 output="dist"
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-build) skip_build=1; shift ;;
    --output) need_value "$@"; output="${2%/}"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
say() { echo "==> $*" >&2; }
fail() { echo "error: $*" >&2; exit 1; }
for tool in dpkg-deb objcopy strip objdump nm tar gzip; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing (Debian: apt-get install binutils dpkg tar gzip)"
done

scratch=.build-static
if [ "$skip_build" -eq 0 ]; then
  Scripts/bootstrap.sh
  say "building the release binary with the Swift runtime linked in ($scratch; a first build takes about 6 min on 2 idle cores)"
  swift build -c release --product status-poller --static-swift-stdlib --scratch-path "$scratch"
fi
built="$scratch/release/status-poller"
[ -x "$built" ] || { echo "error: no release binary at $built; run without --skip-build" >&2; exit 2; }

version=$("$built" --version | sed -n '1s/^status-poller //p')
[ -n "$version" ] || fail "$built --version printed no version"
case "$version" in *[!A-Za-z0-9.+~-]*|"") fail "the version '$version' cannot name a package" ;; esac
# The program a team installs beside its customers' data carries no fake App Store: the simulator
# (which signs App Store answers with keys of its own) and the demo are status-poller-demo's.
# (Counted, not `grep -q`: under pipefail, nm cut short by grep's early exit would hide a match.)
simulator_symbols=$(nm "$built" | grep -cE '17AppStoreSimulator|11PollingDemo' || true)
[ "$simulator_symbols" -eq 0 ] || fail "$built links AppStoreSimulator or PollingDemo ($simulator_symbols symbols): they belong to status-poller-demo alone (Package.swift)"
arch=$(uname -m)
deb_arch=$(dpkg --print-architecture)

# The libraries the binary still loads, each from a package in Depends: the Swift runtime and
# Foundation are linked in; glibc, the C++ runtime, zlib and the system SQLite (GRDB) are not.
depends="libc6, libgcc-s1, libstdc++6, libsqlite3-0, zlib1g, passwd"
needed=$(objdump -p "$built" | awk '/NEEDED/ { print $2 }')
for library in $needed; do
  case "$library" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libutil.so.*|ld-linux*) ;;
    libgcc_s.so.*|libstdc++.so.*|libsqlite3.so.*|libz.so.*) ;;
    libswift*|libFoundation*|lib_Foundation*|libdispatch*|libBlocksRuntime*|libicu*)
      fail "$built still links the Swift runtime ($library): was it built with --static-swift-stdlib?" ;;
    *) fail "$built needs $library, which Depends does not cover: add its package to depends in $0" ;;
  esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$output"

say "stripping (debug symbols to status-poller.debug)"
cp "$built" "$work/status-poller"
objcopy --only-keep-debug "$work/status-poller" "$work/status-poller.debug"
strip --strip-all "$work/status-poller"
(cd "$work" && objcopy --add-gnu-debuglink=status-poller.debug status-poller)
chmod 0644 "$work/status-poller.debug"

# The tree both artifacts carry. /etc/status-poller holds the settings and the two secret files
# (empty: fill them in; 0600); the units are installed, not enabled; the cron entry is an example
# (Scripts/install.sh --cron, or copy it to /etc/cron.d), so installing starts nothing.
tree="$work/root"
doc="$tree/usr/share/doc/status-poller"
install -d "$tree/usr/bin" "$tree/lib/systemd/system" "$tree/etc/status-poller" "$tree/etc/logrotate.d" "$doc/docs" "$doc/examples"
install -m 0755 "$work/status-poller" "$tree/usr/bin/status-poller"
install -m 0644 cron/status-poller.service cron/status-poller.timer cron/status-poller-notifications.service "$tree/lib/systemd/system/"
install -m 0644 cron/config.json.example "$tree/etc/status-poller/config.json"
install -m 0600 cron/env.example "$tree/etc/status-poller/env"
install -m 0600 /dev/null "$tree/etc/status-poller/shared-secret"
install -m 0600 /dev/null "$tree/etc/status-poller/private-key"
install -m 0644 cron/status-poller.logrotate "$tree/etc/logrotate.d/status-poller"
install -m 0644 README.md "$doc/README.md"
install -m 0644 docs/*.md "$doc/docs/"
install -m 0644 cron/status-poller.cron cron/config.json.example cron/env.example "$doc/examples/"
install -m 0755 Scripts/install.sh "$doc/examples/install.sh"
printf 'status-poller %s\n\nBuilt from the project status-poller; see README.md.\n' "$version" >"$doc/copyright"
chmod 0644 "$doc/copyright"

say "writing $output/status-poller-$version-linux-$arch.tar.gz"
base="status-poller-$version-linux-$arch"
mkdir -p "$work/tarball"
cp -a "$tree" "$work/tarball/$base"
install -d "$work/tarball/$base/usr/share/status-poller"
install -m 0755 Scripts/package/postinst Scripts/package/postrm Scripts/package/prerm "$work/tarball/$base/usr/share/status-poller/"
tar -C "$work/tarball" --owner=0 --group=0 --numeric-owner --sort=name -czf "$output/$base.tar.gz" "$base"

say "writing $output/status-poller_${version}_$deb_arch.deb"
install -d "$tree/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$tree" | cut -f1)
cat >"$tree/DEBIAN/control" <<CONTROL
Package: status-poller
Version: $version
Architecture: $deb_arch
Maintainer: status-poller maintainers <status-poller@localhost>
Installed-Size: $size
Depends: $depends
Recommends: logrotate
Section: admin
Priority: optional
Description: keeps App Store subscriptions current in SQLite or PostgreSQL
 The nightly status-polling job for App Store auto-renewable subscriptions
 (a systemd timer or a cron entry, neither enabled on install) and the App
 Store Server Notifications receiver. One binary with the Swift runtime
 linked in; run "status-poller migrate" on your database after installing.
CONTROL
(cd "$tree" && find etc -type f | sed 's|^|/|' | sort) >"$tree/DEBIAN/conffiles"
install -m 0755 Scripts/package/postinst Scripts/package/postrm Scripts/package/prerm "$tree/DEBIAN/"
dpkg-deb --root-owner-group -Zxz --build "$tree" "$output/status-poller_${version}_$deb_arch.deb" >/dev/null

say "writing $output/$base-debug.tar.gz"
tar -C "$work" --owner=0 --group=0 --numeric-owner -czf "$output/$base-debug.tar.gz" status-poller.debug

ls -l "$output/$base.tar.gz" "$output/status-poller_${version}_$deb_arch.deb" "$output/$base-debug.tar.gz" >&2
echo "$output/status-poller_${version}_$deb_arch.deb"
