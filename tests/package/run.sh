#!/usr/bin/env bash
# The .deb as a user gets it (issue 29): `scripts/package.sh --debug`
# bundles the debug desktop build, `dpkg -i` installs it with nothing but
# the dependencies it declares, the installed app shows its first screen
# under Xvfb (the desktop suite's first test, pointed at /usr/bin), the
# installed CLI answers, it finds the uv the package ships
# (/usr/lib/maskflow/uv, issue 44) and a first message with the manual back
# end gets the validator's prompt, and `dpkg --purge` leaves nothing behind.
# `--prebuilt` bundles the binaries already built (scripts/test.sh's one
# build) instead of building them again.
# Installs into the system, so it needs root (or sudo) and refuses to run
# where a Maskflow package is already installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
fail() {
  echo "package test: $*" >&2
  exit 1
}

./scripts/package.sh --debug "$@"
DEB=$(ls "$CARGO_TARGET_DIR"/debug/bundle/deb/*.deb)
RPM=$(ls "$CARGO_TARGET_DIR"/debug/bundle/rpm/*.rpm)
# An RPM lead starts with these four bytes (no rpm tool on Debian to read more).
[ "$(head -c 4 "$RPM" | od -An -tx1 | tr -d ' ')" = "edabeedb" ] || fail "$RPM is not an RPM package"

NAME=$(dpkg-deb -f "$DEB" Package)
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
echo "package test: $NAME, Depends: $DEPENDS"
for dep in libwebkit2gtk-4.1-0 libgtk-3-0 python3; do
  grep -qw -- "$dep" <<<"$DEPENDS" || fail "the .deb does not declare $dep"
done
dpkg-query -W -f='${Status}' "$NAME" 2>/dev/null | grep -q installed \
  && fail "a $NAME package is already installed here; remove it first (this test installs and purges its own)"
# Files of ours outside dpkg's knowledge would make the check after the purge meaningless.
leftovers() { find /usr /etc /opt -iname '*maskflow*' 2>/dev/null || true; }
[ -z "$(leftovers)" ] || fail "Maskflow files are already under /usr, /etc or /opt: $(leftovers)"

cleanup() { $SUDO dpkg --purge "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT
$SUDO dpkg -i "$DEB" >/dev/null
FILES=$(dpkg -L "$NAME")

# Every shared library the installed binaries load comes from a package the
# declared dependencies pull in, not from something a developer machine
# happens to have (the -dev packages of the build, say).
closure=$(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances $(sed 's/([^)]*)//g; s/,/ /g' <<<"$DEPENDS") \
  | sed -n 's/^\([^ <][^:]*\)\(:.*\)\?$/\1/p; s/^ *[A-Za-z]*Depends: \([^<]*\)$/\1/p' | sort -u)
# Each library by the path ldd gives and its real one, with and without
# /usr (Debian 12 merges /lib into /usr/lib; dpkg knows one of the names),
# looked up in one dpkg -S call: one per library takes minutes.
candidates() {
  local real
  real=$(readlink -f "$1")
  printf '%s\n' "$1" "$real" "${1#/usr}" "/usr$1" "${real#/usr}" "/usr$real"
}
BINS=(/usr/bin/maskflow-desktop /usr/bin/maskflow)
for bin in "${BINS[@]}"; do
  if ldd "$bin" | grep -q 'not found'; then fail "$bin: $(ldd "$bin" | grep 'not found')"; fi
done
LIBS=$(for bin in "${BINS[@]}"; do ldd "$bin" | awk '$3 ~ /^\// { print $3 }'; done | sort -u)
# "package[:arch][, other]: /path" lines, as "/path package".
OWNERS=$(for lib in $LIBS; do candidates "$lib"; done | sort -u | xargs dpkg -S 2>/dev/null \
  | sed -n 's/^\([^:, ]*\).*: \(\/.*\)$/\2 \1/p' || true)
for lib in $LIBS; do
  owner=""
  for path in $(candidates "$lib"); do
    owner=$(awk -v p="$path" '$1 == p { print $2; exit }' <<<"$OWNERS")
    [ -n "$owner" ] && break
  done
  [ -n "$owner" ] || fail "the installed binaries load $lib, which no package owns"
  grep -qx -- "$owner" <<<"$closure" || fail "the installed binaries load $lib from $owner, which the declared dependencies ($DEPENDS) do not pull in"
done

/usr/bin/maskflow --help | grep -q serve || fail "the installed maskflow CLI does not list serve"
/usr/lib/maskflow/uv --version >/dev/null || fail "the uv the package ships (/usr/lib/maskflow/uv) does not start"
# The installed server, on a fresh data folder with no other uv in sight:
# its preflight finds the shipped uv, and a first message (seed 000's call,
# manual back end) is answered with the validator's prompt, not refused.
node tests/package/first-message.mjs /usr/bin/maskflow || fail "the installed server's first message (above)"
MASKFLOW_DESKTOP_BIN=/usr/bin/maskflow-desktop \
  node --test --test-name-pattern='the window shows the builder' tests/desktop/desktop.test.mjs

$SUDO dpkg --purge "$NAME" >/dev/null
trap - EXIT
dpkg-query -W -f='${Status}' "$NAME" 2>/dev/null | grep -q installed && fail "$NAME is still installed after dpkg --purge"
while IFS= read -r f; do
  [ -f "$f" ] || [ -L "$f" ] || continue
  fail "$f is still there after dpkg --purge"
done <<<"$FILES"
[ -z "$(leftovers)" ] || fail "left behind after dpkg --purge: $(leftovers)"
echo "package test: installed, launched and purged $(basename "$DEB")"
