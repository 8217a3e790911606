#!/usr/bin/env bash
# Quick start: install dependencies, build, and run seer on a model. Without a
# model file it makes a small random-weights model (clearly labelled) and generates
# from it. Usage: scripts/quickstart.sh [MODEL.gguf]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
model=${1:-}
if [ -z "$model" ]; then
  model=build/tiny-random.gguf
  [ -f "$model" ] || ./build/seer make-model --shape tiny --type f32 --out "$model"
  echo "NOTE: no model given; using $model, a tiny model with RANDOM weights (its text is gibberish)." >&2
fi
./build/seer generate --model "$model" --prompt "Once upon a time" -n 32
