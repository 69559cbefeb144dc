#!/usr/bin/env bash
# Property-based check of the HTTP API: starts `maskflow serve --replay` on a
# free port with a throw-away data folder and runs schemathesis against its
# generated /api/openapi.json, failing on any 5xx the document does not list
# for that route (`schemathesis_hooks.py`: a 503 "no keyring here" is an
# answer; a 500 is a crash).
#
# Needs: cargo, and schemathesis on PATH (`pip install schemathesis`).
# Env: MASKFLOW_BIN (a built `maskflow`, else it is built here),
#      ST_MAX_EXAMPLES (default 100), extra args are passed to schemathesis.
set -euo pipefail

root="$(cd "$(dirname "$0")/../../.." && pwd)"
command -v schemathesis >/dev/null || { echo "schemathesis is not installed: pip install schemathesis" >&2; exit 2; }

bin="${MASKFLOW_BIN:-}"
if [[ -z "$bin" ]]; then
    cargo build --quiet -p maskflow-server --bin maskflow --manifest-path "$root/Cargo.toml"
    bin="${CARGO_TARGET_DIR:-$root/target}/debug/maskflow"
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/replay.json" <<'JSON'
{
  "validator": [{"feasible": true}, {"feasible": false, "reason": "needs the internet"}, "not json", {"feasible": true}],
  "clarifier": [{"needs_clarification": true, "question": "Which column?"}, {"needs_clarification": false}],
  "builder": [{"name": "Demo", "description": "A demo", "script": "print(1)\n", "fields": [],
               "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [], "outputs": []}}]
}
JSON

token="schemathesis-$RANDOM$RANDOM$RANDOM"
MASKFLOW_HOME="$work/home" "$bin" serve --port 0 --token "$token" --replay "$work/replay.json" \
    >"$work/stdout" 2>"$work/stderr" &
server_pid=$!

url=""
for _ in $(seq 1 100); do
    url="$(head -n1 "$work/stdout" 2>/dev/null || true)"
    [[ -n "$url" ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/stderr" >&2; exit 1; }
    sleep 0.1
done
[[ -n "$url" ]] || { echo "maskflow serve did not print its URL" >&2; exit 1; }
base="${url%%/#token=*}"
echo "maskflow serve at $base"

# Run from the scratch folder so schemathesis leaves no cache in the repository.
cd "$work"
export SCHEMATHESIS_HOOKS=schemathesis_hooks
export PYTHONPATH="$root/crates/maskflow-server/tests${PYTHONPATH:+:$PYTHONPATH}"
schemathesis run "$base/api/openapi.json" \
    --header "Authorization: Bearer $token" \
    --checks "${ST_CHECKS:-no_undocumented_server_error}" \
    --max-examples "${ST_MAX_EXAMPLES:-100}" \
    "$@"
