#!/usr/bin/env bash
# Runs the flow-engine benchmark and LangGraph's on the same machine, in the
# same run, alternating, and prints the results (copy them into README.md),
# then the bench/check line:
#   TARGET<TAB>flow step vs LangGraph+SqliteSaver<TAB><ratio> (<ms> vs <ms> ms/step)<TAB>≥ 10×<TAB>met|missed
# The ratio is LangGraph + SqliteSaver's median ms per step over Maskflow's
# (synchronous=NORMAL, the app's setting), medians over the rounds.
#   bench/flows/run.sh [STEPS]      (default 10000, 3 rounds; QUICK=1: 2000, 2 rounds)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${QUICK:-}" ]; then
  STEPS="${1:-2000}"; ROUNDS=2
else
  STEPS="${1:-10000}"; ROUNDS=3
fi
PY=python3
if ! python3 -c "import langgraph.checkpoint.sqlite" 2>/dev/null; then
  # A venv of its own: Debian's python refuses a system-wide pip install.
  VENV="${XDG_CACHE_HOME:-$HOME/.cache}/maskflow-bench/langgraph-venv"
  if ! "$VENV/bin/python" -c "import langgraph.checkpoint.sqlite" 2>/dev/null; then
    python3 -m venv "$VENV" 2>/dev/null || { apt-get install -y -q python3-venv >/dev/null && python3 -m venv "$VENV"; }
    "$VENV/bin/pip" install -q langgraph langgraph-checkpoint-sqlite
  fi
  PY="$VENV/bin/python"
fi
cargo build --release -q -p maskflow-core --example flow_bench
BIN="${CARGO_TARGET_DIR:-target}/release/examples/flow_bench"
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
for round in $(seq 1 "$ROUNDS"); do
  echo "# round $round"
  "$BIN" "$STEPS" normal | tee -a "$OUT"
  "$BIN" "$STEPS" full | tee -a "$OUT"
  "$PY" bench/flows/langgraph_bench.py "$STEPS" | tee -a "$OUT"
done
python3 - "$OUT" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def med(engine, sync=None):
    xs = [r["ms_per_step"] for r in rows if r["engine"] == engine and (sync is None or r.get("synchronous") == sync)]
    return statistics.median(xs), xs
mf, mfs = med("maskflow", "NORMAL")
mff, mffs = med("maskflow", "FULL")
lg, lgs = med("langgraph + SqliteSaver")
bare, bares = med("langgraph (no checkpointer)")
print()
print("| engine | ms per step (rounds) | median | LangGraph+SqliteSaver / it |")
print("|---|---|---|---|")
for name, m, xs in [("maskflow, NORMAL (WAL)", mf, mfs), ("maskflow, FULL (WAL)", mff, mffs),
                    ("LangGraph + SqliteSaver", lg, lgs), ("LangGraph, no checkpointer", bare, bares)]:
    print(f"| {name} | {', '.join(f'{x:.4f}' for x in xs)} | {m:.4f} | {lg / m:.1f}× |")
ratio = lg / mf
print(f"TARGET\tflow step vs LangGraph+SqliteSaver\t{ratio:.1f}× ({mf:.4f} vs {lg:.4f} ms/step)\t≥ 10×\t{'met' if ratio >= 10 else 'missed'}")
EOF
