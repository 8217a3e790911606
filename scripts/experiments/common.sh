# Sourced by the experiment scripts (mixed.sh, ecoserve.sh): the shared defaults,
# argument parsing, checks, scratch directory and point recording.
#   source "$(dirname "$0")/common.sh"
#   num=600; traces="..."                  # the script's defaults
#   experiment_option() { ... }            # optional: the script's own "--flag value" options
#   parse_experiment_args "$@"; start_experiment
# shellcheck shell=bash
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seer=$root/build/seer
data=$root/../shared/data
out=$root/docs/results

# --seer, --data-dir, --num, --out, --traces; anything else goes to the script's
# experiment_option NAME VALUE (returns non-zero for an unknown NAME).
parse_experiment_args() {
  while [[ $# -gt 0 ]]; do
    case $1 in
      --seer) seer=$2; shift 2 ;;
      --data-dir) data=$2; shift 2 ;;
      --num) num=$2; shift 2 ;;
      --out) out=$2; shift 2 ;;
      --traces) traces=$2; shift 2 ;;
      *)
        if [[ $# -ge 2 ]] && declare -F experiment_option >/dev/null && experiment_option "$1" "$2"; then
          shift 2
        else
          echo "unknown argument $1" >&2
          exit 2
        fi ;;
    esac
  done
}

# Checks the binary and the data, creates $out and the scratch directory $work
# (removed on exit).
start_experiment() {
  [[ -x $seer ]] || { echo "no seer binary at $seer (build it: ninja -C build seer)" >&2; exit 1; }
  [[ -d $data/length-traces ]] || { echo "no datasets under $data (give --data-dir)" >&2; exit 1; }
  mkdir -p "$out"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# append_point FILE JSON key=value...: JSON (an object from `seer sim --json`) with
# the given fields added (numbers where they parse as one) as one line of FILE.
append_point() {
  local file=$1 json=$2
  shift 2
  python3 - "$json" "$@" >> "$file" <<'PY'
import json, sys
j = json.loads(sys.argv[1] or "{}")
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    try:
        j[k] = float(v)
    except ValueError:
        j[k] = v
print(json.dumps(j))
PY
}
