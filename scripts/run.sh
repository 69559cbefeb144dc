#!/usr/bin/env bash
# Starts Maskflow on this machine, installing and building what is missing:
# the desktop app when there is a display; otherwise `maskflow serve --open`
# (the same UI in a browser). `./scripts/run.sh extract FILE…` prints the
# masked extract of files instead.
# It builds with Cargo.toml's `release-lean` profile: the release build without
# debug line tables (scripts/package.sh keeps the release profile's), and
# installs uv (the `uv` wheel's binary) into the data folder's tools, where
# Maskflow looks for it, unless a uv is already found.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
OUT="$CARGO_TARGET_DIR/release-lean"

# Before the first build: how long it takes, and why.
first_build_note() {
  [ -x "$OUT/$1" ] && return 0
  echo "run: the first build of $1 takes a while: about 40 minutes on 2 cores (less with more)," >&2
  echo "run: because it compiles llama.cpp (the embedded model's engine, C++) and about 700 crates;" >&2
  echo "run: later starts reuse it and take seconds." >&2
}

if [ "${1:-}" = "extract" ]; then
  shift
  first_build_note maskflow
  cargo build --profile release-lean --locked -q -p maskflow-server
  exec "$OUT/maskflow" extract "${@:-samples/sales.csv}"
fi

# uv, for the scripts that need Python packages (one that uses only the
# standard library needs none): the data folder's copy, as "Install uv" in
# Settings makes it. Not fatal: Maskflow starts without it and a build that
# needs it waits, saying how to install it.
if [ -n "${MASKFLOW_HOME:-}" ]; then
  DATA=$MASKFLOW_HOME
elif [ "$(uname -s)" = Darwin ]; then
  DATA="$HOME/Library/Application Support/maskflow"
else
  DATA="${XDG_DATA_HOME:-$HOME/.local/share}/maskflow"
fi
if [ -z "${MASKFLOW_UV:-}" ] && ! command -v uv >/dev/null; then
  echo "run: installing uv into $DATA/tools/uv" >&2
  ./scripts/install-uv.sh "$DATA/tools/uv/bin/uv" >&2 \
    || echo "run: uv was not installed (above); Maskflow starts without it" >&2
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
  echo "run: building the desktop app" >&2
  first_build_note maskflow-desktop
  cargo build --profile release-lean --locked -q -p maskflow-desktop --features tauri/custom-protocol
  exec "$OUT/maskflow-desktop" "$@"
fi

echo "run: no display found (DISPLAY/WAYLAND_DISPLAY are unset), so Maskflow starts as a local" >&2
echo "run: web server instead: open the URL printed below in a browser on this machine." >&2
first_build_note maskflow
cargo build --profile release-lean --locked -q -p maskflow-server
exec "$OUT/maskflow" serve --open "$@"
