#!/usr/bin/env bash
# Installs what tasklens needs from Debian 12's packages, unpacks LLVM 16's OpenMP runtime next
# to the tree (scripts/fetch-libomp16.sh) and builds everything into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
packages=(build-essential cmake ninja-build pkg-config clang-14 libomp-dev libtbb-dev libcli11-dev
          libfmt-dev nlohmann-json3-dev libzstd-dev liblz4-dev libgtest-dev libbenchmark-dev binutils)
# LLVM's addr2line: binutils' does not see the inlined frames of clang's DWARF 5 (src/symbols).
packages+=(llvm-14)
packages+=(libclang-rt-14-dev)  # libFuzzer and the sanitizers for clang (fuzz/, bench/fuzz.sh)
packages+=(python3-jsonschema)  # e2e_export_test validates exports against a JSON Schema
# tasklens view's tests open the page in headless Chromium through chromedriver.
packages+=(chromium chromium-driver)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
if [ ! -f third_party/libomp16/libomp.so.5 ] && ! apt-cache show libomp5-16 >/dev/null 2>&1; then
  $SUDO apt-get update -qq  # the package lists do not know LLVM 16's runtime yet
fi
bash scripts/fetch-libomp16.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
start=$(date +%s)
cmake --build build -j"$(nproc)"
echo "setup: built ./build/tasklens in $(($(date +%s) - start)) s"
