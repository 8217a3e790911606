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

# A llama-quantize Q4_K_M file (mixed Q4_K/Q6_K, ~0.8 MB) of a random make-model
# F16 model; tests/backend/quantized_model_test.cc regenerates the F16 model from the
# same shape and seed and compares logits. Needs seer's binary: SEER_BIN (default
# build/seer).
seer=${SEER_BIN:-$repo/build/seer}
quantize=$(find "$build" -name llama-quantize -type f -print -quit)
if [ -x "$seer" ] && [ -n "$quantize" ]; then
  "$seer" make-model --layers 2 --dim 256 --heads 4 --kv-heads 2 --ffn 512 --vocab 300 --context 64 \
    --type f16 --seed 3 --out "$tmp/src-f16.gguf" --quiet
  LD_LIBRARY_PATH="$lib" "$quantize" "$tmp/src-f16.gguf" "$out/llama_q4_k_m.gguf" Q4_K_M 2 > "$tmp/quantize.log" 2>&1
else
  echo "skipping llama_q4_k_m.gguf: no $seer or llama-quantize under $build" >&2
fi
