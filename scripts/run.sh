#!/usr/bin/env bash
# Builds Maskflow and shows the masked extract of the bundled example file.
# (The desktop app replaces this in a later release.)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cargo build --release --locked -q -p maskflow-server
echo "Masked extract of samples/sales.csv — this is all an LLM would ever see of it:" >&2
exec target/release/maskflow extract "${@:-samples/sales.csv}"
