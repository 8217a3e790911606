#!/usr/bin/env bash
# Writes tests/backend/reference_logits/<case>.txt: llama.cpp's logits for random-
# weight GGUFs that `seer make-model` writes, one case per architecture and type.
# Needs llama.cpp built (CPU) at $LLAMA_CPP (default /work/llama.cpp, build/ inside)
# and seer built at build/. The test (test_backend ArchitectureReference) rebuilds
# each GGUF from the recorded options and seed, so it needs neither llama.cpp nor
# the GGUFs.
#
# usage: scripts/reference/make_reference_logits.sh [CASE...]   (default: all cases)
set -euo pipefail
cd "$(dirname "$0")/../.."
LLAMA_CPP=${LLAMA_CPP:-/work/llama.cpp}
OUT=tests/backend/reference_logits
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

source scripts/reference/reference_logits_lib.sh
build_llama_logits "$LLAMA_CPP"

# case name | make-model options (key=value as the test reads them) | tolerance
CASES=(
  "llama-f16|arch=llama type=f16 seed=11|0.01"
  "llama-q8_0|arch=llama type=q8_0 seed=11|0.08"
  "llama3-rope-tied-f16|arch=llama type=f16 seed=12 tied=1 llama3_rope=1|0.01"
  "granite-f16|arch=granite type=f16 seed=21 tied=1|0.002"
  "qwen2-f16|arch=qwen2 type=f16 seed=20 tied=1|0.01"
  "qwen3-f16|arch=qwen3 type=f16 seed=13 head_dim=32 tied=1|0.01"
  "qwen3-q8_0|arch=qwen3 type=q8_0 seed=13 head_dim=32 tied=1|0.08"
  "gemma2-f16|arch=gemma2 type=f16 seed=14 head_dim=32 tied=1 sliding_window=8 attn_softcap=1 final_softcap=2|0.01"
  "gemma2-q8_0|arch=gemma2 type=q8_0 seed=14 head_dim=32 tied=1 sliding_window=8 attn_softcap=1 final_softcap=2|0.08"
  "gemma3-f16|arch=gemma3 type=f16 seed=15 layers=6 rope_base=1000000 head_dim=32 tied=1 sliding_window=8|0.01"
  "phi3-f16|arch=phi3 type=f16 seed=16 longrope=1|0.01"
  "phi3-q8_0|arch=phi3 type=q8_0 seed=16 longrope=1|0.08"
  "phi4mini-f16|arch=phi3 type=f16 seed=17 rope_dim=12 tied=1 longrope=1|0.01"
  "qwen3moe-f16|arch=qwen3moe type=f16 seed=18 head_dim=32 experts=8 experts_used=2|0.01"
  "qwen3moe-q8_0|arch=qwen3moe type=q8_0 seed=18 head_dim=32 experts=8 experts_used=2|0.08"
  "mixtral-f16|arch=llama type=f16 seed=19 experts=4 experts_used=2|0.01"
  "gemma3-q8_0|arch=gemma3 type=q8_0 seed=15 layers=6 rope_base=1000000 head_dim=32 tied=1 sliding_window=8|0.08"
  # K-quants (seer's own quantizer writes the file both run): matrices of 256-element rows.
  "llama-q4_k|arch=llama type=q4_k seed=11 dim=256 ffn=512|0.1"
  "qwen3-q6_k|arch=qwen3 type=q6_k seed=13 dim=256 ffn=512 tied=1|0.1"
  "gemma3-q4_k|arch=gemma3 type=q4_k seed=15 dim=256 ffn=512 layers=6 rope_base=1000000 tied=1 sliding_window=8|0.1"
  "phi3-q5_k|arch=phi3 type=q5_k seed=16 dim=256 ffn=512 longrope=1|0.1"
  "qwen3moe-q4_k|arch=qwen3moe type=q4_k seed=18 dim=256 ffn=256 experts=8 experts_used=2|0.1"
  "llama-iq4_xs|arch=llama type=iq4_xs seed=11 dim=256 ffn=512|0.1"
  # The other types' kernels, and a K-quant for every architecture.
  "llama-q4_0|arch=llama type=q4_0 seed=11|0.1"
  "llama-q4_1|arch=llama type=q4_1 seed=11|0.1"
  "llama-q5_0|arch=llama type=q5_0 seed=11|0.1"
  "llama-q5_1|arch=llama type=q5_1 seed=11|0.1"
  "llama-iq4_nl|arch=llama type=iq4_nl seed=11|0.1"
  "llama-q2_k|arch=llama type=q2_k seed=11 dim=256 ffn=512|0.1"
  "llama-q3_k|arch=llama type=q3_k seed=11 dim=256 ffn=512|0.1"
  "llama3-rope-tied-q4_k|arch=llama type=q4_k seed=12 dim=256 ffn=512 tied=1 llama3_rope=1|0.1"
  "granite-q4_k|arch=granite type=q4_k seed=21 dim=256 ffn=512 tied=1|0.02"
  "qwen2-q4_k|arch=qwen2 type=q4_k seed=20 dim=256 ffn=512 tied=1|0.1"
  "gemma2-q4_k|arch=gemma2 type=q4_k seed=14 dim=256 ffn=512 tied=1 sliding_window=8 attn_softcap=1 final_softcap=2|0.1"
  "mixtral-q4_k|arch=llama type=q4_k seed=19 dim=256 ffn=256 experts=4 experts_used=2|0.1"
  "phi4mini-q4_k|arch=phi3 type=q4_k seed=17 dim=256 ffn=512 rope_dim=12 tied=1 longrope=1|0.1"
  # A file llama-quantize wrote (the Q4_K_M recipe: Q4_K with Q6_K output, attn_v and
  # ffn_down in places), committed since make-model cannot rebuild it.
  "llama-quantize-q4_k_m|file=tests/data/quant_ref/llama_q4_k_m.gguf|0.1"
)

for c in "${CASES[@]}"; do
  IFS='|' read -r name opts tol <<<"$c"
  if (($#)) && [[ " $* " != *" $name "* ]]; then continue; fi
  make_reference_model "$opts" "$WORK/$name.gguf"
  write_reference_logits "$LLAMA_CPP" "$WORK/$name.gguf" "$opts" "$tol" "$OUT/$name.txt"
  echo "wrote $OUT/$name.txt"
done
