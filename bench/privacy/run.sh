#!/usr/bin/env bash
# Times the privacy guard against a naive baseline, same run, same file:
# indexing a generated ~100 MB CSV and checking a ~100 KB outbound request
# (bench profile). Prints a table and bench/check's TARGET lines.
#   bench/privacy/run.sh [MB]      default 100; QUICK=1: 20
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${QUICK:-}" ]; then MB=${1:-20}; else MB=${1:-100}; fi
cargo bench --quiet -p maskflow-core --bench guard -- "$MB"
