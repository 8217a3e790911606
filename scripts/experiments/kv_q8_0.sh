#!/usr/bin/env bash
# Q8_0 K/V against f16 K/V (docs/kernels.md "K/V cache in Q8_0"): perplexity, tokens
# of KV per GiB (from `seer serve`'s start-up line) and decode speed (`seer bench
# model`). With --llama DIR (a llama.cpp build holding llama-perplexity) the same
# perplexities from llama.cpp with -ctk/-ctv f16 and q8_0 as a reference delta.
#
#   scripts/experiments/kv_q8_0.sh [--llama DIR] [--seer BIN] [--data-dir D] [--out DIR]
#
# Models (random weights: the one trained model in ../shared, stories260K, has a head
# dimension of 8, which Q8_0 blocks of 32 cannot hold):
#   kq64: 2 layers, dim 256, 4 heads of 64, 2 KV heads, FFN 512, F16, byte vocabulary;
#   llama-125m: 12 layers, dim 768, 12 heads of 64, Q8_0, the Llama-2 vocabulary.
# Text: the outputs of the first 300 Alpaca records joined by blank lines.
# Also the capacity `seer sim capacity` finds with each K/V type where KV memory
# binds, and the attention kernel alone (build/benchmarks/bench_attention, when built).
# Writes OUT/kv_q8_0.{md,json}.
set -euo pipefail
source "$(dirname "$0")/common.sh"
llama=""
experiment_option() { case $1 in --llama) llama=$2 ;; *) return 1 ;; esac; }
parse_experiment_args "$@"
start_experiment
ctx=128
chunks=16
threads=2
types=(f16 q8_0)

python3 - "$data/alpaca/alpaca_data.json" "$work/text.txt" <<'PY'
import json, sys
records = json.load(open(sys.argv[1], encoding="utf-8"))
open(sys.argv[2], "w", encoding="utf-8").write("\n\n".join(r["output"] for r in records[:300]) + "\n")
PY
$seer make-model --shape tiny --dim 256 --ffn 512 --heads 4 --kv-heads 2 --type f16 --seed 1 -q -o "$work/kq64.gguf"
$seer make-model --shape llama-125m --type q8_0 --seed 1 -q \
  --tokenizer-from "$data/tokenizer-tests/ggml-vocab-llama-spm.gguf" -o "$work/llama-125m.gguf"

rows=$work/rows.jsonl
: >"$rows"
row() { python3 -c 'import json,sys; print(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2]))))' "$@" >>"$rows"; }

for m in kq64 llama-125m; do
  for t in "${types[@]}"; do
    echo "== perplexity $m $t" >&2
    ppl=$($seer perplexity -m "$work/$m.gguf" -f "$work/text.txt" --ctx $ctx --chunks $chunks -t $threads \
          --kv-type "$t" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])')
    row kind ppl engine seer model "$m" kv "$t" value "$ppl"
    if [[ -n $llama ]]; then
      "$llama/llama-perplexity" -m "$work/$m.gguf" -f "$work/text.txt" -c $ctx -b $ctx --chunks $chunks \
        -t $threads -fa on -ctk "$t" -ctv "$t" >"$work/llama.log" 2>&1 || true
      lppl=$(sed -n 's/.*Final estimate: PPL = \([0-9.]*\).*/\1/p' "$work/llama.log")
      [[ -n $lppl ]] && row kind ppl engine llama.cpp model "$m" kv "$t" value "$lppl"
    fi
  done
done

# Tokens a 1 GiB pool holds: the start-up line of `seer serve --kv-memory 1G`.
for t in "${types[@]}"; do
  echo "== serve start-up $t" >&2
  $seer serve --model "$work/llama-125m.gguf" --kv-memory 1G --kv-type "$t" --port 0 --threads 1 \
    >"$work/serve.out" 2>"$work/serve.err" &
  pid=$!
  for _ in $(seq 1200); do grep -q " blocks x " "$work/serve.err" && break; sleep 0.1; done
  kill "$pid"; wait "$pid" || true
  line=$(grep -o "KV [0-9]* blocks x [0-9]* tokens ([0-9.]* MiB, $t)" "$work/serve.err")
  row kind pool model llama-125m kv "$t" line "$line"
