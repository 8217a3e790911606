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
# Shared KV tier (docs/deploy.md): SEER_REDIS_PORT starts a redis-server on that
# loopback port (SEER_REDIS_MAXMEMORY, default 1gb, evicting allkeys-lru; REDIS_SERVER
# names the binary) and gives every replica --shared-kv redis://127.0.0.1:PORT, which
# needs a policy with a host-tier cache and --swap-blocks N among the flags, e.g.
#   SEER_REDIS_PORT=6390 deploy/start.sh 3 --policy pensieve --swap-blocks 2048
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
redis_port=${SEER_REDIS_PORT:-}
if [ -n "$redis_port" ]; then
  [[ "$redis_port" =~ ^[0-9]+$ ]] || { echo "deploy/start.sh: SEER_REDIS_PORT '$redis_port' is not a port" >&2; exit 2; }
  for f in "$@"; do
    case "$f" in --shared-kv|--shared-kv=*)
      echo "deploy/start.sh: $f is set by the script when SEER_REDIS_PORT is given" >&2; exit 2;;
    esac
  done
  redis_server=${REDIS_SERVER:-$(command -v redis-server || echo /usr/bin/redis-server)}
  [ -x "$redis_server" ] || { echo "deploy/start.sh: redis-server not found: scripts/install-deps.sh installs it" >&2; exit 1; }
  redis_maxmemory=${SEER_REDIS_MAXMEMORY:-1gb}
  [[ "$redis_maxmemory" =~ ^[0-9]+[kmgKMG]?[bB]?$ ]] || { echo "deploy/start.sh: SEER_REDIS_MAXMEMORY '$redis_maxmemory' is not a size" >&2; exit 2; }
fi

pids=()
redis_pid=""
stop_all() {
  trap - EXIT INT TERM
  # SIGTERM: replicas drain (docs/deploy.md); then wait for each child we started.
  # Redis goes last, so draining replicas can still write to it.
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$redis_pid" ]; then kill -TERM "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# wait_until SECONDS PID NAME LOG COMMAND...: polls COMMAND until it succeeds; fails
# with the last lines of LOG when PID dies or SECONDS pass.
wait_until() {
  local limit=$1 pid=$2 name=$3 log=$4 deadline
  shift 4
  deadline=$((SECONDS + limit))
  until "$@"; do
    if [ $SECONDS -ge $deadline ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "deploy/start.sh: $name does not answer; its log:" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
}

# True when Redis on 127.0.0.1:$1 answers PING. (The group scopes 2>/dev/null to the
# connect: on `exec` itself it would silence this script's stderr for good.)
redis_pong() {
  local line
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'PING\r\n' >&3
  read -r -t 1 line <&3 || true
  exec 3<&- 3>&-
  [[ "$line" == +PONG* ]]
}

: > "$dir/replicas.tsv"
shared_flags=()
if [ -n "$redis_port" ]; then
  # The shared KV tier: Redis's own memory cap, evicting the least recently used keys
  # (seer's --shared-kv-max-bytes caps what each replica writes; both may be set).
  "$redis_server" --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
    --maxmemory "$redis_maxmemory" --maxmemory-policy allkeys-lru > "$dir/redis.log" 2>&1 &
  redis_pid=$!
  echo "redis: pid $redis_pid on 127.0.0.1:$redis_port (maxmemory $redis_maxmemory, allkeys-lru; log $dir/redis.log)"
  wait_until 20 "$redis_pid" "redis-server on 127.0.0.1:$redis_port" "$dir/redis.log" redis_pong "$redis_port"
  printf 'redis\t%s\t%s\n' "$redis_port" "$redis_pid" >> "$dir/replicas.tsv"
  shared_flags=(--shared-kv "redis://127.0.0.1:$redis_port")
fi

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

servers=""
for i in $(seq 1 "$n"); do
  name="r$i"
  "$seer" serve --host 127.0.0.1 --port 0 --replica-name "$name" ${shared_flags[@]+"${shared_flags[@]}"} "$@" \
    > "$dir/$name.out" 2> "$dir/$name.err" &
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

wait_until 30 "${pids[-1]}" "haproxy on $lb_host:$lb_port" "$dir/haproxy.log" \
  curl -sf -o /dev/null "http://$lb_host:$lb_port/health"
echo "seer: $n replicas behind http://$lb_host:$lb_port (Ctrl-C stops everything)"
echo "  curl -s http://$lb_host:$lb_port/v1/completions -H 'Content-Type: application/json' -d '{\"prompt\": \"Tom and his dog\", \"max_tokens\": 32, \"conversation\": \"new\"}'"
echo "ready" > "$dir/ready"
# Until HAProxy exits (or Ctrl-C). A replica that dies is routed around by the
# health checks; the rest keep serving.
wait "${pids[-1]}" || true
echo "deploy/start.sh: haproxy exited; stopping the replicas" >&2
