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

HARNESS=build/llama_logits
if [[ ! -x $HARNESS || scripts/reference/llama_logits.cc -nt $HARNESS ]]; then
  LIBDIR=$LLAMA_CPP/build/bin
  [[ -e $LIBDIR/libllama.so ]] || LIBDIR=$LLAMA_CPP/build/src
  g++ -O2 -std=c++17 scripts/reference/llama_logits.cc -I "$LLAMA_CPP/include" -I "$LLAMA_CPP/ggml/include" \
    -L "$LIBDIR" -L "$LLAMA_CPP/build/ggml/src" -lllama -lggml -lggml-base \
    -Wl,-rpath,"$LIBDIR" -Wl,-rpath,"$LLAMA_CPP/build/ggml/src" -o "$HARNESS"
fi

# 16 prompt tokens of the byte-level vocabulary (ids 3..258 are bytes).
TOKENS=1,75,104,108,108,111,35,122,111,117,108,100,35,104,119,52
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
)

for c in "${CASES[@]}"; do
  IFS='|' read -r name opts tol <<<"$c"
  if (($#)) && [[ " $* " != *" $name "* ]]; then continue; fi
  args=()
  for kv in $opts; do
    k=${kv%%=*} v=${kv#*=}
    case $k in
      arch) args+=(--arch "$v") ;;
      type) args+=(--type "$v") ;;
      seed) args+=(--seed "$v") ;;
      head_dim) args+=(--head-dim "$v") ;;
      tied) [[ $v == 1 ]] && args+=(--tied) ;;
      llama3_rope) [[ $v == 1 ]] && args+=(--llama3-rope) ;;
      shape) args+=(--shape "$v") ;;
      layers) args+=(--layers "$v") ;;
      dim) args+=(--dim "$v") ;;
      ffn) args+=(--ffn "$v") ;;
      longrope) [[ $v == 1 ]] && args+=(--longrope) ;;
      rope_dim) args+=(--rope-dim "$v") ;;
      experts) args+=(--experts "$v") ;;
      experts_used) args+=(--experts-used "$v") ;;
      rope_base) args+=(--rope-base "$v") ;;
      sliding_window) args+=(--sliding-window "$v") ;;
      swa_period) args+=(--swa-period "$v") ;;
      attn_softcap) args+=(--attn-softcap "$v") ;;
      final_softcap) args+=(--final-softcap "$v") ;;
      *) echo "unknown option $k" >&2; exit 1 ;;
    esac
  done
  build/seer make-model -q "${args[@]}" -o "$WORK/$name.gguf"
  "$HARNESS" "$WORK/$name.gguf" "$TOKENS" "$WORK/$name.logits" 2>"$WORK/$name.log" ||
    { cat "$WORK/$name.log" >&2; exit 1; }
  rows=$(wc -l <"$WORK/$name.logits")
  vocab=$(head -1 "$WORK/$name.logits" | wc -w)
  {
    echo "# llama.cpp logits for seer make-model $opts (scripts/reference/make_reference_logits.sh)"
    echo "# llama.cpp $(git -C "$LLAMA_CPP" describe --always --tags 2>/dev/null || echo unknown), f32 K/V, one batch"
    echo "model $opts"
    echo "tokens $TOKENS"
    echo "tolerance $tol"
    echo "logits $rows $vocab"
    # 5 significant digits: rounding moves a logit by < 1e-4, far below the tolerances.
    awk '{ for (i = 1; i <= NF; i++) $i = sprintf("%.5g", $i); print }' "$WORK/$name.logits"
  } >"$OUT/$name.txt"
  echo "wrote $OUT/$name.txt"
done
