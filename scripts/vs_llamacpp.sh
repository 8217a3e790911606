#!/usr/bin/env bash
# seer's forward pass against llama.cpp's on the same GGUF files and threads, in one run:
# llama-bench (pp512, tg128) and llama-batched-bench (8 and 32 sequences of 128 prompt
# tokens, then 128 decode steps) next to `seer bench model`, which measures the same
# cases (src/runtime/model_bench.h). Prints seer / llama.cpp per case.
#
#   scripts/vs_llamacpp.sh LLAMA_BIN_DIR [--shape llama-125m] [--recipes Q8_0,Q4_K_M,...]
#                          [--threads 2] [--out docs/results] [--tag T]
#
# The model is `seer make-model --shape SHAPE --type f16` (random weights, seed 1),
# quantized by llama-quantize with each recipe. Writes OUT/vs_llamacpp_SHAPE[_T].{json,md},
# again after each recipe, so a run stopped early keeps the recipes it finished.
set -euo pipefail
cd "$(dirname "$0")/.."
llama=${1:?usage: $0 LLAMA_BIN_DIR [--shape S] [--recipes R1,R2] [--threads N] [--out DIR] [--tag T]}
shift
shape=llama-125m recipes=Q8_0,Q4_K_M,Q5_K_M,Q6_K,IQ4_XS threads=2 out=docs/results tag=
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shape=$2; shift 2 ;;
    --recipes) recipes=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
seer=build/seer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows="$work/rows.jsonl"
: >"$rows"

write_results() {
  mkdir -p "$out"
  python3 - "$rows" "$out" "$shape" "$threads" "$recipes" "$tag" <<'PY'
import json, os, sys
rows_path, out, shape, threads, recipes, tag = sys.argv[1:7]
name = f"vs_llamacpp_{shape}" + (f"_{tag}" if tag else "")
rows = [json.loads(l) for l in open(rows_path)]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
flags = open("/proc/cpuinfo").read()
amx = "amx_int8" in flags
load = open("/proc/loadavg").read().split()[0]
import subprocess
level = json.loads(subprocess.run(["build/seer", "cpu", "--json"], capture_output=True, text=True, check=True).stdout)
meta = {"shape": shape, "threads": int(threads), "cpu": cpu, "amx": amx, "load_avg_1min_at_end": float(load),
        "kernel_level": level["kernel_level"], "build_march": level["build_march"],
        "command": f"scripts/vs_llamacpp.sh LLAMA_BIN_DIR --shape {shape} --recipes {recipes} --threads {threads}"
                   + (f" --tag {tag}" if tag else "")}
json.dump({"meta": meta, "rows": rows}, open(os.path.join(out, f"{name}.json"), "w"), indent=1)
lines = [f"# seer vs llama.cpp: forward-pass speed, {shape} (random weights), {threads} threads", "",
         f"{cpu} ({'with' if amx else 'without'} AMX); 1-min load average {load} at the end of the run. "
         f"llama-bench -p 512 -n 128 and llama-batched-bench -npp 128 -ntg 128 -npl 8 and 32 against "
         f"`seer bench model` on the same files, each case in both programs back to back. "
         f"Regenerate: `{meta['command']}`.", "",
         "| recipe | case | llama.cpp tok/s | seer tok/s | seer / llama.cpp |", "|---|---|---|---|---|"]
for r in rows:
    lines.append(f"| {r['recipe']} | {r['case']} | {r['llama_tok_s']:.1f} | {r['seer_tok_s']:.1f} | {r['ratio']:.2f}x |")
open(os.path.join(out, f"{name}.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
}

echo "== making $shape F16" >&2
$seer make-model --shape "$shape" --type f16 --seed 1 -q -o "$work/F16.gguf"
IFS=, read -r -a list <<<"$recipes"
for r in "${list[@]}"; do
  echo "== $r: llama-quantize" >&2
  "$llama/llama-quantize" "$work/F16.gguf" "$work/$r.gguf" "$r" >"$work/q.log" 2>&1 || { tail -3 "$work/q.log" >&2; continue; }
  # Each case runs in both programs back to back (llama.cpp, then seer), so the host's
  # load drifts less between the two halves of a ratio than across a whole recipe.
  echo "== $r: pp512, tg128" >&2
  "$llama/llama-bench" -m "$work/$r.gguf" -p 512 -n 128 -t "$threads" -o json >"$work/lb.json" 2>/dev/null
  # (seer's bench always adds batched cases: one sequence of one token costs nothing)
  $seer bench model -m "$work/$r.gguf" -p 512 -n 128 --npp 1 --ntg 1 --npl 1 -t "$threads" --json \
    2>/dev/null >"$work/seer.jsonl"
  : >"$work/lbb.jsonl"
  for par in 8 32; do
    echo "== $r: $par sequences" >&2
    "$llama/llama-batched-bench" -m "$work/$r.gguf" -c 8192 -npp 128 -ntg 128 -npl "$par" -t "$threads" -tb "$threads" \
      --output-format jsonl 2>/dev/null | grep '^{' >>"$work/lbb.jsonl"
    $seer bench model -m "$work/$r.gguf" -p 0 -n 0 --npp 128 --ntg 128 --npl "$par" -t "$threads" --json \
      2>/dev/null >>"$work/seer.jsonl"
  done
  python3 - "$r" "$work" >>"$rows" <<'PY'
import json, sys
recipe, work = sys.argv[1], sys.argv[2]
lb = json.load(open(f"{work}/lb.json"))
lbb = [json.loads(l) for l in open(f"{work}/lbb.jsonl")]
seer = [json.loads(l) for l in open(f"{work}/seer.jsonl")]
# A case either program did not report (a tool that failed) is left out with a note,
# so one failing case does not lose the others.
empty = {}
def seer_case(test, par=1):
    return next((r for r in seer if r["test"] == test and r["parallel"] == par), empty)
pp = next((r for r in lb if r["n_prompt"] == 512 and r["n_gen"] == 0), empty).get("avg_ts")
tg = next((r for r in lb if r["n_gen"] == 128 and r["n_prompt"] == 0), empty).get("avg_ts")
cases = [("pp512", pp, seer_case("pp512").get("prompt_tokens_per_s")),
         ("tg128", tg, seer_case("tg128").get("gen_tokens_per_s"))]
for par in (8, 32):
    l = next((r for r in lbb if r["pl"] == par), empty)
    s = seer_case("batched", par)
    cases.append((f"batched {par} decode", l.get("speed_tg"), s.get("gen_tokens_per_s")))
    cases.append((f"batched {par} prefill", l.get("speed_pp"), s.get("prompt_tokens_per_s")))
for name, l, s in cases:
    if l is None or s is None:
        print(f"{recipe} {name}: no result from {'llama.cpp' if l is None else 'seer'}", file=sys.stderr)
        continue
    print(json.dumps({"recipe": recipe, "case": name, "llama_tok_s": l, "seer_tok_s": s, "ratio": s / l}))
PY
  write_results >/dev/null
done
write_results

