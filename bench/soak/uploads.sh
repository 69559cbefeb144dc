#!/usr/bin/env bash
# Soak under upload load (issue 29, point 4): builds the release `maskflow`
# and runs `bench/soak/soak.py --upload-load` against `maskflow serve
# --replay` on loopback: 8 clients uploading a 20 MB CSV in a loop, 32
# listing workflows; prints p50/p99 per kind and the TARGET line (list p99
# < 50 ms). QUICK=1: 30 s instead of 120 s. Extra arguments go to soak.py
# (e.g. `--seconds 60`); BIN=path skips the build and runs that binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3; }
if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p maskflow-server --bin maskflow
  BIN="${CARGO_TARGET_DIR:-target}/release/maskflow"
fi
exec python3 bench/soak/soak.py --upload-load --bin "$BIN" "$@"
