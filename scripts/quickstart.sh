#!/usr/bin/env bash
# Quick start: installs the dependencies (Debian packages), builds only the `seer`
# executable (no tests) and serves the built-in model (stories260K: a 260K-parameter
# Llama trained on TinyStories; it writes children's stories, nothing else) on
# http://127.0.0.1:8080 with an OpenAI-compatible API. Ctrl-C stops it.
#
# Usage: scripts/quickstart.sh [--no-deps] [--build-dir DIR] [--port N] [-- SEER-SERVE-FLAGS...]
#   --no-deps      skip scripts/install-deps.sh (the dependencies are installed)
#   --build-dir    CMake build directory (default: build)
#   --port         port to listen on (default 8080; 0 picks a free one)
#   after --       more `seer serve` flags, e.g. -- --model my.gguf --tbt-slo 0.05
set -euo pipefail
cd "$(dirname "$0")/.."
deps=1
build=build
port=8080
while (($#)); do
  case "$1" in
    --no-deps) deps=0 ;;
    --build-dir) build=$2; shift ;;
    --port) port=$2; shift ;;
    --) shift; break ;;
    *) echo "quickstart: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
if ((deps)); then scripts/install-deps.sh; fi
cmake -S . -B "$build" -G Ninja >/dev/null
ninja -C "$build" seer
# seer serve prints the URL and a curl line to paste once it listens: a /v1/completions
# request with the prompt "Once upon a time", which stories260K continues. It has no chat
# template, so /v1/chat/completions answers garble (the ChatML fallback) until --model
# gives a model that has one.
exec "$build/seer" serve --port "$port" "$@"
