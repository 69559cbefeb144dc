#!/usr/bin/env bash
# Times the privacy guard: indexing a generated ~100 MB CSV and checking a
# ~100 KB outbound request against it (release build). Usage: run.sh [MB]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run --release --quiet -p maskflow-core --example guard_bench -- "${1:-100}"
