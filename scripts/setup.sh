#!/usr/bin/env bash
# Installs what building and testing Maskflow needs on a fresh Debian/Ubuntu
# machine: system packages through apt-get. Rust (rustup) must already be
# installed; crates come from crates.io during the build.
set -euo pipefail

APT_PACKAGES=(build-essential pkg-config tesseract-ocr)

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
