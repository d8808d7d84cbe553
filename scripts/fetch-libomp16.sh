#!/usr/bin/env bash
# Unpacks LLVM 16's OpenMP runtime (Debian package libomp5-16) into third_party/libomp16/
# WITHOUT installing it: installing it would remove libomp 14 and break clang-14 -fopenmp.
# LLVM 16's runtime reports worksharing-loop chunks (the OMPT dispatch callback); tasklens
# preloads it while recording so that any clang or gcc OpenMP binary runs under it.
set -euo pipefail
dest="${1:-$(cd "$(dirname "$0")/.." && pwd)/third_party/libomp16}"
if [ -f "$dest/libomp.so.5" ]; then
  echo "libomp 16 already in $dest"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download libomp5-16 >/dev/null 2>&1) || {
  echo "fetch-libomp16: 'apt-get download libomp5-16' failed (run 'apt-get update' first?)" >&2
  exit 1
}
dpkg -x "$work"/libomp5-16_*.deb "$work/x"
mkdir -p "$dest"
cp -L "$work/x/usr/lib/llvm-16/lib/libomp.so.5" "$dest/libomp.so.5"
echo "libomp 16 unpacked into $dest"
