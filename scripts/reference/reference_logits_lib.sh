# Sourced by the reference scripts: builds scripts/reference/llama_logits.cc against a
# llama.cpp build, writes llama.cpp's logits for a GGUF in the format
# tests/backend/architecture_reference_test.cc reads, and rebuilds a reference's model.

# 16 prompt tokens of the byte-level vocabulary of make-model files (ids 3..258 are bytes).
REFERENCE_TOKENS=1,75,104,108,108,111,35,122,111,117,108,100,35,104,119,52
LLAMA_LOGITS=build/llama_logits

# build_llama_logits LLAMA_CPP_SOURCE_DIR (built in build/ inside)
build_llama_logits() {
  local llama_cpp=$1 libdir
  [[ -x $LLAMA_LOGITS && ! scripts/reference/llama_logits.cc -nt $LLAMA_LOGITS ]] && return
  libdir=$llama_cpp/build/bin
  [[ -e $libdir/libllama.so ]] || libdir=$llama_cpp/build/src
  g++ -O2 -std=c++17 scripts/reference/llama_logits.cc -I "$llama_cpp/include" -I "$llama_cpp/ggml/include" \
    -L "$libdir" -L "$llama_cpp/build/ggml/src" -lllama -lggml -lggml-base \
    -Wl,-rpath,"$libdir" -Wl,-rpath,"$llama_cpp/build/ggml/src" -o "$LLAMA_LOGITS"
}

# write_reference_logits LLAMA_CPP_SOURCE_DIR MODEL.gguf "MODEL-LINE" TOLERANCE OUT.txt
write_reference_logits() {
  local llama_cpp=$1 gguf=$2 opts=$3 tol=$4 out=$5 rows vocab
  "$LLAMA_LOGITS" "$gguf" "$REFERENCE_TOKENS" "$out.logits" 2>"$out.log" || { cat "$out.log" >&2; return 1; }
  rows=$(wc -l <"$out.logits")
  vocab=$(head -1 "$out.logits" | wc -w)
  {
    echo "# llama.cpp logits for $opts ($(basename "$0"))"
    echo "# llama.cpp $(git -C "$llama_cpp" describe --always --tags 2>/dev/null || echo unknown), f32 K/V, one batch"
    echo "model $opts"
    echo "tokens $REFERENCE_TOKENS"
    echo "tolerance $tol"
    echo "logits $rows $vocab"
    # 5 significant digits: rounding moves a logit by < 1e-4, far below the tolerances.
    awk '{ for (i = 1; i <= NF; i++) $i = sprintf("%.5g", $i); print }' "$out.logits"
  } >"$out"
  rm -f "$out.logits" "$out.log"
}

# make_reference_model "MODEL-LINE" OUT.gguf: the model a reference's "model" line names,
# a committed file (file=PATH) or `seer make-model` with the recorded options.
make_reference_model() {
  local opts=$1 out=$2 kv k v file="" args=()
  for kv in $opts; do
    k=${kv%%=*} v=${kv#*=}
    case $k in
      file) file=$v ;;
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
      *) echo "unknown option $k" >&2; return 1 ;;
    esac
  done
  if [[ -n $file ]]; then cp "$file" "$out"; else build/seer make-model -q "${args[@]}" -o "$out"; fi
}
