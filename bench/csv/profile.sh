#!/usr/bin/env bash
# Profile benchmark (issue 28): the whole-file profile of the guard
# benchmark's ~100 MB CSV beside the bare value visit of the same file, in
# the same run, and the profile pass's peak RSS. Usage: profile.sh [MB]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --profile bench -q -p maskflow-extractors --example profile_time
BIN="${CARGO_TARGET_DIR:-target}/release/examples/profile_time"
/usr/bin/time -f "peak RSS (both passes, 3 runs each): %M KB" "$BIN" "${1:-100}"
