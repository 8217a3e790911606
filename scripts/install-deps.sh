#!/usr/bin/env bash
# Installs seer's build and test dependencies from Debian 12 packages (chromium only
# runs the live view's browser test, which skips without it; haproxy runs deploy/start.sh and
# its end-to-end test, which skips without it; libhiredis-dev is the Redis client of
# `seer serve --shared-kv`, and redis-server runs its tests and deploy/start.sh's shared KV
# tier, which skip without it).
set -euo pipefail
pkgs=(
  g++ cmake ninja-build pkg-config git curl ca-certificates
  libopenblas-dev libpcre2-dev nlohmann-json3-dev libcpp-httplib-dev libboost-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  nodejs npm
  chromium
  haproxy
  libhiredis-dev redis-server
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs from another source may already provide npm
if command -v npm >/dev/null 2>&1; then
  missing=("${missing[@]/npm}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
