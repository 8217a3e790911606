#!/usr/bin/env bash
# Runs the kernel tests and the backend suites that go through the quantized kernels
# once per kernel level (docs/testing.md, "Kernel levels"), straight from the test
# binaries of a build folder: the sanitizer build of .ci/run, which has no other test
# binaries for CTest to run. (The README's test command gets the same runs from CTest,
# as the level-* tests.)
#
#   scripts/test_kernel_levels.sh BUILD_DIR
#
# A level the binary or CPU cannot run, and the machine's best level (the unprefixed
# run takes it), say so and skip.
set -euo pipefail
dir=${1:?usage: scripts/test_kernel_levels.sh BUILD_DIR}
backend_filter=$(cat "$dir/tests/level-backend-filter.txt")
for level in "" scalar avx2 vnni avx512 amx; do
  # The CPU line, and why a level is not run (--gtest_brief hides skip messages).
  SEER_KERNEL_LEVEL=$level "$dir/tests/test_kernels" --gtest_filter=KernelLevel.* | grep -E '^(cpu|kernel level)' | sort -u
  for area in kernels backend; do
    filter='*'
    [ -n "$level" ] && [ "$area" = backend ] && filter=$backend_filter
    echo "== test_$area, kernel level ${level:-default}"
    SEER_KERNEL_LEVEL=$level "$dir/tests/test_$area" --gtest_brief=1 --gtest_filter="$filter"
  done
done