done

# Decode speed: tg128 from an empty context; batched decode of 1 and 8 sequences
# after 1024-token prompts (32 steps). Three rounds alternating the K/V types; the
# report keeps each case's best round (a shared machine's load comes and goes).
for round in 1 2 3; do
  for t in "${types[@]}"; do
    echo "== bench model $t (round $round)" >&2
    $seer bench model -m "$work/llama-125m.gguf" --kv-type "$t" -p 0 -n 128 --npp 1024 --ntg 32 --npl 1,8 -r 3 \
      -t $threads --json 2>/dev/null | while read -r j; do row kind bench model llama-125m kv "$t" json "$j"; done
  done
done

# The attention kernel alone (benchmarks/bench_attention.cc), decode shape, best of 200.
bench_attention=$(dirname "$seer")/benchmarks/bench_attention
if [[ -x $bench_attention ]]; then
  echo "== bench_attention" >&2
  "$bench_attention" --kv-types f16,q8_0 --contexts 1024,4096 --seqs 1,8 --threads 1 --repeats 200 | tail -n +2 |
    while read -r kv ctx seqs us gbs; do row kind attention kv "$kv" ctx "$ctx" seqs "$seqs" us "$us" gbs "$gbs"; done
fi

# Capacity in the simulator where KV memory binds: Llama-2-7B on one A100 with a
# 4 GiB KV pool, 400 ShareGPT-length requests, vLLM policy, P99 TBT <= 0.1 s.
$seer trace --lengths sharegpt --data-dir "$data" --num 400 --rate 1 --seed 1 --out "$work/sharegpt.jsonl" >/dev/null
for t in "${types[@]}"; do
  echo "== sim capacity $t" >&2
  cap=$($seer sim capacity --trace "$work/sharegpt.jsonl" --model Llama-2-7B --hardware A100-80GB --kv-memory 4G \
        --kv-type "$t" --policy vllm --slo-tbt-p99 0.1 2>&1 | sed -n 's/^capacity of vllm: \([0-9.]*\) req.*/\1/p')
  row kind sim_capacity model Llama-2-7B kv "$t" value "$cap"
done

python3 - "$rows" "$out" "$ctx" "$chunks" "$threads" "$*" <<'PY'
import json, os, platform, re, sys
rows_path, out, ctx, chunks, threads, args = sys.argv[1:7]
rows = [json.loads(l) for l in open(rows_path)]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
load = os.getloadavg()[0]
cmd = "scripts/experiments/kv_q8_0.sh" + (" " + args if args else "")
ppl = {(r["engine"], r["model"], r["kv"]): float(r["value"]) for r in rows if r["kind"] == "ppl"}
pools = {}
for r in rows:
    if r["kind"] == "pool":
        m = re.match(r"KV (\d+) blocks x (\d+) tokens \(([0-9.]+) MiB", r["line"])
        blocks, bs, mib = int(m[1]), int(m[2]), float(m[3])
        pools[r["kv"]] = {"blocks": blocks, "block_size": bs, "mib": mib, "tokens_per_gib": blocks * bs * 1024 / mib}
bench = [dict(json.loads(r["json"]), kv=r["kv"]) for r in rows if r["kind"] == "bench"]
doc = {"meta": {"command": cmd, "cpu": cpu, "threads": int(threads), "ctx": int(ctx), "chunks": int(chunks),
                "text": "Alpaca outputs 0..299 joined by blank lines", "load_avg_1min_at_end": load},
       "perplexity": [{"engine": e, "model": m, "kv": k, "ppl": v} for (e, m, k), v in sorted(ppl.items())],
       "pool_1gib": pools, "bench": bench}
