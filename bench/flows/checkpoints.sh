#!/usr/bin/env bash
# What a flow run leaves in the database (issue 18, point 7): seed 004's
# example, a 10,000-step loop and a 1,000-item fan-out, then the per-step
# time of the loop (3 rounds). Prints one JSON line per run; copy the
# figures into README.md.
#   bench/flows/checkpoints.sh [debug|release]     (default release)
set -euo pipefail
cd "$(dirname "$0")/../.."
PROFILE="${1:-release}"
if [ "$PROFILE" = release ]; then
  cargo build --release -q -p maskflow-core --example checkpoint_bench
else
  cargo build -q -p maskflow-core --example checkpoint_bench
fi
BIN="${CARGO_TARGET_DIR:-target}/$PROFILE/examples/checkpoint_bench"
"$BIN" seed
"$BIN" fanout 1000
for round in 1 2 3; do
  "$BIN" loop 10000
done
