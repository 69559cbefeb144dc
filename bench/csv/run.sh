#!/usr/bin/env bash
# CSV row-count benchmark: `maskflow extract` side by side with `wc -l` (the
# bandwidth floor), `xsv count` and Python's csv module, on a 1 GB CSV with
# quoted fields and embedded newlines, in the page cache. Prints a Markdown
# table; copy it into bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=bench/data
SIZE=${SIZE:-1000000000}
mkdir -p "$DATA"
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine time; }
command -v xsv >/dev/null || [ -x /opt/xsv/bin/xsv ] || cargo install xsv --locked --root /opt/xsv
XSV=$(command -v xsv || echo /opt/xsv/bin/xsv)
cargo build --release -q -p maskflow-server
cargo build --release -q -p maskflow-extractors --example preview_time
FILE="$DATA/big-$SIZE.csv"
if [ ! -f "$FILE" ]; then python3 bench/csv/generate.py "$FILE" "$SIZE" > "$FILE.count"; fi
EXPECTED=$(cat "$FILE.count")
cat "$FILE" > /dev/null

echo "expected data records: $EXPECTED"
echo "maskflow row_count:    $(target/release/maskflow extract "$FILE" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["row_count"])')"
echo "xsv count:             $($XSV count "$FILE")"
echo "wc -l:                 $(wc -l < "$FILE")"

hyperfine --style basic --warmup 1 --runs ${RUNS:-5} --export-json "$DATA/csv.json" \
  -n "wc -l" "wc -l $FILE" \
  -n "maskflow extract" "target/release/maskflow extract $FILE" \
  -n "xsv count" "$XSV count $FILE"
hyperfine --style basic --runs 1 --export-json "$DATA/csv-python.json" \
  -n "python csv module" "python3 -c 'import csv,sys; print(sum(1 for _ in csv.reader(open(sys.argv[1], newline=\"\"))))' $FILE"

RSS_KB=$(/usr/bin/time -f %M target/release/maskflow extract "$FILE" 2>&1 >/dev/null | tail -1)
PREVIEW=$(target/release/examples/preview_time "$FILE")

python3 - "$DATA/csv.json" "$DATA/csv-python.json" "$RSS_KB" "$PREVIEW" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"] + json.load(open(sys.argv[2]))["results"]
t = {r["command"]: r["mean"] for r in results}
m = t["maskflow extract"]
print("\n| tool | mean (s) | maskflow is … |")
print("|---|---|---|")
for name, mean in t.items():
    print(f"| {name} | {mean:.3f} | {mean / m:.2f}× faster |" if name != "maskflow extract" else f"| {name} | {mean:.3f} | — |")
print(f"\nmaskflow / wc -l = {m / t['wc -l']:.2f} (target ≤ 1.5)")
print(f"xsv count / maskflow = {t['xsv count'] / m:.2f} (target ≥ 4)")
print(f"peak RSS of maskflow extract: {int(sys.argv[3]) / 1024:.1f} MiB (target < 64)")
print(f"columns and samples: {sys.argv[4]} (target < 50 ms)")
PY
