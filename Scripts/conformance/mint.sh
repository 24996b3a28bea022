#!/usr/bin/env bash
# Mints the App Store Server Notifications V2 conformance corpus (one signedPayload per
# notificationType and subtype, and the chains Apple refuses) into
# Tests/StatusPollingTests/Fixtures/apple-conformance/notifications/, signed with the test chain of
# Apple's Java library, then checks every file with Apple's own SignedDataVerifier (Python).
# Run it again only to change the corpus: the files are committed, and minting is deterministic.
#
#   Scripts/conformance/mint.sh
#
# Apple's app-store-server-library (which brings `cryptography`) goes into .venv-conformance/,
# ignored by git (python3-venv from Debian when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."

library_version="3.1.2"
venv=.venv-conformance
if ! "$venv/bin/python" -c "import appstoreserverlibrary" 2>/dev/null \
   || [ "$("$venv/bin/python" -m pip show app-store-server-library 2>/dev/null | sed -n 's/^Version: //p')" != "$library_version" ]; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" 2>/dev/null; then
    rm -rf "$venv"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "==> installing python3-venv" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  echo "==> installing app-store-server-library $library_version into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "app-store-server-library==$library_version"
fi
exec "$venv/bin/python" Scripts/conformance/mint.py
