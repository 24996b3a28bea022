#!/usr/bin/env bash
# Installs what status-poller needs on a Debian machine: the system SQLite that GRDB links, and
# Python 3 (standard library only) for the reliability harnesses' checks.
# Idempotent: installs nothing that is already there.
set -euo pipefail

if ! command -v swift >/dev/null 2>&1; then
  echo "error: no Swift toolchain on PATH. status-poller needs Swift 6.3 (https://www.swift.org/install/linux/)." >&2
  exit 2
fi

missing=()
for package in libsqlite3-dev; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "==> installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
