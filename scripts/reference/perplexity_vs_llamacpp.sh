#!/usr/bin/env bash
# seer perplexity against llama.cpp's llama-perplexity on the same files and text.
#
#   scripts/reference/perplexity_vs_llamacpp.sh LLAMA_BIN_DIR [OUT_DIR]
#
# LLAMA_BIN_DIR holds llama-perplexity and llama-quantize (a llama.cpp build). Models:
# stories260K (trained, F32, from ../shared) and "kq-tiny", a random-weight Llama of
# 2 layers, dim 256, FFN 512 (every matrix a whole number of 256-element super-blocks)
# written by `seer make-model` in F16 and quantized by llama-quantize with each recipe.
# Text: the outputs of the first 300 Alpaca records joined by blank lines. Each file's
# per-token logits are compared too: llama.cpp's (scripts/reference/llama_logits.cc,
# built against the llama.cpp source at $LLAMA_CPP, default LLAMA_BIN_DIR/../..) for 16
# tokens, against seer's in one prefill and token by token (test_backend's
# ArchitectureReference run on these references). Writes
# OUT_DIR/perplexity_vs_llamacpp.{json,md} (default docs/results) and, with
# --update-test-refs, tests/data/llamacpp_ref/perplexity.json (what the suite checks
# without llama.cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."
llama=${1:?usage: $0 LLAMA_BIN_DIR [OUT_DIR] [--update-test-refs]}
out=${2:-docs/results}
update_refs=0
for a in "$@"; do [ "$a" = --update-test-refs ] && update_refs=1; done
seer=build/seer
shared=../shared/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
LLAMA_CPP=${LLAMA_CPP:-$(cd "$llama/../.." && pwd)}
source scripts/reference/reference_logits_lib.sh
build_llama_logits "$LLAMA_CPP"
mkdir -p "$work/refs"
ctx=128
chunks=16
recipes=(Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS)

python3 - "$shared/alpaca/alpaca_data.json" "$work/text.txt" <<'PY'
import json, sys
records = json.load(open(sys.argv[1], encoding="utf-8"))
open(sys.argv[2], "w", encoding="utf-8").write("\n\n".join(r["output"] for r in records[:300]) + "\n")
PY

$seer make-model --shape tiny --dim 256 --ffn 512 --heads 4 --kv-heads 2 --type f16 --seed 1 -q -o "$work/kq-tiny-F16.gguf"
models=("stories260K:F32:$shared/models/stories260K.gguf" "kq-tiny:F16:$work/kq-tiny-F16.gguf")
for r in "${recipes[@]}"; do
  if "$llama/llama-quantize" "$work/kq-tiny-F16.gguf" "$work/kq-tiny-$r.gguf" "$r" >"$work/quantize-$r.log" 2>&1; then
    models+=("kq-tiny:$r:$work/kq-tiny-$r.gguf")
  else
    echo "llama-quantize $r failed (see below); skipped" >&2
    tail -3 "$work/quantize-$r.log" >&2
  fi
done

rows="$work/rows.jsonl"
: >"$rows"
for m in "${models[@]}"; do
  IFS=: read -r name recipe path <<<"$m"
  echo "== $name $recipe" >&2
  # Tolerance as the committed references: 0.01 for float weights, 0.1 quantized.
  case $recipe in F32 | F16) tol=0.01 ;; *) tol=0.1 ;; esac
  write_reference_logits "$LLAMA_CPP" "$path" "file=$path" "$tol" "$work/refs/$name-$recipe.txt" ||
    echo "llama_logits failed on $name $recipe" >&2
  # -b $ctx: one sequence per pass (the same scores). With its default of 16 sequences
  # per pass llama-perplexity here now and then exits 0 without its final estimate;
  # up to 3 tries all the same.
  llama_ppl=""
  for _ in 1 2 3; do
    "$llama/llama-perplexity" -m "$path" -f "$work/text.txt" -c $ctx -b $ctx --chunks $chunks -t 2 >"$work/llama.log" 2>&1 || true
    llama_ppl=$(sed -n 's/.*Final estimate: PPL = \([0-9.]*\).*/\1/p' "$work/llama.log")
    [ -n "$llama_ppl" ] && break
    echo "llama-perplexity gave no estimate ($(tail -1 "$work/llama.log")); again" >&2
  done
  seer_json=$($seer perplexity -m "$path" -f "$work/text.txt" --ctx $ctx --chunks $chunks -t 2 --json 2>"$work/seer.err" || true)
  seer_err=$(tail -1 "$work/seer.err")
  $seer inspect --json "$path" >"$work/inspect.json" 2>/dev/null || echo '{}' >"$work/inspect.json"
  python3 - "$name" "$recipe" "${llama_ppl:-}" "$seer_json" "$seer_err" "$work/inspect.json" >>"$rows" <<'PY'
