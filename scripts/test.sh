#!/usr/bin/env bash
# Runs every check and test of Maskflow, installing what they need first.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh

echo "== format"
cargo fmt --all --check
echo "== lint"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== the domain crates know nothing of HTTP or Tauri"
if cargo tree -p maskflow-extractors -e normal | grep -E '^\S*(axum|tauri|hyper|reqwest) ' ; then
  echo "maskflow-extractors depends on a network or shell crate" >&2; exit 1
fi
echo "== tests"
export MASKFLOW_REQUIRE_LLM_SERVERS=1
cargo test --workspace --locked
echo "== keys in a real Secret Service (gnome-keyring under dbus-run-session)"
dbus-run-session -- sh -c '
  export XDG_DATA_HOME=$(mktemp -d)
  printf "ci-pass" | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
  MASKFLOW_KEYRING_TEST=1 exec cargo test -p maskflow-core --locked --test keyring'

