#!/usr/bin/env bash
# Builds seer and runs the whole test suite (unit + end-to-end) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build
ctest --test-dir build --output-on-failure -j2 "$@"
