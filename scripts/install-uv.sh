#!/usr/bin/env bash
# Puts Astral's uv — the static binary the `uv` PyPI wheel carries — at
# DEST (a file path), for the managed Python environments of scripts that
# need packages (issue 44). The wheel is fetched with the machine's own pip
# (`pip download`, its index and certificates as configured), unzipped, and
# only its `uv` binary kept; nothing is installed into any Python.
#   scripts/install-uv.sh DEST        e.g. ~/.local/share/maskflow/tools/uv/bin/uv
# Does nothing when DEST already runs. Without a Python 3 with pip it says
# so, with the fix for this system, and fails.
set -euo pipefail
DEST=${1:?usage: scripts/install-uv.sh DEST}

if [ -x "$DEST" ] && "$DEST" --version >/dev/null 2>&1; then
  exit 0
fi

no_python() {
  echo "uv: $1" >&2
  case "$(uname -s)" in
    Darwin) echo "uv: fix: install Python 3 (brew install python3, or the installer from python.org), then run this again" >&2 ;;
    *) echo "uv: fix: install Python 3 with pip (on Debian or Ubuntu: sudo apt install python3 python3-pip; on Fedora: sudo dnf install python3 python3-pip), then run this again" >&2 ;;
  esac
  exit 1
}
PYTHON=$(command -v python3 || true)
[ -n "$PYTHON" ] || no_python "no Python 3 was found (python3 is not on PATH): Maskflow runs its scripts with it"
"$PYTHON" -m pip --version >/dev/null 2>&1 || no_python "$PYTHON has no pip, which fetches uv"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
  --only-binary=:all: --dest "$tmp" uv
wheel=$(ls "$tmp"/uv-*.whl 2>/dev/null | head -n 1)
[ -n "$wheel" ] || { echo "uv: pip downloaded no uv wheel for this machine" >&2; exit 1; }
# The binary is uv-<version>.data/scripts/uv inside the wheel (a zip).
"$PYTHON" - "$wheel" "$tmp/uv" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".data/scripts/uv") or n.endswith(".data/scripts/uv.exe")]
    if not names:
        sys.exit(f"uv: {wheel} holds no uv binary")
    with z.open(names[0]) as src, open(out, "wb") as dst:
        dst.write(src.read())
PY
chmod 755 "$tmp/uv"
"$tmp/uv" --version >/dev/null || { echo "uv: the downloaded uv does not start on this machine" >&2; exit 1; }
mkdir -p "$(dirname "$DEST")"
mv -f "$tmp/uv" "$DEST"
echo "uv: $("$DEST" --version) at $DEST"
