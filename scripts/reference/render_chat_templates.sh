#!/usr/bin/env bash
# Regenerates the chat-template fixtures (tests/data/chat_templates/<family>/<case>.txt
# and .error) with the reference renderer @huggingface/jinja. The npm package goes
# into a scratch directory, never into the repository. Usage:
#   scripts/reference/render_chat_templates.sh [scratch dir, default /tmp/jinja-ref]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=${1:-/tmp/jinja-ref}
version=0.5.11
mkdir -p "$scratch"
if [ ! -f "$scratch/node_modules/@huggingface/jinja/package.json" ] ||
   ! grep -q "\"version\": \"$version\"" "$scratch/node_modules/@huggingface/jinja/package.json"; then
  (cd "$scratch" && [ -f package.json ] || npm init -y >/dev/null) 
  npm install --prefix "$scratch" --no-audit --no-fund --loglevel=error "@huggingface/jinja@$version"
fi
cp "$repo/scripts/reference/render_chat_templates.mjs" "$scratch/"
node "$scratch/render_chat_templates.mjs" "$repo/tests/data/chat_templates"
python3 "$repo/scripts/reference/render_chat_templates_jinja2.py" "$repo/tests/data/chat_templates"
