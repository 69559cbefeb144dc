#!/usr/bin/env bash
# The OpenAI-compatible client's own overhead per streamed reply, side by side
# with curl against the same local server (which streams a fixed 100-chunk
# reply instantly). Usage: run.sh [COUNT]
set -euo pipefail
cd "$(dirname "$0")/../.."
COUNT=${1:-300}
PORT=${PORT:-8765}
cargo build --release --quiet -p maskflow-core --example stream_bench
python3 bench/llm/sse_server.py "$PORT" 100 > /dev/null &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1
URL="http://127.0.0.1:$PORT/v1/chat/completions"
BODY=$(mktemp); CFG=$(mktemp)
echo '{"model":"bench","stream":true,"messages":[{"role":"user","content":"Say something."}]}' > "$BODY"
for i in $(seq "$COUNT"); do
  [ "$i" -gt 1 ] && echo next
  printf 'url = "%s"\ndata-binary = "@%s"\nheader = "content-type: application/json"\noutput = "/dev/null"\nno-buffer\n' "$URL" "$BODY"
done > "$CFG"
ours=$("${CARGO_TARGET_DIR:-target}"/release/examples/stream_bench "http://127.0.0.1:$PORT/v1" "$COUNT")
start=$(date +%s.%N); curl -s -K "$CFG"; end=$(date +%s.%N)
curl_ms=$(python3 -c "print(f'{($end - $start) * 1000 / $COUNT:.3f}')")
echo "| client | per streamed reply (100 chunks) |"
echo "|---|---|"
echo "| maskflow OpenAI client (one process, $COUNT replies) | ${ours%% ms*} ms |"
echo "| curl (one process, $COUNT requests, connection reused) | $curl_ms ms |"
rm -f "$BODY" "$CFG"
