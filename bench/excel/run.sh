#!/usr/bin/env bash
# Excel benchmark: times Maskflow's Excel extractor against python-calamine
# and openpyxl (read-only) on the same 200,000-row x 10-column xlsx, in the
# same run. Prints a table (best of RUNS wall times, and peak RSS).
#
#   bench/excel/run.sh [ROWS] [RUNS]
#
# Needs: cargo, python3 with `pip install python-calamine openpyxl`.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${1:-200000}
RUNS=${2:-3}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
WORK=${BENCH_DIR:-/tmp/maskflow-bench-excel}
mkdir -p "$WORK"
XLSX="$WORK/orders-$ROWS.xlsx"

python3 -c "import python_calamine, openpyxl" 2>/dev/null ||
    python3 -m pip install --quiet python-calamine openpyxl

cargo build --quiet --release -p maskflow-extractors --example extract_one --example make_bench_xlsx
BIN="$CARGO_TARGET_DIR/release/examples"
[ -s "$XLSX" ] || "$BIN/make_bench_xlsx" "$XLSX" "$ROWS"

# Peak RSS in MB of a command, via GNU time when it is installed.
rss() {
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", $1/1024}'
    else
        echo "n/a"
    fi
}

best() { sort -n | head -1; }

ours() {
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN/extract_one" "$XLSX" >"$WORK/extract.json"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

echo "file: $XLSX ($(du -h "$XLSX" | cut -f1), $ROWS data rows x 10 columns)"
echo "runs: best of $RUNS"

T_OURS=$(for _ in $(seq "$RUNS"); do ours; done | best)
ROWS_OURS=$(python3 -c "import json;print(json.load(open('$WORK/extract.json'))['row_count'])")
M_OURS=$(rss "$BIN/extract_one" "$XLSX")

T_PYCAL=$(for _ in $(seq "$RUNS"); do python3 bench/excel/bench.py calamine "$XLSX" | cut -d' ' -f2; done | best)
ROWS_PYCAL=$(python3 bench/excel/bench.py calamine "$XLSX" | cut -d' ' -f1)
M_PYCAL=$(rss python3 bench/excel/bench.py calamine "$XLSX")

# openpyxl is slow: one run.
read -r ROWS_OPX T_OPX < <(python3 bench/excel/bench.py openpyxl "$XLSX")
M_OPX=$(rss python3 bench/excel/bench.py openpyxl "$XLSX")

printf '\n| %-44s | %9s | %8s | %12s | %9s |\n' "reader" "rows" "time (s)" "vs ours" "peak RSS"
printf '|%s|%s|%s|%s|%s|\n' "----------------------------------------------" "-----------" "----------" "--------------" "-----------"
row() { printf '| %-44s | %9s | %8.2f | %11.2fx | %6s MB |\n' "$1" "$2" "$3" "$(echo "$3 / $T_OURS" | bc -l)" "$4"; }
row "maskflow extract_one (calamine streaming)" "$ROWS_OURS" "$T_OURS" "$M_OURS"
row "python-calamine (iter_rows, whole sheet)" "$ROWS_PYCAL" "$T_PYCAL" "$M_PYCAL"
row "openpyxl read_only (iter_rows values_only)" "$ROWS_OPX" "$T_OPX" "$M_OPX"
echo
echo "maskflow row_count excludes the header row; the Python readers count it."
