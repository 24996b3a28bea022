# Sourced by the reliability harnesses: the poller binary to test and the Python they check with.
# Their simulator is `status-poller-demo simulate`, the program built beside it (demo_binary_of).
# Sets $binary, when not given with --binary, to the debug build (after `swift build --build-tests`),
# else the release build, else builds the debug binary; exits 2 when it is not an executable.
resolve_binary() {
  if [ -z "$binary" ]; then
    if [ -x .build/debug/status-poller ]; then binary="$PWD/.build/debug/status-poller"
    elif [ -x .build/release/status-poller ]; then binary="$PWD/.build/release/status-poller"
    else
      Scripts/bootstrap.sh
      echo "==> building the debug binaries" >&2
      swift build --product status-poller
      swift build --product status-poller-demo
      binary="$PWD/.build/debug/status-poller"
    fi
  fi
  [ -x "$binary" ] || { echo "error: --binary $binary is not an executable" >&2; exit 2; }
  command -v python3 > /dev/null || { echo "error: python3 is needed (standard library only)" >&2; exit 2; }
}

# The simulator and the demo for the poller $1: status-poller-demo beside it; a status-poller built
# before the two were split carries `simulate` and `demo` itself.
demo_binary_of() {
  local sibling
  sibling="$(dirname "$1")/status-poller-demo"
  if [ -x "$sibling" ]; then echo "$sibling"; else echo "$1"; fi
}
