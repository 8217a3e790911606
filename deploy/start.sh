#!/usr/bin/env bash
# Starts N `seer serve` replicas and HAProxy in front of them on loopback ports, then
# waits; Ctrl-C (or any exit) stops them all. docs/deploy.md describes the recipe.
#
#   deploy/start.sh N [seer serve flags...]
#
# Environment: SEER_BIN (default build/seer), SEER_LB_PORT (8080), SEER_LB_HOST
# (127.0.0.1), SEER_DEPLOY_DIR (logs, config and replicas.tsv; default a new temp dir),
# HAPROXY (default: haproxy on PATH or /usr/sbin/haproxy), SEER_LB_BALANCE (HAProxy's
# balance algorithm; default hdr(X-Conversation-Id), conversation affinity).
set -euo pipefail

usage() { echo "usage: deploy/start.sh N [seer serve flags...]   (N replicas, 1-64)" >&2; exit 2; }
[ $# -ge 1 ] || usage
n=$1; shift
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || usage
for f in "$@"; do
  case "$f" in
    --port|--port=*|--host|--host=*|--replica-name|--replica-name=*)
      echo "deploy/start.sh: $f is set by the script (replicas listen on 127.0.0.1, any free port)" >&2; exit 2;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
seer=${SEER_BIN:-$root/build/seer}
[ -x "$seer" ] || { echo "deploy/start.sh: $seer not found: build it (ninja -C build seer) or set SEER_BIN" >&2; exit 1; }
haproxy=${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}
[ -x "$haproxy" ] || { echo "deploy/start.sh: haproxy not found: scripts/install-deps.sh installs it" >&2; exit 1; }
lb_host=${SEER_LB_HOST:-127.0.0.1}
lb_port=${SEER_LB_PORT:-8080}
balance=${SEER_LB_BALANCE:-hdr(X-Conversation-Id)}
[[ "$balance" =~ ^[A-Za-z0-9_()-]+$ ]] || { echo "deploy/start.sh: SEER_LB_BALANCE '$balance' is not a balance algorithm" >&2; exit 2; }
dir=${SEER_DEPLOY_DIR:-$(mktemp -d /tmp/seer-deploy.XXXXXX)}
mkdir -p "$dir"

pids=()
stop_all() {
  trap - EXIT INT TERM
  # SIGTERM: replicas drain (docs/deploy.md); then wait for each child we started.
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# The port a replica printed on stdout ("listening on http://HOST:PORT"), within 120 s.
replica_port() {
  local out=$1 pid=$2 deadline=$((SECONDS + 120)) line
  while [ $SECONDS -lt $deadline ]; do
    line=$(grep -m1 -o 'listening on http://[^ ]*' "$out" 2>/dev/null || true)
    if [ -n "$line" ]; then echo "${line##*:}"; return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

: > "$dir/replicas.tsv"
servers=""
for i in $(seq 1 "$n"); do
  name="r$i"
  "$seer" serve --host 127.0.0.1 --port 0 --replica-name "$name" "$@" > "$dir/$name.out" 2> "$dir/$name.err" &
  pids+=($!)
  echo "replica $name: pid $! (log $dir/$name.err)"
done
for i in $(seq 1 "$n"); do
  name="r$i"; pid=${pids[$((i - 1))]}
  if ! port=$(replica_port "$dir/$name.out" "$pid"); then
    echo "deploy/start.sh: replica $name did not start; its log:" >&2
    tail -n 20 "$dir/$name.err" >&2
    exit 1
  fi
  printf '%s\t%s\t%s\n' "$name" "$port" "$pid" >> "$dir/replicas.tsv"
  servers+="    server $name 127.0.0.1:$port"$'\n'
done

sed -e "s/@LB_HOST@/$lb_host/" -e "s/@LB_PORT@/$lb_port/" -e "s/@BALANCE@/$balance/" "$root/deploy/haproxy.cfg.in" |
  awk -v servers="$servers" '{ if ($0 == "@SERVERS@") printf "%s", servers; else print }' > "$dir/haproxy.cfg"
"$haproxy" -c -q -f "$dir/haproxy.cfg"
"$haproxy" -db -f "$dir/haproxy.cfg" > "$dir/haproxy.log" 2>&1 &
pids+=($!)
echo "haproxy: pid $! (config $dir/haproxy.cfg, log $dir/haproxy.log)"
printf 'haproxy\t%s\t%s\n' "$lb_port" "$!" >> "$dir/replicas.tsv"

deadline=$((SECONDS + 30))
until curl -sf "http://$lb_host:$lb_port/health" > /dev/null; do
  if [ $SECONDS -ge $deadline ] || ! kill -0 "${pids[-1]}" 2>/dev/null; then
    echo "deploy/start.sh: haproxy does not answer on $lb_host:$lb_port; its log:" >&2
    tail -n 20 "$dir/haproxy.log" >&2
    exit 1
  fi
  sleep 0.1
done
echo "seer: $n replicas behind http://$lb_host:$lb_port (Ctrl-C stops everything)"
echo "  curl -s http://$lb_host:$lb_port/v1/completions -H 'X-Conversation-Id: c1' -d '{\"prompt\": \"Tom and his dog\", \"max_tokens\": 32}'"
echo "ready" > "$dir/ready"
# Until HAProxy exits (or Ctrl-C). A replica that dies is routed around by the
# health checks; the rest keep serving.
wait "${pids[-1]}" || true
echo "deploy/start.sh: haproxy exited; stopping the replicas" >&2
