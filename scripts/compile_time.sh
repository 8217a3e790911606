#!/usr/bin/env bash
# Times the compilation of source files under the flag sets CI's builds could use
# (docs/testing.md, "CI"): GCC -O2 with full, line-table or no debug info, and a Debug
# ASan+UBSan build with GCC and with clang. Prints one row per file, seconds per variant.
#
#   scripts/compile_time.sh src/sim/catalog.cc tests/template/fixtures_test.cc
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: scripts/compile_time.sh FILE.cc..." >&2; exit 2; }
out=$(mktemp --suffix=.o)
trap 'rm -f "$out"' EXIT
common=(-DFMT_SHARED "-DSEER_DATA_DIR=\"$PWD/data\"" '-DSEER_SHARED_DIR="."' '-DSEER_SOURCE_DIR="."'
        '-DSEER_BINARY="seer"' -Isrc -Itests -Wall -Wextra -Wno-unused-parameter -std=gnu++20)
sanitize=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -march=x86-64-v3)
names=("gcc -O2 -g" "gcc -O2 -g1" "gcc -O2" "gcc asan -O0 -g" "clang asan -O0 -g")
flags=("g++ -O2 -g -DNDEBUG -march=native" "g++ -O2 -g1 -DNDEBUG -march=native" "g++ -O2 -DNDEBUG -march=native"
       "g++ -O0 -g ${sanitize[*]}" "clang++ -O0 -g -Wthread-safety ${sanitize[*]}")
printf '| file |'; printf ' %s |' "${names[@]}"; printf '\n|---|'; printf -- '---:|%.0s' "${names[@]}"; echo
for f in "$@"; do
  printf '| %s |' "$f"
  for v in "${flags[@]}"; do
    read -ra cmd <<<"$v"
    s=$(date +%s.%N)
    "${cmd[@]}" "${common[@]}" -c "$f" -o "$out"
    printf ' %.1f |' "$(echo "$(date +%s.%N) - $s" | bc)"
  done
  echo
done
