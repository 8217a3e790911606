#!/usr/bin/env bash
# Q8_0 and Q4_0 K/V against f16 K/V (docs/kernels.md "K/V cache in Q8_0 and Q4_0"):
# perplexity, tokens of KV per GiB (from `seer serve`'s start-up line), decode speed
# (`seer bench model`) and the real server's concurrency, preemptions and capacity in
# the same small --kv-memory. With --llama DIR (a llama.cpp build holding
# llama-perplexity) the same perplexities from llama.cpp with -ctk/-ctv f16, q8_0 and
# q4_0 (-fa on: llama.cpp needs flash attention for a quantized V) as a reference delta.
#
#   scripts/experiments/kv_quant.sh [--llama DIR] [--seer BIN] [--data-dir D] [--out DIR]
#                                   [--rounds N] [--server-capacity 0|1]
#
# Models (random weights: the one trained model in ../shared, stories260K, has a head
# dimension of 8, which blocks of 32 cannot hold):
#   kq64: 2 layers, dim 256, 4 heads of 64, 2 KV heads, FFN 512, F16, byte vocabulary;
#   llama-125m: 12 layers, dim 768, 12 heads of 64, Q8_0, the Llama-2 vocabulary.
# Text: the outputs of the first 300 Alpaca records joined by blank lines.
# Also the capacity `seer sim capacity` finds with each K/V type where KV memory
# binds, and the attention kernel alone (build/benchmarks/bench_attention, when built).
# Writes OUT/kv_quant.{md,json} (scripts/experiments/kv_quant_report.py).
set -euo pipefail
source "$(dirname "$0")/common.sh"
llama=""
rounds=2
server_capacity=1
experiment_option() {
  case $1 in
    --llama) llama=$2 ;;
    --rounds) rounds=$2 ;;
    --server-capacity) server_capacity=$2 ;;
    *) return 1 ;;
  esac
}
parse_experiment_args "$@"
start_experiment
ctx=128
chunks=16
threads=2
types=(f16 q8_0 q4_0)

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
# after 1024-token prompts (32 steps). --rounds rounds alternating the K/V types; the
# report keeps each case's best round (a shared machine's load comes and goes).
for round in $(seq "$rounds"); do
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
  "$bench_attention" --kv-types "$(IFS=,; echo "${types[*]}")" --contexts 1024,4096 --seqs 1,8 --threads 1 --repeats 200 | tail -n +2 |
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

# The real server in a KV memory small enough that f16 K/V limits concurrency:
# `seer serve --kv-memory 48M --swap-blocks 0` (llama-125m: 36 KiB of f16 K/V per
# token, so 85 blocks of 16 tokens; a request of 256 + 64 tokens needs 20 blocks) and
# a fixed token budget (the default one is profiled at start-up, and on a loaded
# machine that profile would differ between runs).
# 1. A burst: 24 requests of 256 prompt + 64 output tokens at once (`seer bench
#    --rate inf`): most requests running at once (the iteration log's chunks per
#    step), preemptions, the time to finish all; --rounds rounds alternating types.
# 2. `seer bench capacity` on 24 Poisson requests with log-normal lengths (mean 256 /
#    64): the highest rate with P99 TBT <= 1 s and median TTFT <= 5 s.
server_kv_memory=48M
server_flags=(--kv-memory "$server_kv_memory" --swap-blocks 0 --token-budget 128 --threads "$threads")
$seer trace --num 24 --length-dist constant --prompt-mean 256 --output-mean 64 --seed 1 --out "$work/burst.jsonl" >/dev/null
$seer trace --num 24 --prompt-mean 256 --output-mean 64 --prompt-max 512 --output-max 128 --seed 2 \
  --out "$work/poisson.jsonl" >/dev/null
serve_start() {  # serve_start KV_TYPE [flags...]: sets $pid and $url
  local t=$1
  shift
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  url=http://127.0.0.1:$port
  $seer serve --model "$work/llama-125m.gguf" --kv-type "$t" --port "$port" "${server_flags[@]}" "$@" \
    >"$work/serve-$t.out" 2>"$work/serve-$t.err" &
  pid=$!
  for _ in $(seq 1200); do curl -sf "$url/v1/models" >/dev/null && return 0; sleep 0.1; done
  echo "seer serve --kv-type $t did not come up" >&2
  cat "$work/serve-$t.err" >&2
  exit 1
}
serve_stop() { kill "$pid"; wait "$pid" || true; }
if [[ $server_capacity == 1 ]]; then
  for round in $(seq "$rounds"); do
    for t in "${types[@]}"; do
      echo "== server burst $t (round $round)" >&2
      serve_start "$t" --iteration-log "$work/iterations.jsonl"
      load=$(cut -d' ' -f1 /proc/loadavg)
      j=$($seer bench --url "$url" --trace "$work/burst.jsonl" --rate inf --json --no-progress)
      serve_stop
      running=$(python3 -c 'import json,sys; n=[len(json.loads(l)["chunks"]) for l in open(sys.argv[1])]; print(max(n), sum(n)/len(n))' \
                "$work/iterations.jsonl")
      blocks=$(grep -o "KV [0-9]* blocks x [0-9]* tokens" "$work/serve-$t.err")
      row kind server_burst kv "$t" round "$round" load "$load" running_max "${running% *}" \
        running_mean "${running#* }" pool "$blocks" json "$j"
    done
  done
  for t in "${types[@]}"; do
    echo "== server capacity $t" >&2
    serve_start "$t"
    load=$(cut -d' ' -f1 /proc/loadavg)
    j=$($seer bench capacity --url "$url" --trace "$work/poisson.jsonl" --slo-tbt-p99 1 --max-sched-delay 5 \
         --start-rate 0.5 --max-steps 5 --json --no-progress | sed -n '/^{/,$p')
    serve_stop
    row kind server_capacity kv "$t" load "$load" json "$j"
  done
fi

python3 "$(dirname "$0")/kv_quant_report.py" "$rows" "$out" "$ctx" "$chunks" "$threads" "$rounds" "$server_kv_memory" "$*"
