#!/usr/bin/env bash
# Soak benchmark (issue 19, point 5): builds `maskflow` and runs bench/soak/soak.py
# against `maskflow serve --replay` on loopback. Extra arguments go to soak.py
# (e.g. `--minutes 1`, `--bin target/debug/maskflow`).
set -euo pipefail
cd "$(dirname "$0")/../.."
profile="${PROFILE:-release}"
if [ "$profile" = release ]; then
  cargo build --release -p maskflow-server --bin maskflow
else
  cargo build -p maskflow-server --bin maskflow
fi
exec python3 bench/soak/soak.py --bin "${CARGO_TARGET_DIR:-target}/$profile/maskflow" "$@"
