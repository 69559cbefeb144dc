#!/usr/bin/env bash
# The embedded back end (llama.cpp in the process, issue 32) against the same
# model behind llama.cpp's own server (xllamacpp), in the same run,
# alternating, one CPU thread each: time to first token and tokens per
# second; the process's memory before loading, while loaded and after
# unloading; then the builder conversation's wall time through a release
# `maskflow serve` whose every role is the embedded model. Prints the
# tables (copy them into README.md), then the bench/check line:
#   TARGET<TAB>embedded tokens/s vs llama-server<TAB><x>×<TAB>≥ 0.91× (within 1.1×)<TAB>met|missed
# (the medians' ratio, embedded over llama-server).
#   bench/local/run.sh [MODEL.gguf]   (5 rounds of 256 tokens; QUICK=1: 2 rounds of 64)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${QUICK:-}" ]; then ROUNDS=2; TOKENS=64; else ROUNDS=5; TOKENS=256; fi
MODEL="${1:-${MASKFLOW_TEST_GGUF:-$(ls "$HOME"/.cache/maskflow-test/*.gguf 2>/dev/null | head -n1)}}"
[ -f "$MODEL" ] || { echo "bench/local: no GGUF model (give one, or run scripts/setup.sh --test)" >&2; exit 1; }
python3 -c "import xllamacpp" 2>/dev/null || {
  python3 -m pip install -q xllamacpp 2>/dev/null || python3 -m pip install -q --break-system-packages xllamacpp
}
cargo build --release -q -p maskflow-local --example local_bench
cargo build --release -q -p maskflow-server --bin maskflow
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
BENCH_BIN="$TARGET_DIR/release/examples/local_bench"
OUT="$(mktemp)"
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -f "$OUT"; }
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 bench/local/llama_server.py "$MODEL" "$PORT" 1 >/dev/null 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 600); do
  python3 -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:$PORT/health').status==200 else 1)" 2>/dev/null && break
  sleep 0.1
done
echo "# $(lscpu | grep -m1 'Model name' | sed 's/  */ /g'); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$ROUNDS"); do
  echo "# round $round"
  # The server idles between its rounds (it holds its model, as the app
  # holds its own until the idle timeout).
  kill -STOP "$SERVER_PID"
  "$BENCH_BIN" "$MODEL" "$TOKENS" 1 | tee -a "$OUT"
  kill -CONT "$SERVER_PID"
  python3 bench/local/client.py "$PORT" "$TOKENS" | tee -a "$OUT"
done
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
echo "# the builder conversation"
python3 bench/local/conversation.py "$TARGET_DIR/release/maskflow" "$MODEL" | tee -a "$OUT"
python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def col(engine, key):
    return [r[key] for r in rows if r["engine"] == engine]
print()
print("| engine | tokens/s (rounds) | median | time to first token, ms (median) |")
print("|---|---|---|---|")
med = {}
for e in ["embedded", "llama-server"]:
    tps, ttft = col(e, "tokens_per_s"), col(e, "ttft_ms")
    med[e] = statistics.median(tps)
    print(f"| {e} | {', '.join(f'{x:.1f}' for x in tps)} | {med[e]:.1f} | {statistics.median(ttft):.0f} |")
emb = [r for r in rows if r["engine"] == "embedded"]
print()
print("| embedded, memory (MiB, median) | before loading | loaded | after unloading |")
print("|---|---|---|---|")
m = lambda k: statistics.median(r[k] for r in emb)
print(f"| resident | {m('rss_before_mib'):.0f} | {m('rss_loaded_mib'):.0f} | {m('rss_unloaded_mib'):.0f} |")
for c in [r for r in rows if r["engine"] == "conversation"]:
    print()
    print(f"builder conversation: {c['wall_s']} s wall, ended {c['status']}, {c['calls']} calls "
          f"({c['local_calls']} marked local), {c['output_tokens']} output tokens; serve {c['serve_rss_loaded_mib']} MiB resident")
ratio = med["embedded"] / med["llama-server"]
print(f"TARGET\tembedded tokens/s vs llama-server\t{ratio:.2f}×\t≥ 0.91× (within 1.1×)\t{'met' if ratio >= 1 / 1.1 else 'missed'}")
PY
