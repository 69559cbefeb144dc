#!/usr/bin/env bash
# Builds the Linux packages tauri.conf.json names (.deb and .rpm), each with
# the desktop app (/usr/bin/maskflow-desktop), the command-line tool and
# server (/usr/bin/maskflow) and uv (/usr/lib/maskflow/uv, the `uv` wheel's
# static binary, where Maskflow looks beside its binaries; issue 44).
#   scripts/package.sh           release build; debug info split out first
#   scripts/package.sh --debug   bundles the debug build (`--features
#                                tauri/custom-protocol`), as is
#   scripts/package.sh --debug --prebuilt
#                                bundles the debug binaries already in the
#                                target folder (scripts/test.sh builds them
#                                once, in the workspace's one feature
#                                resolution) without building again
# The packages land in $CARGO_TARGET_DIR/{release,debug}/bundle/{deb,rpm}/.
#
# Release binaries are built with line tables (Cargo.toml's release profile:
# perf and backtraces on a developer's machine need them) and shipped without
# them: objcopy moves the debug sections into `<binary>.debug` beside the
# build and leaves a .gnu_debuglink, so a backtrace of a crash keeps its
# function names from the symbol table, and gets file:line back when the
# .debug file sits beside the binary or under /usr/lib/debug/usr/bin/.
# (`split-debuginfo = "packed"` does not do this on Linux: the .dwp holds the
# split units, but the line tables, nearly all of the 140 MB, stay in the
# executable.)
set -euo pipefail
cd "$(dirname "$0")/.."

PROFILE=release
PREBUILT=0
for arg in "$@"; do
  case "$arg" in
    --debug) PROFILE=debug ;;
    --prebuilt) PREBUILT=1 ;;
    *) echo "package: unknown option $arg (use --debug, --prebuilt)" >&2; exit 2 ;;
  esac
done
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
OUT="$CARGO_TARGET_DIR/$PROFILE"
TAURI=ui/node_modules/.bin/tauri

[ -x "$TAURI" ] || ./scripts/setup.sh
command -v objcopy >/dev/null || { echo "package: objcopy (binutils) is missing: apt-get install binutils" >&2; exit 1; }

# The binaries embed ui/dist: a release always gets a fresh UI build; the
# debug bundle takes the UI scripts/test.sh has just built.
if [ "$PROFILE" = release ] || [ ! -f ui/dist/index.html ]; then
  echo "package: building the UI"
  npm --prefix ui run --silent build -- --logLevel warn
fi
CARGO_PROFILE=()
[ "$PROFILE" = release ] && CARGO_PROFILE=(--release)
if [ "$PREBUILT" -eq 1 ]; then
  for bin in maskflow-desktop maskflow; do
    [ -x "$OUT/$bin" ] || { echo "package: --prebuilt, but $OUT/$bin is not built" >&2; exit 1; }
  done
else
  echo "package: building the $PROFILE binaries"
  cargo build --locked -q "${CARGO_PROFILE[@]}" -p maskflow-desktop --features tauri/custom-protocol
  cargo build --locked -q "${CARGO_PROFILE[@]}" -p maskflow-server --bin maskflow
fi

# Moves a binary's debug sections into <binary>.debug beside it. A binary
# cargo has not rebuilt since the last split has no .debug_info or
# .debug_line left and is skipped (the tiny .debug_gdb_scripts is loaded with
# the program, so it stays; testing for any .debug_ section would split
# again and overwrite the .debug file with an empty one).
split_debug_info() {
  local bin=$1
  if objdump -h "$bin" | grep -E ' \.debug_(info|line) ' >/dev/null; then
    objcopy --only-keep-debug --compress-debug-sections=zlib "$bin" "$bin.debug"
    objcopy --strip-debug --remove-section=.gnu_debuglink --add-gnu-debuglink="$bin.debug" "$bin"
  fi
}
if [ "$PROFILE" = release ]; then
  split_debug_info "$OUT/maskflow-desktop"
  split_debug_info "$OUT/maskflow"
fi

# uv, fetched once per target folder (scripts/install-uv.sh).
UV="$CARGO_TARGET_DIR/package-uv/uv"
echo "package: uv"
./scripts/install-uv.sh "$UV" >/dev/null

# The CLI and uv go into the same packages; their paths depend on the target
# folder and profile, so they are merged into the config here rather than
# written in tauri.conf.json.
EXTRA=$(python3 -c 'import json, sys
files = {"/usr/bin/maskflow": sys.argv[1], "/usr/lib/maskflow/uv": sys.argv[2]}
print(json.dumps({"bundle": {"linux": {"deb": {"files": files}, "rpm": {"files": files}}}}))' "$OUT/maskflow" "$UV")

BUNDLE_ARGS=(bundle --ci --bundles deb,rpm --no-sign --no-binary-patching --config "$EXTRA")
[ "$PROFILE" = debug ] && BUNDLE_ARGS+=(--debug)
echo "package: bundling"
rm -rf "$OUT/bundle/deb" "$OUT/bundle/rpm"
"$TAURI" "${BUNDLE_ARGS[@]}" >"$OUT/bundle.log" 2>&1 || { cat "$OUT/bundle.log" >&2; exit 1; }

for pkg in "$OUT"/bundle/deb/*.deb "$OUT"/bundle/rpm/*.rpm; do
  echo "package: $pkg ($(du -h "$pkg" | cut -f1))"
done