import collections, json, sys
name, recipe, llama, seer, err = sys.argv[1:6]
row = {"model": name, "recipe": recipe, "llama_ppl": float(llama) if llama else None}
inspect = json.load(open(sys.argv[6]))
row["loads"] = bool(inspect.get("loadable"))
# The matrix types the recipe wrote (norms are F32 in every file), most tensors first.
types = collections.Counter(t["type"] for t in inspect.get("tensors", []) if len(t["shape"]) > 1)
row["matrix_types"] = [f"{t} x{n}" for t, n in types.most_common()]
if seer.strip():
    row["seer_ppl"] = json.loads(seer)["perplexity"]
else:
    row["seer_error"] = err
if row.get("seer_ppl") and row["llama_ppl"]:
    row["rel_diff"] = row["seer_ppl"] / row["llama_ppl"] - 1
print(json.dumps(row))
PY
done

echo "== logits: test_backend ArchitectureReference on these files" >&2
SEER_REFERENCE_LOGITS_DIR="$work/refs" build/tests/test_backend --gtest_filter='Architectures/ArchitectureReference.*' \
  >"$work/logits.log" 2>&1 || echo "some logits are beyond tolerance (see the table)" >&2

mkdir -p "$out"
python3 - "$rows" "$out" "$ctx" "$chunks" "$update_refs" "$work/logits.log" <<'PY'
import json, os, platform, re, subprocess, sys
rows_path, out, ctx, chunks, update = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
rows = [json.loads(l) for l in open(rows_path)]
# "kq-tiny-Q4_K_M (prefill): max |logit| 1.9, max |seer - llama.cpp| 0.012 (tolerance 0.1)"
logit_line = re.compile(r"^(\S+) \((prefill|decode)\): max \|logit\| ([0-9.e+-]+), max \|seer - llama.cpp\| ([0-9.e+-]+) \(tolerance ([0-9.e+-]+)\)")
logits = {}
for line in open(sys.argv[6]):
    m = logit_line.match(line)
    if m:
        logits.setdefault(m[1], {})[m[2]] = float(m[4])
        logits[m[1]].update(max_logit=float(m[3]), tolerance=float(m[5]))
for r in rows:
    got = logits.get(f"{r['model']}-{r['recipe']}", {})
    r.update({f"max_dlogit_{k}": v for k, v in got.items() if k in ("prefill", "decode")})
    if got:
        r["max_logit"], r["logit_tolerance"] = got["max_logit"], got["tolerance"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
load = open("/proc/loadavg").read().split()[0]
meta = {"ctx": ctx, "chunks": chunks, "text": "Alpaca outputs 0..299 joined by blank lines", "cpu": cpu,
        "load_avg_1min_at_end": float(load), "command": "scripts/reference/perplexity_vs_llamacpp.sh LLAMA_BIN_DIR"}
json.dump({"meta": meta, "rows": rows}, open(os.path.join(out, "perplexity_vs_llamacpp.json"), "w"), indent=1)
lines = ["# seer perplexity vs llama.cpp's llama-perplexity", "",
         f"Same GGUF files and text, ctx {ctx}, {chunks} chunks, 2 threads; {cpu}; 1-min load average {load} at the end.",
         f"Regenerate: `{meta['command']}`.", "",
         "Max |Δlogit|: every logit of 16 positions of a 16-token prompt, seer (one prefill / token by token) "
         "against llama.cpp on the same file; the largest |logit| is in the JSON.", "",
         "| model | recipe | matrix types (tensors) | loads | llama-perplexity | seer perplexity | seer / llama - 1 | max \\|Δlogit\\| prefill / decode (tolerance) |",
         "|---|---|---|---|---|---|---|---|"]
def dlogit(r):
    if "max_dlogit_prefill" not in r:
        return "not compared"
    return f"{r['max_dlogit_prefill']:.3g} / {r.get('max_dlogit_decode', float('nan')):.3g} ({r['logit_tolerance']:g})"
for r in rows:
    seer = f"{r['seer_ppl']:.4f}" if "seer_ppl" in r else f"refused: {r.get('seer_error', '')}"
    diff = f"{100 * r['rel_diff']:+.3f} %" if "rel_diff" in r else "-"
    llama = f"{r['llama_ppl']:.4f}" if r["llama_ppl"] else "failed"
    types = ", ".join(r.get("matrix_types", []))
    lines.append(f"| {r['model']} | {r['recipe']} | {types} | {'yes' if r.get('loads') else 'no'} | {llama} | {seer} | {diff} | {dlogit(r)} |")
open(os.path.join(out, "perplexity_vs_llamacpp.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
if update:
    refs = {"ctx": ctx, "chunks": chunks, "text": meta["text"],
            "models": {f"{r['model']}:{r['recipe']}": r["llama_ppl"] for r in rows
                       if r["recipe"] in ("F32", "F16") and r["llama_ppl"]}}
    os.makedirs("tests/data/llamacpp_ref", exist_ok=True)
    json.dump(refs, open("tests/data/llamacpp_ref/perplexity.json", "w"), indent=1)
PY
