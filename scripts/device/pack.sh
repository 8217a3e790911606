#!/usr/bin/env bash
# Packs what scripts/device/amx_check.sh needs into build-device/ for a machine that has
# AMX but no packages and no network (the lent device's host CPU): seer's stripped
# binaries built here (-march=native of this CPU, which the device's runs), the shared
# libraries they load, and llama.cpp's llama-bench, llama-batched-bench and
# llama-quantize built statically for AVX-512 + AMX, with clang (GCC 12's build of
# llama.cpp's AMX kernel dies with SIGILL: docs/results/amx_rows16.md; clang spells the
# AMX macros __AMXINT8__, which llama.cpp does not test, hence the -D):
#
#   cmake -S LLAMA_SRC -B LLAMA_SRC/build-amx -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
#     -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
#     -DCMAKE_C_FLAGS="-D__AMX_INT8__=1 -D__AMX_TILE__=1" -DCMAKE_CXX_FLAGS="-D__AMX_INT8__=1 -D__AMX_TILE__=1" \
#     -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON \
#     -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON -DGGML_AMX_TILE=ON -DGGML_AMX_INT8=ON \
#     -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
#     -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc"
#   ninja -C LLAMA_SRC/build-amx llama-bench llama-batched-bench llama-quantize
#
#   scripts/device/pack.sh LLAMA_SRC/build-amx/bin     # then run amx_check.sh there, carrying build-device
set -euo pipefail
cd "$(dirname "$0")/../.."
llama=${1:?usage: $0 LLAMA_AMX_BIN_DIR}
rm -rf build-device
mkdir -p build-device/stage/bin build-device/stage/lib build-device/stage/llama
for b in seer tests/test_kernels tests/test_backend benchmarks/bench_qdot; do
  strip -o "build-device/stage/bin/$(basename "$b")" "build/$b"
done
ldd build/seer build/tests/test_backend | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libssl|libcrypto|libz)\.so' | xargs -I{} cp -L {} build-device/stage/lib/
for b in llama-bench llama-batched-bench llama-quantize; do strip -o "build-device/stage/llama/$b" "$llama/$b"; done
tar -C build-device/stage -czf build-device/pack.tar.gz .
rm -rf build-device/stage
cp scripts/device/amx_check.sh build-device/
ls -l build-device
