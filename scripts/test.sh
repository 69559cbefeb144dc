#!/usr/bin/env bash
# Runs every check and test of Maskflow, installing what they need first.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --test
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# A fresh CI clone builds everything once: incremental state only costs it time.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
# Each stage's start, with the minutes since the run began: CI's log then
# shows where the time goes.
stage() { echo "== [$(date -u +%H:%M:%S), $((SECONDS / 60)) min] $*"; }

stage "UI: type check, unit tests, build (the Rust builds embed ui/dist)"
npm --prefix ui run --silent check
npm --prefix ui run --silent lint
npm --prefix ui run --silent test
npm --prefix ui run --silent build -- --logLevel warn

stage "format"
cargo fmt --all --check
stage "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings
stage "dependencies: licenses, duplicate majors, sources (cargo deny; advisories need GitHub, see deny.toml) and unused ones (cargo machete)"
cargo deny --log-level error check bans licenses sources
cargo machete
stage "structure: no new import cycle, long file or function, SQL outside store/, forbidden dependency (scripts/structure-allow.txt lists the known ones)"
python3 scripts/structure.py --self-test
python3 scripts/structure.py
stage "bench/check's collector on fake scripts (the benchmarks themselves stay out of the tests)"
bench/check --self-test
export MASKFLOW_REQUIRE_LLM_SERVERS=1
stage "uv for the managed Python environments (issue 16): on PATH, the uv package of python3, or installed from PyPI"
# Named explicitly (MASKFLOW_UV), so every test finds the same one whether
# it looks on PATH or not.
if [ -z "${MASKFLOW_UV:-}" ]; then
  MASKFLOW_UV=$(command -v uv || python3 -c 'import uv; print(uv.find_uv_bin())' 2>/dev/null || true)
  if [ -z "$MASKFLOW_UV" ]; then
    uv_tool="$HOME/.cache/maskflow-test/uv-tool"
    [ -x "$uv_tool/bin/uv" ] || python3 -m pip install --quiet --disable-pip-version-check --target "$uv_tool" uv
    MASKFLOW_UV="$uv_tool/bin/uv"
  fi
  export MASKFLOW_UV
fi
# uv's cache shared by every run of the tests, so reruns install from it.
export UV_CACHE_DIR="${UV_CACHE_DIR:-$HOME/.cache/maskflow-test/uv}"
stage "tests, including the drift check of ui/src/generated (the desktop crate's own unit tests run below, with its build)"
cargo test --workspace --exclude maskflow-desktop --locked

stage "the script sandbox as a user who is not root (issue 14): the runner's containment tests and the hostile back end's suite (issue 26) under runuser"
if [ "$(id -u)" -eq 0 ]; then
  # The lib test binary of a crate, as built by cargo.
  lib_tests() {
    cargo test -p "$1" --lib --locked --no-run --message-format=json 2>/dev/null \
      | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])' | tail -n 1
  }
  sbx_dir=$(mktemp -d)
  cp "$(lib_tests maskflow-runner)" "$sbx_dir/runner-tests"
  cp "$(lib_tests maskflow-core)" "$sbx_dir/core-tests"
  chmod 755 "$sbx_dir" "$sbx_dir/runner-tests" "$sbx_dir/core-tests"
  id maskflow-sbx >/dev/null 2>&1 || useradd -m maskflow-sbx
  sbx_rc=0
  as_sbx() { runuser -u maskflow-sbx -- env -i PATH=/usr/bin:/bin HOME=/home/maskflow-sbx LANG=C.UTF-8 "$@"; }
  # One test at a time: the tests share this user, and its process limit
  # (RLIMIT_NPROC) counts all of its processes, so a fork-bomb test would
  # starve a concurrent one.
  as_sbx "$sbx_dir/runner-tests" --test-threads=1 || sbx_rc=$?
  as_sbx "$sbx_dir/core-tests" flow_scripts --test-threads=1 || sbx_rc=$?
  # Issue 26's hostile back end as that user too: the server's integration
  # tests under hostile::, from a copy beside the maskflow binary they spawn
  # (and uv, for the requirement attacks); the CA settings pass through so
  # uv reaches the package index as it does for root.
  server_tests=$(cargo test -p maskflow-server --test it --locked --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"] and m["target"]["name"] == "it":
        print(m["executable"])' | tail -n 1)
  cp "$server_tests" "$sbx_dir/server-tests"
  cp "$CARGO_TARGET_DIR/debug/maskflow" "$sbx_dir/maskflow"
  uv_bin=${MASKFLOW_UV:-$(command -v uv || python3 -c 'import uv; print(uv.find_uv_bin())' 2>/dev/null || true)}
  [ -n "$uv_bin" ] && cp "$uv_bin" "$sbx_dir/uv"
  chmod 755 "$sbx_dir"/*
  as_sbx MASKFLOW_BIN="$sbx_dir/maskflow" MASKFLOW_UV="$sbx_dir/uv" MASKFLOW_REQUIRE_LLM_SERVERS=1 \
    ${SSL_CERT_FILE:+SSL_CERT_FILE="$SSL_CERT_FILE"} ${SSL_CERT_DIR:+SSL_CERT_DIR="$SSL_CERT_DIR"} \
    "$sbx_dir/server-tests" hostile:: --test-threads=1 || sbx_rc=$?
  userdel -r maskflow-sbx >/dev/null 2>&1 || true
  rm -rf "$sbx_dir"
  [ "$sbx_rc" -eq 0 ]
fi

stage "the HTTP API fuzzed from its OpenAPI document (schemathesis; no 5xx the document does not list)"
cargo build --locked -q -p maskflow-server --bin maskflow
MASKFLOW_BIN="$CARGO_TARGET_DIR/debug/maskflow" ST_MAX_EXAMPLES=30 crates/maskflow-server/tests/schemathesis.sh

stage "browser end-to-end tests (Chromium against maskflow serve --replay)"
npm --prefix tests run --silent e2e

stage "desktop: build with embedded assets, unit tests, then the window under Xvfb"
cargo build --locked -p maskflow-desktop --features tauri/custom-protocol
cargo test --locked -p maskflow-desktop --features tauri/custom-protocol
npm --prefix tests run --silent desktop
stage "the .deb of that build: installed with dpkg -i (its declared dependencies only), the installed app's first screen under Xvfb, purged without a trace"
tests/package/run.sh

stage "keys in a real Secret Service (gnome-keyring under dbus-run-session)"
dbus-run-session -- sh -c '
  export XDG_DATA_HOME=$(mktemp -d)
  printf "ci-pass" | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
  MASKFLOW_KEYRING_TEST=1 exec cargo test -p maskflow-llm --locked --test it keyring::'

stage "every check passed"