json.dump(doc, open(f"{out}/kv_q8_0.json", "w"), indent=1)
md = ["# Q8_0 K/V cache against f16 K/V", "",
      f"{cpu}, {threads} threads, 1-min load average {load:.2f} at the end. Regenerate: `{cmd}`.", "",
      f"## Perplexity (ctx {ctx}, {chunks} chunks, random-weight models: see the script)", "",
      "| engine | model | f16 K/V | q8_0 K/V | q8_0 / f16 - 1 |", "|---|---|---|---|---|"]
for e, m in sorted({(e, m) for e, m, _ in ppl}):
    a, b = ppl.get((e, m, "f16")), ppl.get((e, m, "q8_0"))
    if a and b: md.append(f"| {e} | {m} | {a:.4f} | {b:.4f} | {100 * (b / a - 1):+.3f} % |")
md += ["", "## Tokens of KV per GiB (llama-125m: 12 layers x 12 KV heads x 64; `seer serve --kv-memory 1G`)", "",
       "| K/V | blocks x tokens | MiB | tokens per GiB |", "|---|---|---|---|"]
for k, p in pools.items():
    md.append(f"| {k} | {p['blocks']} x {p['block_size']} | {p['mib']:.1f} | {p['tokens_per_gib']:.0f} |")
if "f16" in pools and "q8_0" in pools:
    md.append(f"\nq8_0 holds {pools['q8_0']['tokens_per_gib'] / pools['f16']['tokens_per_gib']:.2f}x the tokens of f16.")
md += ["", "## Decode speed (llama-125m Q8_0 weights, `seer bench model`, best of 3 alternating rounds)", "",
       "| case | f16 K/V tok/s | q8_0 K/V tok/s | q8_0 / f16 | rounds f16 / q8_0 (min-max) |", "|---|---|---|---|---|"]
def key(b):
    return b["test"] if b["test"] != "batched" else f"batched npl {b['parallel']} after {b.get('prompt_tokens', '')}"
cases = {}
for b in bench:
    if b["test"].startswith("pp"): continue
    cases.setdefault(key(b), {}).setdefault(b["kv"], []).append(b["gen_tokens_per_s"])
for c, v in cases.items():
    if "f16" in v and "q8_0" in v:
        a, q = max(v["f16"]), max(v["q8_0"])
        spread = f"{min(v['f16']):.0f}-{a:.0f} / {min(v['q8_0']):.0f}-{q:.0f}"
        md.append(f"| {c} | {a:.1f} | {q:.1f} | {q / a:.2f} | {spread} |")
att = [r for r in rows if r["kind"] == "attention"]
doc["attention_kernel"] = [{k: r[k] for k in ("kv", "ctx", "seqs", "us", "gbs")} for r in att]
if att:
    md += ["", "## The attention kernel alone (`bench_attention --threads 1 --repeats 200`, best run; 12 heads of 64)", "",
           "| context | sequences | f16 K/V (us) | q8_0 K/V (us) | q8_0 / f16 time |", "|---|---|---|---|---|"]
    by = {}
    for r in att: by.setdefault((int(r["ctx"]), int(r["seqs"])), {})[r["kv"]] = float(r["us"])
    for (c, n), v in sorted(by.items()):
        if "f16" in v and "q8_0" in v: md.append(f"| {c} | {n} | {v['f16']:.1f} | {v['q8_0']:.1f} | {v['q8_0'] / v['f16']:.2f} |")
caps = {r["kv"]: float(r["value"]) for r in rows if r["kind"] == "sim_capacity" and r["value"]}
doc["sim_capacity_rps"] = caps
json.dump(doc, open(f"{out}/kv_q8_0.json", "w"), indent=1)
if caps:
    md += ["", "## Capacity in the simulator (Llama-2-7B, A100-80GB, 4 GiB KV pool, 400 ShareGPT-length requests, "
           "vllm, P99 TBT <= 0.1 s, median scheduling delay <= 2 s)", "",
           "| K/V | capacity (req/s) |", "|---|---|"] + [f"| {k} | {v:.3f} |" for k, v in caps.items()]
open(f"{out}/kv_q8_0.md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
