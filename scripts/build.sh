#!/usr/bin/env bash
# Configures and builds seer into build/ (or $1), Release with debug info.
set -euo pipefail
dir=${1:-build}
shift || true
cmake -S "$(dirname "$0")/.." -B "$dir" -G Ninja "$@" >/dev/null
ninja -C "$dir"
