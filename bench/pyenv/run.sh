#!/usr/bin/env bash
# Issue 16's benchmark: a 1 GB CSV aggregated (revenue and rows per region)
# by a standard-library script, a pandas script and a polars script, each
# through the sandboxed runner in its uv environment; and environment
# creation first time (empty uv cache, from PyPI), from uv's cache, and
# reuse. Needs uv (`python3 -m pip install uv`) and PyPI. Prints Markdown
# tables; copy them into bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=bench/data
mkdir -p "$DATA"
CACHE=${UV_BENCH_CACHE:-$HOME/.cache/maskflow-test/uv}
cargo run -q -p maskflow-pyenv --example pyenv_bench -- "$DATA/pyenv-${SIZE:-1000000000}.csv" --uv-cache "$CACHE"
