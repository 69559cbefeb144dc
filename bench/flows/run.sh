#!/usr/bin/env bash
# Runs the flow-engine benchmark and LangGraph's on the same machine, in the
# same run, and prints the results (copy them into README.md).
#   bench/flows/run.sh [STEPS]      (default 10000)
set -euo pipefail
cd "$(dirname "$0")/../.."
STEPS="${1:-10000}"
python3 -c "import langgraph.checkpoint.sqlite" 2>/dev/null || pip install -q langgraph langgraph-checkpoint-sqlite
cargo build --release -q -p maskflow-core --example flow_bench
BIN="${CARGO_TARGET_DIR:-target}/release/examples/flow_bench"
for round in 1 2 3; do
  echo "# round $round"
  "$BIN" "$STEPS" normal
  "$BIN" "$STEPS" full
  python3 bench/flows/langgraph_bench.py "$STEPS"
done
