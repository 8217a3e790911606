#!/usr/bin/env bash
# Builds seer and runs the whole test suite (unit + end-to-end) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
# The official `openai` npm client for an end-to-end test (pinned by package-lock.json);
# without it that test skips with a message.
if [ ! -d tests/e2e/node/node_modules ] && command -v npm >/dev/null 2>&1; then
  npm ci --prefix tests/e2e/node --no-audit --no-fund --loglevel=error ||
    echo "warning: npm ci failed; the openai-client test will skip" >&2
fi
scripts/build.sh build
ctest --test-dir build --output-on-failure -j2 "$@"
