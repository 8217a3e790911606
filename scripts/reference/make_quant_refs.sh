#!/usr/bin/env bash
# Regenerates tests/data/quant_ref/ (the GGML quantization reference vectors) with
# llama.cpp's libggml. Usage: scripts/reference/make_quant_refs.sh LLAMA_BUILD_DIR
# LLAMA_BUILD_DIR is a llama.cpp CMake build with shared libraries (libggml-base.so);
# the llama.cpp sources are found through its CMakeCache.txt.
set -euo pipefail
build=$(realpath "${1:?usage: $0 LLAMA_BUILD_DIR}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
lib=$(dirname "$(find "$build" -name 'libggml-base.so' -print -quit)")
[ -n "$lib" ] && [ -d "$src/ggml/include" ] || { echo "no libggml-base.so or ggml headers under $build" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# -ffp-contract=off: the input generator must make the same bits as seer's tests.
g++ -std=c++17 -O2 -ffp-contract=off -I"$src/ggml/include" -I"$repo/tests" \
  "$repo/scripts/reference/ggml_quant_ref.cc" -L"$lib" -lggml-base -Wl,-rpath,"$lib" -o "$tmp/ggml_quant_ref"
out="$repo/tests/data/quant_ref"
mkdir -p "$out"
"$tmp/ggml_quant_ref" "$out"
echo "# llama.cpp $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)" >> "$out/manifest.txt"
