#!/usr/bin/env bash
# The replica experiment (docs/replicas.md): Llama-2-13B on A100-80GB replicas
# (policy pensieve, 64 GiB host tier each) behind a router, on the multi-turn
# ShareGPT trace (Poisson conversation arrivals, 60 s mean think time). For 8 and
# 32 replicas: each routing policy without a shared tier, with Redis over 25 GbE
# and with a 200 Gb/s RDMA store; then replica 0 failing mid-run (without a
# shared tier and with the RDMA one). Load per replica is the same for both
# sizes: 0.5 conversations/s and 750 turns per replica (--turns-per-replica).
# Writes docs/results/replicas.md, docs/results/replicas.svg and the raw points
# docs/results/replicas.jsonl.
#   scripts/experiments/replicas.sh [--seer build/seer] [--data-dir ../shared/data] [--sizes "8 32"]
#                                   [--turns-per-replica 750] [--jobs 2]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seer=$root/build/seer
data=$root/../shared/data
out=$root/docs/results
sizes="8 32"
turns=750
jobs=2
conv_rate=0.5  # conversations/s per replica
while [[ $# -gt 0 ]]; do
  case $1 in
    --seer) seer=$2; shift 2 ;;
    --data-dir) data=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --turns-per-replica) turns=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $seer ]] || { echo "no seer binary at $seer (build it: ninja -C build seer)" >&2; exit 1; }
[[ -d $data/sharegpt ]] || { echo "no ShareGPT data under $data (give --data-dir)" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

common="--model Llama-2-13B --hardware A100-80GB --policy pensieve --swap-space 64 --quiet --json"
routings="round-robin least-loaded conversation-affinity"
declare -A tier_flags=(
  [none]=""
  [redis-25GbE]="--shared-tier --shared-tier-spec redis-25GbE"
  [rdma-200Gb]="--shared-tier --shared-tier-spec rdma-200Gb"
)
jobs_file=$work/jobs.txt
: > "$jobs_file"
for n in $sizes; do
  rate=$(python3 -c "print($conv_rate * $n)")
  "$seer" trace --lengths sharegpt-multiturn --data-dir "$data" --num $((turns * n)) --rate "$rate" --think-mean 60 \
    --seed 7 --out "$work/trace$n.jsonl" >/dev/null
  # Mid-run, at busy time: the median of the turns' nominal arrival times (conversations
  # start in a burst and thin out, so a third of the way through the trace is quiet).
  fail_at=$(python3 -c "
import json, statistics
t = [json.loads(l)['arrival_s'] for l in open('$work/trace$n.jsonl')]
print(round(statistics.median(t)))")
  for routing in $routings; do
    for tier in none redis-25GbE rdma-200Gb; do
      echo "$n $routing $tier - ${tier_flags[$tier]}" | sed 's/ *$//' >> "$jobs_file"  # xargs -L: no trailing blanks
    done
    for tier in none rdma-200Gb; do
      echo "$n $routing $tier 0@$fail_at ${tier_flags[$tier]} --fail-replica 0@$fail_at" >> "$jobs_file"
    done
  done
done

run_one() {  # n routing tier fail flags...
  local n=$1 routing=$2 tier=$3 fail=$4
  shift 4
  local t0=$SECONDS
  local json
  json=$("$seer" sim --trace "$work/trace$n.jsonl" $common --replicas "$n" --routing "$routing" "$@" 2>/dev/null)
  python3 -c "
import json, sys
j = json.loads(sys.argv[1])
j.update(size=int(sys.argv[2]), tier=sys.argv[3], failure=sys.argv[4], wall_s=int(sys.argv[5]))
print(json.dumps(j))" "$json" "$n" "$tier" "$fail" $((SECONDS - t0)) > "$work/point.$n.$routing.$tier.$fail.json"
  echo "  done: $n replicas, $routing, shared tier $tier, failure $fail ($((SECONDS - t0)) s)" >&2
}
export -f run_one
export seer work common
total=$(wc -l < "$jobs_file")
echo "replica experiment: $total runs, $jobs at a time" >&2
start=$SECONDS
xargs -P "$jobs" -L 1 bash -c 'run_one "$@"' _ < "$jobs_file"
cat "$work"/point.*.json > "$out/replicas.jsonl"
python3 "$root/scripts/experiments/replicas_report.py" "$out/replicas.jsonl" "$out" "$turns" "$conv_rate"
echo "wrote $out/replicas.md and $out/replicas.svg in $((SECONDS - start)) s" >&2
