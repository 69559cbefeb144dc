#!/usr/bin/env bash
# CSV row-count benchmark: `maskflow extract` side by side with `wc -l` (the
# bandwidth floor), `xsv count` and Python's csv module, on a 1 GB CSV with
# quoted fields and embedded newlines, in the page cache. Prints a Markdown
# table (copy it into bench/README.md) and one bench/check line per target:
# TARGET<TAB>name<TAB>figure<TAB>target<TAB>met|missed.
#
# QUICK=1: a ~200 MB file and fewer runs (a smoke run). SIZE=bytes, RUNS=n
# override either. Ratios use each command's best run (the least disturbed
# by other work on the machine); means and CPU times are printed beside them.
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=bench/data
if [ "${QUICK:-0}" = 1 ]; then
  SIZE=${SIZE:-200000000}
  RUNS=${RUNS:-5}
else
  SIZE=${SIZE:-1000000000}
  RUNS=${RUNS:-10}
fi
TARGET_DIR=${CARGO_TARGET_DIR:-target}
mkdir -p "$DATA"
command -v hyperfine >/dev/null && [ -x /usr/bin/time ] ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine time >/dev/null; }
command -v xsv >/dev/null || [ -x /opt/xsv/bin/xsv ] || cargo install xsv --locked --root /opt/xsv
XSV=$(command -v xsv || echo /opt/xsv/bin/xsv)
cargo build --release -q -p maskflow-server --bin maskflow
cargo build --release -q -p maskflow-extractors --example preview_time --example scan_speed
MASKFLOW="$TARGET_DIR/release/maskflow"
FILE="$DATA/big-$SIZE.csv"
if [ ! -f "$FILE.count" ]; then python3 bench/csv/generate.py "$FILE" "$SIZE" > "$FILE.count"; fi
EXPECTED=$(cat "$FILE.count")
cat "$FILE" > /dev/null

GOT=$("$MASKFLOW" extract "$FILE" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["row_count"])')
echo "expected data records: $EXPECTED"
echo "maskflow row_count:    $GOT"
echo "xsv count:             $($XSV count "$FILE")"
echo "wc -l:                 $(wc -l < "$FILE")"
[ "$GOT" = "$EXPECTED" ] || { echo "maskflow counted $GOT records, expected $EXPECTED" >&2; exit 1; }

echo "the scan alone, per kernel, on 256 KiB in the L2 cache:"
"$TARGET_DIR/release/examples/scan_speed" "$FILE"

hyperfine --style basic --warmup 1 --runs "$RUNS" --export-json "$DATA/csv.json" \
  -n "wc -l" "wc -l $FILE" \
  -n "maskflow extract" "$MASKFLOW extract $FILE" \
  -n "xsv count" "$XSV count $FILE"
if [ "${QUICK:-0}" != 1 ]; then
  hyperfine --style basic --runs 1 --export-json "$DATA/csv-python.json" \
    -n "python csv module" "python3 -c 'import csv,sys; print(sum(1 for _ in csv.reader(open(sys.argv[1], newline=\"\"))))' $FILE"
else
  echo '{"results": []}' > "$DATA/csv-python.json"
fi

RSS_KB=$( { /usr/bin/time -f %M "$MASKFLOW" extract "$FILE" >/dev/null; } 2>&1 | tail -1)
PREVIEW=$("$TARGET_DIR/release/examples/preview_time" "$FILE")

python3 - "$DATA/csv.json" "$DATA/csv-python.json" "$RSS_KB" "$PREVIEW" "$SIZE" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"] + json.load(open(sys.argv[2]))["results"]
best = {r["command"]: min(r["times"]) for r in results}
mean = {r["command"]: r["mean"] for r in results}
cpu = {r["command"]: r["user"] + r["system"] for r in results}
m = best["maskflow extract"]
gb = int(sys.argv[5]) / 1e9
print(f"\n| tool ({gb:g} GB) | best (s) | mean (s) | CPU user+sys (s) | maskflow is … |")
print("|---|---|---|---|---|")
for name in best:
    ratio = "—" if name == "maskflow extract" else f"{best[name] / m:.2f}× faster"
    print(f"| {name} | {best[name]:.3f} | {mean[name]:.3f} | {cpu[name]:.3f} | {ratio} |")
rss_mb = int(sys.argv[3]) / 1024
preview_ms = float(sys.argv[4].split()[0])
wc = m / best["wc -l"]
xsv = best["xsv count"] / m
targets = [
    ("csv count vs wc -l", f"{wc:.2f}×", "≤ 1.2×", wc <= 1.2),
    ("csv xsv count / maskflow", f"{xsv:.2f}×", "≥ 8×", xsv >= 8),
    ("csv count peak RSS", f"{rss_mb:.1f} MB", "< 64 MB", rss_mb < 64),
    ("csv columns and samples", f"{preview_ms:.2f} ms", "< 50 ms", preview_ms < 50),
]
print()
for name, figure, target, met in targets:
    print(f"TARGET\t{name}\t{figure}\t{target}\t{'met' if met else 'missed'}")
PY
