#!/usr/bin/env bash
# Excel benchmark: times Maskflow's Excel extractor against python-calamine
# and openpyxl (read-only) on the same generated xlsx (ROWS data rows x 10
# columns), in the same run, Maskflow and python-calamine alternating. Prints
# a table (best of RUNS wall times, and peak RSS) and bench/check's TARGET
# line (at least as fast as python-calamine).
#
#   bench/excel/run.sh [ROWS] [RUNS]     default 200,000 rows, best of 3
#   QUICK=1 bench/excel/run.sh           20,000 rows, best of 2
#
# Needs cargo and python3; installs GNU time (apt-get) and python-calamine
# and openpyxl (pip, into a virtual environment under the work folder) when
# they are missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${QUICK:-}" ]; then ROWS=${1:-20000} RUNS=${2:-2}; else ROWS=${1:-200000} RUNS=${2:-3}; fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
WORK=${BENCH_DIR:-/tmp/maskflow-bench-excel}
mkdir -p "$WORK"
XLSX="$WORK/orders-$ROWS.xlsx"

[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
# The Python readers: python3's own if it has them, else a virtual
# environment of ours (Debian's python3 refuses a system-wide pip install).
PY=python3
if ! python3 -c "import python_calamine, openpyxl" 2>/dev/null; then
    PY="$WORK/venv/bin/python"
    if [ ! -x "$PY" ]; then
        python3 -m venv "$WORK/venv" 2>/dev/null || {
            apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
            python3 -m venv "$WORK/venv"
        }
    fi
    "$PY" -c "import python_calamine, openpyxl" 2>/dev/null ||
        "$PY" -m pip install --quiet --disable-pip-version-check python-calamine openpyxl
fi

cargo build --quiet --release -p maskflow-extractors --example extract_one --example make_bench_xlsx
BIN="$CARGO_TARGET_DIR/release/examples"
[ -s "$XLSX" ] || "$BIN/make_bench_xlsx" "$XLSX" "$ROWS"

# Peak RSS in MB of a command (GNU time).
rss() { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", $1/1024}'; }

# Wall time of Maskflow's whole extract, process start included.
ours() {
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN/extract_one" "$XLSX" >"$WORK/extract.json"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

echo "file: $XLSX ($(du -h "$XLSX" | cut -f1), $ROWS data rows x 10 columns)"
echo "runs: best of $RUNS, alternating"

T_OURS=999999 T_PYCAL=999999
for _ in $(seq "$RUNS"); do
    t=$(ours)
    T_OURS=$(awk -v a="$T_OURS" -v b="$t" 'BEGIN { print (b < a ? b : a) }')
    read -r ROWS_PYCAL t < <("$PY" bench/excel/bench.py calamine "$XLSX")
    T_PYCAL=$(awk -v a="$T_PYCAL" -v b="$t" 'BEGIN { print (b < a ? b : a) }')
done
ROWS_OURS=$(python3 -c "import json;print(json.load(open('$WORK/extract.json'))['row_count'])")
M_OURS=$(rss "$BIN/extract_one" "$XLSX")
M_PYCAL=$(rss "$PY" bench/excel/bench.py calamine "$XLSX")

# openpyxl is slow: one run.
read -r ROWS_OPX T_OPX < <("$PY" bench/excel/bench.py openpyxl "$XLSX")
M_OPX=$(rss "$PY" bench/excel/bench.py openpyxl "$XLSX")

printf '\n| %-44s | %9s | %8s | %12s | %9s |\n' "reader" "rows" "time (s)" "vs ours" "peak RSS"
printf '|%s|%s|%s|%s|%s|\n' "----------------------------------------------" "-----------" "----------" "--------------" "-----------"
row() {
    printf '| %-44s | %9s | %8.2f | %11.2fx | %6s MB |\n' "$1" "$2" "$3" \
        "$(awk -v a="$3" -v b="$T_OURS" 'BEGIN { print a / b }')" "$4"
}
row "maskflow extract_one (calamine streaming)" "$ROWS_OURS" "$T_OURS" "$M_OURS"
row "python-calamine (iter_rows, whole sheet)" "$ROWS_PYCAL" "$T_PYCAL" "$M_PYCAL"
row "openpyxl read_only (iter_rows values_only)" "$ROWS_OPX" "$T_OPX" "$M_OPX"
echo
echo "maskflow row_count excludes the header row; the Python readers count it."

# A reader that counted other rows did not read the same sheet: no figure.
if [ "$ROWS_OURS" != "$ROWS" ] || [ "$ROWS_PYCAL" != $((ROWS + 1)) ] || [ "$ROWS_OPX" != $((ROWS + 1)) ]; then
    echo "error: row counts differ from $ROWS data rows (+1 header for the Python readers)" >&2
    exit 1
fi
awk -v ours="$T_OURS" -v peer="$T_PYCAL" 'BEGIN {
    r = peer / ours
    printf "TARGET\texcel read: python-calamine time / maskflow\t%.2f× (%.2f s vs %.2f s)\t≥ 1×\t%s\n",
        r, ours, peer, (r >= 1 ? "met" : "missed")
}'
