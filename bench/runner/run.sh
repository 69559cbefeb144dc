#!/usr/bin/env bash
# Issue 29's runner benchmark: a polars script aggregating a 1 GB CSV run
# directly by its environment's interpreter and through the sandboxed
# runner, alternating, best of 5; and a trivial script's whole run through
# the runner. Prints a Markdown table and `TARGET` lines for bench/check.
# QUICK=1: a 100 MB CSV, 3 rounds. Needs uv (installed here with pip when
# missing) and the package index or a warm uv cache for polars.
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=bench/data
mkdir -p "$DATA"
if [ -n "${QUICK:-}" ]; then
  SIZE=100000000 ROUNDS=3
else
  SIZE=${SIZE:-1000000000} ROUNDS=${ROUNDS:-5}
fi
export SIZE
if [ -z "${MASKFLOW_UV:-}" ] && ! command -v uv >/dev/null 2>&1; then
  # In a folder of its own, as scripts/test.sh does: a user-wide install
  # would change which uv the app and the tests find.
  uv_tool="$HOME/.cache/maskflow-test/uv-tool"
  [ -x "$uv_tool/bin/uv" ] || python3 -m pip install --quiet --disable-pip-version-check --target "$uv_tool" uv
  export MASKFLOW_UV="$uv_tool/bin/uv"
fi
CACHE=${UV_BENCH_CACHE:-${UV_CACHE_DIR:-$HOME/.cache/maskflow-test/uv}}
lscpu | grep -E '^(Model name|CPU\(s\)|Flags)' | cut -c1-120 >&2 || true
# A debug build, as bench/pyenv: the runner's own work is system calls and
# file walks, so its figure is an upper bound of the release build's.
cargo run -q -p maskflow-pyenv --example runner_bench -- \
  "$DATA/pyenv-$SIZE.csv" --uv-cache "$CACHE" --rounds "$ROUNDS"
