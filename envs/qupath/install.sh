#!/usr/bin/env bash
# Install the official QuPath release for Linux (pinned version, checked against a pinned
# SHA-512) for sciagent-gym's SciGUI-QuPath-v0. Run on a machine with internet access, or inside
# the QEMU guest image build. Idempotent: an existing verified install is left alone.
#
#   install.sh [--prefix DIR] [--force] [--help]
#
# Layout: DIR/QuPath-v0.5.1/...  (the unpacked release)  and  DIR/bin/QuPath -> .../bin/QuPath
# Default DIR: ${SCIAGENT_QUPATH_HOME:-$HOME/.local/share/sciagent-gym/qupath}
# (as root for a shared or guest install: --prefix /usr/local/lib/sciagent-gym/qupath).
# Overrides for testing and mirrors: QUPATH_URL (any curl URL, e.g. file:///path.tar.xz) and
# QUPATH_SHA512.
set -euo pipefail

VERSION="0.5.1"
URL="${QUPATH_URL:-https://github.com/qupath/qupath/releases/download/v${VERSION}/QuPath-v${VERSION}-Linux.tar.xz}"
# As recorded by Arch Linux's qupath-bin PKGBUILD for this release asset.
SHA512="${QUPATH_SHA512:-4c274f2c3362751b6bdad1ad92b2dd8c3469c4deb038332a679742c55eba269831168a0c3d8a627d751a8fc340a7553979494ab839f15f146dc633a756e62025}"
PREFIX="${SCIAGENT_QUPATH_HOME:-${HOME:-/root}/.local/share/sciagent-gym/qupath}"
FORCE=0

die() { echo "install-qupath: error: $*" >&2; exit 1; }
usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; PREFIX="$2"; shift 2 ;;
        --prefix=*) PREFIX="${1#--prefix=}"; shift ;;
        --force) FORCE=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done

[ "$(uname -s)" = Linux ] || die "this recipe installs the Linux release; QuPath for $(uname -s) is at https://qupath.github.io"
[ "$(uname -m)" = x86_64 ] || die "the official QuPath Linux release is x86_64 only (this machine: $(uname -m))"
for tool in curl tar xz sha512sum; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is needed (apt-get install -y curl tar xz-utils coreutils)"
done

DEST="$PREFIX/QuPath-v$VERSION"
LINK="$PREFIX/bin/QuPath"

verify_start() {
    # Headless start: the 'script' subcommand runs Groovy without opening a window.
    local out
    out="$(HOME="${TMPDIR:-/tmp}/sciagent-qupath-check.$$" "$1" script -c 'println "sciagent-qupath-ok"' 2>&1)" \
        || { rm -rf "${TMPDIR:-/tmp}/sciagent-qupath-check.$$"; echo "$out" | tail -n 20 >&2; return 1; }
    rm -rf "${TMPDIR:-/tmp}/sciagent-qupath-check.$$"
    case "$out" in *sciagent-qupath-ok*) return 0 ;; *) echo "$out" | tail -n 20 >&2; return 1 ;; esac
}

if [ "$FORCE" = 0 ] && [ -x "$LINK" ] && [ -f "$DEST/.sciagent-verified" ]; then
    echo "QuPath $VERSION is already installed: $LINK"
    exit 0
fi

mkdir -p "$PREFIX" || die "cannot create $PREFIX"
WORK="$(mktemp -d "$PREFIX/.download.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
ARCHIVE="$WORK/QuPath-v$VERSION-Linux.tar.xz"

echo "downloading $URL"
curl -fL --retry 3 -o "$ARCHIVE" "$URL" || die "download failed: $URL"
echo "$SHA512  $ARCHIVE" | sha512sum -c --status \
    || die "checksum mismatch for $URL (expected sha512 $SHA512); not installing"

mkdir -p "$WORK/unpacked"
tar -xJf "$ARCHIVE" -C "$WORK/unpacked" || die "cannot unpack $ARCHIVE"
# The release unpacks to QuPath-v0.5.1-Linux/QuPath/bin/QuPath; find it rather than assume.
EXE_REL="$(cd "$WORK/unpacked" && find . -path '*/bin/QuPath' -type f | head -n 1)"
[ -n "$EXE_REL" ] || die "no */bin/QuPath in the archive"
APP_REL="$(dirname "$(dirname "$EXE_REL")")"

rm -rf "$DEST"
mv "$WORK/unpacked/$APP_REL" "$DEST"
chmod +x "$DEST/bin/QuPath"
mkdir -p "$PREFIX/bin"
ln -sfn "$DEST/bin/QuPath" "$LINK"

echo "checking that QuPath starts (headless)"
verify_start "$LINK" || die "QuPath was unpacked to $DEST but does not start (see the output above)"
touch "$DEST/.sciagent-verified"
echo "QuPath $VERSION installed: $LINK"
echo "sciagent-gym finds it there; or set QUPATH_EXE=$LINK"
