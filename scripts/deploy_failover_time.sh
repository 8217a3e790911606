#!/usr/bin/env bash
# How long HAProxy takes to take a replica out of the pool (docs/deploy.md): starts
# deploy/start.sh 3, kills r1 with SIGKILL and sends r2 SIGTERM (draining), and times
# each until HAProxy's stats page (/lb-stats;csv) reports the replica DOWN.
# usage: scripts/deploy_failover_time.sh [balancer port]
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-18520}
dir=$(mktemp -d)
SEER_LB_PORT=$port SEER_DEPLOY_DIR=$dir deploy/start.sh 3 --threads 1 >"$dir/start.log" 2>&1 &
starter=$!
trap 'kill -TERM $starter 2>/dev/null || true; wait $starter 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 600); do [ -f "$dir/ready" ] && break; sleep 0.1; done
[ -f "$dir/ready" ] || { cat "$dir/start.log" >&2; exit 1; }
status() { curl -s "http://127.0.0.1:$port/lb-stats;csv" | awk -F, -v n="$1" '$1 == "replicas" && $2 == n {print $18}'; }
for sig in KILL TERM; do
  name=$([ $sig = KILL ] && echo r1 || echo r2)
  pid=$(awk -v n=$name '$1 == n {print $3}' "$dir/replicas.tsv")
  t0=$(date +%s.%N)
  kill -$sig "$pid"
  for _ in $(seq 1000); do status $name | grep -q DOWN && break; sleep 0.02; done
  t1=$(date +%s.%N)
  python3 -c "print('SIG$sig $name: DOWN in HAProxy after %.3f s' % ($t1 - $t0))"
done
