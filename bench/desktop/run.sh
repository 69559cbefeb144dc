#!/usr/bin/env bash
# Desktop start (issue 29 point 7): launches the desktop app under Xvfb
# through tauri-driver, times each launch to the builder's first screen
# (bench/desktop/start.mjs says exactly what is timed) and prints the cold
# launch, the best and median warm launches, and the bench/check line.
#   bench/desktop/run.sh            1 cold + 7 warm launches
#   QUICK=1 bench/desktop/run.sh    1 cold + 2 warm
# The binary: $MASKFLOW_DESKTOP_BIN, else the release build if there is one,
# else the debug one; either must be built with `--features
# tauri/custom-protocol` (scripts/package.sh, scripts/test.sh). With neither,
# the debug one is built here (a release build takes too long for a bench).
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
RUNS=8
[ "${QUICK:-}" = 1 ] && RUNS=3

# What the runs need, installed as the other benchmarks do when missing.
need=()
command -v xvfb-run >/dev/null || need+=(xvfb)
command -v xauth >/dev/null || need+=(xauth)
command -v WebKitWebDriver >/dev/null || need+=(webkit2gtk-driver)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
command -v tauri-driver >/dev/null || cargo install tauri-driver --version '^2' --locked

BIN=${MASKFLOW_DESKTOP_BIN:-}
if [ -z "$BIN" ]; then
  if [ -x "$CARGO_TARGET_DIR/release/maskflow-desktop" ]; then
    BIN="$CARGO_TARGET_DIR/release/maskflow-desktop"
  else
    BIN="$CARGO_TARGET_DIR/debug/maskflow-desktop"
    if [ ! -x "$BIN" ]; then
      [ -f ui/dist/index.html ] || { npm ci --prefix ui --no-audit --no-fund --loglevel=error && npm --prefix ui run --silent build -- --logLevel warn; }
      cargo build --locked -q -p maskflow-desktop --features tauri/custom-protocol
    fi
  fi
fi
echo "binary: $BIN ($(du -h "$BIN" | cut -f1))"

result=$(node bench/desktop/start.mjs "$BIN" "$RUNS")
read -r cold best median < <(python3 -c 'import json, sys
r = json.loads(sys.argv[1])
print(*(f"{r[k] / 1000:.3f}" for k in ("cold", "warm_best", "warm_median")))' "$result")

echo
echo "| launch | to the first screen |"
echo "|---|---|"
echo "| cold (first, fresh data folder) | ${cold} s |"
echo "| warm, best of $((RUNS - 1)) | ${best} s |"
echo "| warm, median | ${median} s |"
verdict=$(python3 -c 'import sys; print("met" if float(sys.argv[1]) < 1 else "missed")' "$best")
printf 'TARGET\tdesktop start (warm)\t%s s\t< 1 s\t%s\n' "$best" "$verdict"
