#!/usr/bin/env bash
# Records `seer sim --json` of the pre-pipeline simulator for PipelineSim.PpOneReproducesTheResultsFromBeforePipelines.
set -euo pipefail
seer=${1:-build-pp/seer}
d=tests/sim/data
mkdir -p $d
$seer trace --out $d/pp1_trace.jsonl --num 120 --rate 40 --seed 9 --prompt-max 2000 2>/dev/null
configs=(
  "--model Llama-2-7B --hardware A100-80GB --policy vllm --kv-memory 6G"
  "--model Llama-2-7B --hardware A100-80GB --policy sarathi --tbt-slo 0.05 --kv-memory 6G"
  "--model Llama-2-7B --hardware A100-80GB --policy orca --kv-memory 6G"
  "--model Llama-2-7B --hardware A100-80GB --policy vllm --preemption swap --kv-memory 6G"
  "--model Llama-2-70B --hardware A100-80GB --tp 4 --policy sarathi --tbt-slo 0.2"
  "--model Mistral-7B --hardware H100-80GB --policy sarathi --token-budget 512 --max-batch 64"
)
{
  echo "["
  n=${#configs[@]}
  for i in "${!configs[@]}"; do
    a=${configs[$i]}
    out=$($seer sim --trace $d/pp1_trace.jsonl $a --quiet --json 2>/dev/null)
    sep=$([ $((i + 1)) -lt $n ] && echo "," || echo "")
    printf '  {"args": "%s",\n   "result": %s}%s\n' "$a" "$out" "$sep"
  done
  echo "]"
} > $d/pp1_golden.json
python3 -c "import json; g=json.load(open('$d/pp1_golden.json')); print(len(g), [x['result']['requests'] for x in g])"
