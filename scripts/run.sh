#!/usr/bin/env bash
# Starts Maskflow on this machine, installing and building what is missing:
# the desktop app when there is a display; otherwise `maskflow serve --open`
# (the same UI in a browser). `./scripts/run.sh extract FILE…` prints the
# masked extract of files instead.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

if [ "${1:-}" = "extract" ]; then
  shift
  cargo build --release --locked -q -p maskflow-server
  exec "$CARGO_TARGET_DIR/release/maskflow" extract "${@:-samples/sales.csv}"
fi

# The UI build prints one line; its whole log only if it fails.
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
echo "run: building the UI" >&2
if ! npm --prefix ui run --silent build -- --logLevel warn >"$LOG" 2>&1; then
  cat "$LOG" >&2
  echo "run: building the UI failed (log above)" >&2
  exit 1
fi
rm -f "$LOG"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "run: building the desktop app (the first build takes several minutes)" >&2
  cargo build --release --locked -q -p maskflow-desktop --features tauri/custom-protocol
  exec "$CARGO_TARGET_DIR/release/maskflow-desktop" "$@"
fi

echo "run: no display found (DISPLAY/WAYLAND_DISPLAY are unset), so Maskflow starts as a local" >&2
echo "run: web server instead: open the URL printed below in a browser on this machine." >&2
cargo build --release --locked -q -p maskflow-server
exec "$CARGO_TARGET_DIR/release/maskflow" serve --open "$@"
