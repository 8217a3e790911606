#!/usr/bin/env bash
# Perplexity of seer and llama.cpp's llama-perplexity on the models of the logits
# references (tests/backend/reference_logits: every architecture in F16, Q8_0 and a
# K-quant, and a llama-quantize Q4_K_M file) and the same text (default: the first 6000
# bytes of docs/architecture.md), ctx 128, f32 K/V. Prints one line per case and writes
# OUT_DIR/perplexity_architectures.{json,md} (default docs/results). Needs llama.cpp
# built at $LLAMA_CPP (default /work/llama.cpp) and seer at build/.
#
# usage: scripts/reference/compare_perplexity.sh [TEXT_FILE] [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
LLAMA_CPP=${LLAMA_CPP:-/work/llama.cpp}
SEER=${SEER:-build/seer}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source scripts/reference/reference_logits_lib.sh
TEXT=${1:-}
OUT=${2:-docs/results}
if [[ -z $TEXT ]]; then
  TEXT=$WORK/text.txt
  head -c 6000 docs/architecture.md >"$TEXT"
fi
llama_ppl() {  # MODEL CTX; its final line is sometimes missing from the log: up to 3 runs
  local theirs=""
  for _ in 1 2 3; do
    # Into a file first: read through a pipe, llama-perplexity's log was sometimes cut short.
    "$LLAMA_CPP/build/bin/llama-perplexity" -m "$1" -f "$TEXT" -c "$2" -t 2 -ctk f32 -ctv f32 >"$WORK/ppl.log" 2>&1
    theirs=$(grep -oE 'Final estimate: PPL = [0-9.]+' "$WORK/ppl.log" | grep -oE '[0-9.]+$')
    [[ -n $theirs ]] && break
  done
  echo "$theirs"
}
printf '%-24s %12s %12s %9s\n' case seer llama.cpp 'rel diff'
: >"$WORK/rows.jsonl"
for f in tests/backend/reference_logits/*.txt; do
  name=$(basename "$f" .txt)
  make_reference_model "$(sed -n 's/^model //p' "$f")" "$WORK/m.gguf" || continue
  # ctx 128, or the model's own context where it is shorter (seer refuses to run past
  # it; llama.cpp would, with a warning): both programs at the same ctx.
  ctx=128
  ours=$("$SEER" perplexity -m "$WORK/m.gguf" -f "$TEXT" -c $ctx -t 2 --kv-type f32 2>"$WORK/seer.err" | tail -1)
  limit=$(sed -n "s/.*exceeds the model's context length of \([0-9]*\).*/\1/p" "$WORK/seer.err")
  if [[ -n $limit ]]; then
    ctx=$limit
    ours=$("$SEER" perplexity -m "$WORK/m.gguf" -f "$TEXT" -c $ctx -t 2 --kv-type f32 2>/dev/null | tail -1)
  fi
  theirs=$(llama_ppl "$WORK/m.gguf" $ctx)
  printf '%-24s %12s %12s\n' "$name" "${ours:-?}" "${theirs:-?}"
  echo "{\"case\": \"$name\", \"ctx\": $ctx, \"seer\": ${ours:-null}, \"llama_cpp\": ${theirs:-null}}" >>"$WORK/rows.jsonl"
done

mkdir -p "$OUT"
python3 - "$WORK/rows.jsonl" "$OUT" "$(git -C "$LLAMA_CPP" describe --always --tags 2>/dev/null || echo unknown)" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
out, version = sys.argv[2], sys.argv[3]
for r in rows:
    if r["seer"] and r["llama_cpp"]:
        r["rel_diff"] = r["seer"] / r["llama_cpp"] - 1
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
meta = {"llama_cpp": version, "ctx": 128, "kv": "f32", "text": "first 6000 bytes of docs/architecture.md",
        "cpu": cpu, "command": "scripts/reference/compare_perplexity.sh"}
json.dump({"meta": meta, "rows": rows}, open(os.path.join(out, "perplexity_architectures.json"), "w"), indent=1)
lines = ["# Perplexity of every architecture reference model: seer vs llama-perplexity", "",
         f"The models of tests/backend/reference_logits (random weights, vocabulary 259), ctx 128 (or the model's "
         f"context where shorter), f32 K/V, "
         f"{meta['text']}; llama.cpp {version}. Regenerate: `{meta['command']}`.", "",
         "| case | ctx | seer | llama.cpp | seer / llama.cpp - 1 |", "|---|---|---|---|---|"]
for r in rows:
    diff = f"{100 * r['rel_diff']:+.3f} %" if "rel_diff" in r else "failed"
    lines.append(f"| {r['case']} | {r['ctx']} | {r['seer'] or '-'} | {r['llama_cpp'] or '-'} | {diff} |")
worst = max((abs(r["rel_diff"]) for r in rows if "rel_diff" in r), default=float("nan"))
lines += ["", f"Largest |difference|: {100 * worst:.3f} % over {sum('rel_diff' in r for r in rows)} cases."]
open(os.path.join(out, "perplexity_architectures.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines[-1:]))
PY
