#!/usr/bin/env bash
# Perplexity of seer and llama.cpp's llama-perplexity on the same random-weight
# models (the cases of make_reference_logits.sh, F16 and Q8_0) and the same text
# (default: the first 6000 bytes of docs/architecture.md), ctx 128: prints one line
# per case with both values and their relative difference. Needs llama.cpp built at
# $LLAMA_CPP (default /work/llama.cpp) and seer at build/.
#
# usage: scripts/reference/compare_perplexity.sh [TEXT_FILE]
set -uo pipefail
cd "$(dirname "$0")/../.."
LLAMA_CPP=${LLAMA_CPP:-/work/llama.cpp}
SEER=${SEER:-build/seer}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
TEXT=${1:-}
if [[ -z $TEXT ]]; then
  TEXT=$WORK/text.txt
  head -c 6000 docs/architecture.md >"$TEXT"
fi
printf '%-22s %12s %12s %9s\n' case seer llama.cpp 'rel diff'
for f in tests/backend/reference_logits/*.txt; do
  name=$(basename "$f" .txt)
  opts=$(sed -n 's/^model //p' "$f")
  args=()
  for kv in $opts; do
    k=${kv%%=*} v=${kv#*=}
    case $k in
      arch) args+=(--arch "$v") ;; type) args+=(--type "$v") ;; seed) args+=(--seed "$v") ;;
      head_dim) args+=(--head-dim "$v") ;; layers) args+=(--layers "$v") ;; rope_base) args+=(--rope-base "$v") ;;
      tied) [[ $v == 1 ]] && args+=(--tied) ;; llama3_rope) [[ $v == 1 ]] && args+=(--llama3-rope) ;;
      longrope) [[ $v == 1 ]] && args+=(--longrope) ;; rope_dim) args+=(--rope-dim "$v") ;;
      experts) args+=(--experts "$v") ;; experts_used) args+=(--experts-used "$v") ;;
      sliding_window) args+=(--sliding-window "$v") ;; swa_period) args+=(--swa-period "$v") ;;
      attn_softcap) args+=(--attn-softcap "$v") ;; final_softcap) args+=(--final-softcap "$v") ;;
    esac
  done
  "$SEER" make-model -q "${args[@]}" -o "$WORK/m.gguf"
  ours=$("$SEER" perplexity -m "$WORK/m.gguf" -f "$TEXT" -c 128 -t 2 --kv-type f32 2>/dev/null | tail -1)
  # Into a file first: read through a pipe, llama-perplexity's log was sometimes cut short.
  "$LLAMA_CPP/build/bin/llama-perplexity" -m "$WORK/m.gguf" -f "$TEXT" -c 128 -t 2 -ctk f32 -ctv f32 >"$WORK/ppl.log" 2>&1
  theirs=$(grep -oE 'Final estimate: PPL = [0-9.]+' "$WORK/ppl.log" | grep -oE '[0-9.]+$')
  if [[ -z $theirs ]]; then  # its final line is sometimes missing from the log: run once more
    "$LLAMA_CPP/build/bin/llama-perplexity" -m "$WORK/m.gguf" -f "$TEXT" -c 128 -t 2 -ctk f32 -ctv f32 >"$WORK/ppl.log" 2>&1
    theirs=$(grep -oE 'Final estimate: PPL = [0-9.]+' "$WORK/ppl.log" | grep -oE '[0-9.]+$')
  fi
  if [[ -z $theirs || -z $ours ]]; then
    printf '%-22s %12s %12s %9s\n' "$name" "${ours:-?}" "${theirs:-?}" "n/a"
    continue
  fi
  rel=$(python3 -c "print(f'{abs($ours - $theirs) / $theirs * 100:.3f} %')")
  printf '%-22s %12s %12s %9s\n' "$name" "$ours" "$theirs" "$rel"
done
