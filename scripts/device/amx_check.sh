#!/usr/bin/env bash
# The AMX checks, run from the repository root on a machine with AMX, from the
# build-device/ that scripts/device/pack.sh made (SEER_BUILT_AT: the checkout it was
# built in, /work/main by default): the kernel tests (the AMX entry
# against the scalar reference and the AVX-512 entry's bits), the reference-logit and
# perplexity tests, bench_qdot for the 32-element types, and seer against llama.cpp
# (both with AMX) on llama-125m and llama-1b, with seer's AVX-512 tiles (SEER_NO_AMX=1)
# beside. Everything goes to $OUT (default /tmp/amx-out).
#
#   scripts/device/amx_check.sh [all | kernels | compare | repeat]
set -u
what=${1:-all}
root=$PWD dev=$PWD/build-device out=${OUT:-/tmp/amx-out} threads=${THREADS:-2}
mkdir -p "$out" "$dev/x"
[ -e "$dev/x/bin/seer" ] || tar -C "$dev/x" -xzf "$dev/pack.tar.gz"
export LD_LIBRARY_PATH=$dev/x/lib
# The test binaries find the sources through the path they were built at.
built_at=${SEER_BUILT_AT:-/work/main}
[ -e "$built_at" ] || { mkdir -p "$(dirname "$built_at")" && ln -s "$root" "$built_at"; }
command -v python3 >/dev/null || export PATH=/opt/torch/.venv/bin:$PATH
mkdir -p build && cp "$dev/x/bin/seer" build/seer
log() { echo "== $(date +%T) $*" | tee -a "$out/progress.log"; }
step() { local name=$1; shift; log "$name"; "$@" >"$out/$name.log" 2>&1; echo "rc=$?" >>"$out/$name.log"; tail -2 "$out/$name.log"; }

if [ "$what" = all ] || [ "$what" = kernels ]; then
log cpu
{ lscpu | grep -E 'Model name|^Model:|^CPU\(s\)'; grep -o 'amx[a-z0-9_]*' /proc/cpuinfo | sort -u | tr '\n' ' '; echo; } >"$out/cpu.txt"
cat "$out/cpu.txt"
step test_kernels "$dev/x/bin/test_kernels"
step test_backend "$dev/x/bin/test_backend" --gtest_filter='*Reference*:*Quantized*:*Perplexity*'
step bench_qdot "$dev/x/bin/bench_qdot" --types q8_0,q4_0,q5_0,iq4_nl --batches 1,4,8,16,64,512 --rows 2048 --cols 2048
fi
[ "$what" = kernels ] && exit 0
if [ "$what" = repeat ]; then  # the main cases once more, llama-1b's pp512 in all three alternated
  step vs_llamacpp_125m_repeat scripts/vs_llamacpp.sh "$dev/x/llama" --shape llama-125m --recipes Q8_0 --threads "$threads" \
    --tag amx_repeat --out "$out"
  m=$(mktemp -d)
  build/seer make-model --shape llama-1b --type f16 --seed 1 -q -o "$m/f16.gguf"
  "$dev/x/llama/llama-quantize" "$m/f16.gguf" "$m/q8_0.gguf" Q8_0 >/dev/null 2>&1
  for round in 1 2; do
    log "llama-1b pp512 round $round"
    "$dev/x/llama/llama-bench" -m "$m/q8_0.gguf" -p 512 -n 0 -r 2 -t "$threads" -o jsonl 2>/dev/null >>"$out/pp512_1b_llama.jsonl"
    for amx in 1 0; do
      SEER_NO_AMX=$((1 - amx)) build/seer bench model -m "$m/q8_0.gguf" -p 512 -n 0 --npp 8 --ntg 1 --npl 1 -r 2 \
        -t "$threads" --json 2>/dev/null | grep pp512 | sed "s/^{/{\"amx\": $amx, /" >>"$out/pp512_1b_seer.jsonl"
    done
  done
  rm -rf "$m"
  log done
  exit 0
fi
step vs_llamacpp_125m scripts/vs_llamacpp.sh "$dev/x/llama" --shape llama-125m --recipes Q8_0,Q4_K_M --threads "$threads" \
  --tag amx --out "$out"
# One thread on llama-1b's matrices, which do not fit in L2.
step bench_qdot_1b "$dev/x/bin/bench_qdot" --types q8_0 --batches 64,512 --rows 5632 --cols 2048
# seer with and without its AMX tile, alternated, on the same files.
m=$(mktemp -d)
for shape in llama-125m llama-1b; do
  build/seer make-model --shape $shape --type f16 --seed 1 -q -o "$m/f16.gguf"
  "$dev/x/llama/llama-quantize" "$m/f16.gguf" "$m/$shape-q8_0.gguf" Q8_0 >/dev/null 2>&1
  rm "$m/f16.gguf"
done
for shape in llama-125m llama-1b; do
  batched="--npp 128 --ntg 32 --npl 32"
  [ $shape = llama-1b ] && batched="--npp 32 --ntg 8 --npl 8"  # pp512 is the case there
  for round in 1 2; do
    for amx in 1 0; do
      log "$shape seer amx=$amx round $round"
      SEER_NO_AMX=$((1 - amx)) build/seer bench model -m "$m/$shape-q8_0.gguf" -p 512 -n 0 $batched \
        -r 2 -t "$threads" --json 2>/dev/null | sed "s/^{/{\"shape\": \"$shape\", \"amx\": $amx, /" >>"$out/seer_amx_ab.jsonl"
    done
  done
  log "$shape llama-bench pp512"
  "$dev/x/llama/llama-bench" -m "$m/$shape-q8_0.gguf" -p 512 -n 0 -r 2 -t "$threads" -o json >"$out/llama_bench_$shape.json" 2>/dev/null
done
rm -rf "$m"
log done
