#!/usr/bin/env bash
# Runs every check and test of Maskflow, installing what they need first.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --test --no-tools
# The tools cargo builds from source (tauri-driver, cargo-deny,
# cargo-machete: minutes of compiling on a fresh machine) build in the
# background at the lowest CPU priority, in the time the foreground leaves
# idle (downloads, browsers, tests waiting on their processes); the stages
# that use them wait for it.
TOOLS_LOG=$(mktemp)
nice -n 19 ./scripts/setup.sh --tools >"$TOOLS_LOG" 2>&1 &
TOOLS_PID=$!
trap '[ -n "${TOOLS_PID:-}" ] && kill "$TOOLS_PID" 2>/dev/null; rm -f "$TOOLS_LOG"' EXIT
tools_ready() {
  [ -n "${TOOLS_PID:-}" ] || return 0
  wait "$TOOLS_PID" || { cat "$TOOLS_LOG" >&2; echo "setup --tools failed (log above)" >&2; exit 1; }
  TOOLS_PID=
}
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
# One feature resolution for every cargo command below: the same packages
# (the whole workspace, the desktop app with its embedded assets) and the
# same features, so each crate — llama.cpp's build among them — is compiled
# once, and clippy's build-script runs are the build's. A `-p` or
# `--exclude` anywhere would resolve features again and rebuild most of the
# tree (it took CI from ~20 to ~40 minutes).
CARGO_SET=(--workspace --locked --features tauri/custom-protocol)

stage "lint"
cargo clippy "${CARGO_SET[@]}" --all-targets -- -D warnings
stage "structure: no new import cycle, long file or function, SQL outside store/, forbidden dependency (scripts/structure-allow.txt is empty: none is known)"
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

stage "build: every test binary and both apps (maskflow, maskflow-desktop), once"
# `cargo build --all-targets`, not `cargo test --no-run`: the latter builds
# no binary of a package without integration tests (the desktop app's).
mkdir -p "$CARGO_TARGET_DIR"
BUILD_LOG="$CARGO_TARGET_DIR/ci-build.jsonl"
cargo build "${CARGO_SET[@]}" --all-targets --message-format=json-render-diagnostics >"$BUILD_LOG"
# A test executable of that build: the crate's folder, the target's kind
# (lib or test) and name. The stages below run these files as they are, so
# nothing is compiled twice.
test_exe() {
  python3 - "$BUILD_LOG" "$(pwd -P)/$1/Cargo.toml" "$2" "$3" <<'PY'
import json, sys
log, manifest, kind, name = sys.argv[1:]
found = [m["executable"] for m in map(json.loads, open(log))
         if m.get("reason") == "compiler-artifact" and m.get("executable")
         and m["manifest_path"] == manifest and m["target"]["kind"] == [kind]
         and m["target"]["name"] == name and m["profile"]["test"]]
if not found:
    sys.exit(f"no {kind} test {name} of {manifest} in {log}")
print(found[-1])
PY
}

stage "tests, including the drift check of ui/src/generated"
cargo test "${CARGO_SET[@]}"

stage "the script sandbox as a user who is not root (issue 14): the runner's containment tests and the hostile back end's suite (issue 26) under runuser"
if [ "$(id -u)" -eq 0 ]; then
  sbx_dir=$(mktemp -d)
  cp "$(test_exe crates/maskflow-runner lib maskflow_runner)" "$sbx_dir/runner-tests"
  cp "$(test_exe crates/maskflow-core lib maskflow_core)" "$sbx_dir/core-tests"
  # Issue 26's hostile back end as that user too: the server's integration
  # tests under hostile::, from a copy beside the maskflow binary they spawn
  # (and uv, for the requirement attacks).
  cp "$(test_exe crates/maskflow-server test it)" "$sbx_dir/server-tests"
  cp "$CARGO_TARGET_DIR/debug/maskflow" "$sbx_dir/maskflow"
  cp "$MASKFLOW_UV" "$sbx_dir/uv"
  chmod 755 "$sbx_dir" "$sbx_dir"/*
  id maskflow-sbx >/dev/null 2>&1 || useradd -m maskflow-sbx
  sbx_rc=0
  # The CA settings pass through so uv reaches the package index as it does for root.
  as_sbx() {
    runuser -u maskflow-sbx -- env -i PATH=/usr/bin:/bin HOME=/home/maskflow-sbx LANG=C.UTF-8 \
      ${SSL_CERT_FILE:+SSL_CERT_FILE="$SSL_CERT_FILE"} ${SSL_CERT_DIR:+SSL_CERT_DIR="$SSL_CERT_DIR"} "$@"
  }
  # One test at a time: the tests share this user, and its process limit
  # (RLIMIT_NPROC) counts all of its processes, so a fork-bomb test would
  # starve a concurrent one.
  as_sbx "$sbx_dir/runner-tests" --test-threads=1 || sbx_rc=$?
  as_sbx "$sbx_dir/core-tests" flow_scripts --test-threads=1 || sbx_rc=$?
  # Issue 39: a watched folder another account writes to (as root the
  # other account is `nobody`; as this user, the test makes the entries).
  as_sbx "$sbx_dir/core-tests" another_account --test-threads=1 || sbx_rc=$?
  as_sbx MASKFLOW_BIN="$sbx_dir/maskflow" MASKFLOW_UV="$sbx_dir/uv" MASKFLOW_REQUIRE_LLM_SERVERS=1 \
    "$sbx_dir/server-tests" hostile:: --test-threads=1 || sbx_rc=$?
  userdel -r maskflow-sbx >/dev/null 2>&1 || true
  rm -rf "$sbx_dir"
  [ "$sbx_rc" -eq 0 ]
fi

stage "the HTTP API fuzzed from its OpenAPI document (schemathesis; no 5xx the document does not list)"
MASKFLOW_BIN="$CARGO_TARGET_DIR/debug/maskflow" ST_MAX_EXAMPLES=30 crates/maskflow-server/tests/schemathesis.sh

stage "browser end-to-end tests (Chromium against maskflow serve --replay)"
npm --prefix tests run --silent e2e

stage "dependencies: licenses, duplicate majors, sources (cargo deny; advisories need GitHub, see deny.toml) and unused ones (cargo machete)"
tools_ready
cargo deny --log-level error check bans licenses sources
cargo machete

stage "desktop: the window under Xvfb (the build above embeds ui/dist)"
npm --prefix tests run --silent desktop
stage "the .deb of that build: installed with dpkg -i (its declared dependencies only), the installed app's first screen under Xvfb, purged without a trace"
tests/package/run.sh --prebuilt

stage "keys in a real Secret Service (gnome-keyring under dbus-run-session)"
llm_tests=$(test_exe crates/maskflow-llm test it)
(cd crates/maskflow-llm && dbus-run-session -- sh -c '
  export XDG_DATA_HOME=$(mktemp -d)
  printf "ci-pass" | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
  MASKFLOW_KEYRING_TEST=1 exec "$0" keyring::' "$llm_tests")

stage "every check passed"
