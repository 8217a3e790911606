#!/usr/bin/env bash
# Builds the retraining predictor's concurrency test under ThreadSanitizer and runs it
# (docs/predictor.md, "Online retraining"). The project's sanitizer build is ASan+UBSan;
# this compiles only the sources the test needs, so it takes a minute, not a rebuild.
# Usage: scripts/tsan-predict.sh [out-dir] [gtest repeat count]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-tsan-predict}
repeat=${2:-20}
mkdir -p "$out"
srcs=("$root"/src/predict/*.cc "$root/src/common/progress.cc" "$root/src/scheduler/request.cc")
${CXX:-g++} -std=c++20 -O1 -g -fsanitize=thread -fno-omit-frame-pointer \
  -I"$root/src" -I"$root/tests" -DSEER_DATA_DIR="\"$root/data\"" \
  "$root/tests/predict/retraining_predictor_test.cc" "${srcs[@]}" \
  -lgtest -lgtest_main -lfmt -lpthread -o "$out/tsan_retraining_predictor"
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" "$out/tsan_retraining_predictor" --gtest_repeat="$repeat" --gtest_brief=1
echo "ThreadSanitizer: no data races in $repeat runs of the retraining predictor tests"
