#!/usr/bin/env bash
# Prints, for each crash artifact of a target, where it panicked.
# usage: triage.sh TARGET
set -u
cd "$(dirname "$0")"
bin=target/x86_64-unknown-linux-gnu/release/$1
for f in artifacts/$1/*; do
  [ -f "$f" ] || continue
  where=$(MASKFLOW_FUZZ_DIR=/dev/shm "$bin" "$f" 2>&1 | grep -m1 -E "panicked at|ERROR: AddressSanitizer|out-of-memory|timeout" )
  echo "$(basename "$f"): $where"
done | sed -E 's#/root/.cargo/registry/src/index.crates.io-[0-9a-f]+/##' | sort -t: -k2 | uniq -f1 -c
