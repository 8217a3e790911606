#!/usr/bin/env bash
# A multi-turn ShareGPT trace small enough for the tiny built-in model: at most 6 turns
# per conversation, prompts cut to 48 words and answers to 48 tokens, so a
# conversation fits stories260K's context. Used by the real-serving benchmarks.
# usage: scripts/short_conversations.sh SEER TURNS CONVERSATIONS_PER_S OUT.jsonl
set -euo pipefail
seer=$1 num=$2 rate=$3 out=$4
full=$(mktemp)
trap 'rm -f "$full"' EXIT
"$seer" trace --lengths sharegpt-multiturn --data-dir ../shared/data --num "$num" --rate "$rate" --think-mean 1 \
  --seed 3 --out "$full" >/dev/null
python3 - "$full" "$out" <<'PY'
import json, sys
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("turn", 0) >= 6:
        continue
    e["prompt"] = " ".join(e["prompt"].split()[:48]) or "hello"
    e["output_tokens"] = max(1, min(e["output_tokens"], 48))
    out.write(json.dumps(e) + "\n")
PY
