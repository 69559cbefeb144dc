#!/usr/bin/env bash
# Times the privacy guard against a naive baseline, same run, same file:
# indexing a generated ~100 MB CSV and checking a ~100 KB outbound request
# (bench profile). Usage: run.sh [MB]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench --quiet -p maskflow-core --bench guard -- "${1:-100}"
