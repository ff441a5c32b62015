#!/bin/sh
# Instructions per simulated command and per small seed, counted by valgrind's cachegrind: the
# same figure on every run of one build (to a few parts in a million), however busy the machine,
# so a change of a few percent shows where wall-clock timings on a shared VM cannot
# (docs/speed.md). Two binaries: both are counted, their ratio printed, and their reports
# compared byte for byte.
# usage: instructions.sh LOCKLAB [BASELINE_LOCKLAB]    (about 30 s per binary)
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: instructions.sh LOCKLAB [BASELINE_LOCKLAB]" >&2; exit 2
fi
for b in "$@"; do
  [ -x "$b" ] || { echo "instructions.sh: $b is not an executable locklab (make build first)" >&2; exit 2; }
done
if ! command -v valgrind > /dev/null 2>&1; then
  echo "instructions.sh: valgrind is not installed (Debian: apt-get install valgrind)" >&2; exit 2
fi
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/locklab_instructions.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
# The retry study's heaviest run (no1, seed 1: 1.56M simulated commands) and the first 100 of the
# 2,000 small Redlock seeds of `make bench` (harness/experiments/small-seeds.json), one thread each.
python3 - "$HERE/harness/experiments/small-seeds.json" "$T/seeds.json" <<'PY2'
import json, sys
config = json.load(open(sys.argv[1]))
config["seeds"] = config["seeds"][:100]
json.dump(config, open(sys.argv[2], "w"))
PY2
count() {  # count BINARY TAG ARGS...: prints the instructions the command took
  bin=$1; tag=$2; shift 2
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$T/cg.$tag" \
    "$bin" "$@" --quiet --no-progress --jobs 1 > "$T/$tag.log" 2>&1 ||
    { cat "$T/$tag.log" >&2; echo "instructions.sh: $bin failed under valgrind" >&2; exit 1; }
  sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$T/cg.$tag"
}
i=0
for b in "$@"; do
  i=$((i + 1))
  d="$T/build$i"  # the same file names for both builds: compare_reports.sh compares the folders
  mkdir -p "$d"
  retry=$(count "$b" "retry$i" run --config "$HERE/harness/experiments/retry-strategies.json" --retry no1 --seed 1 \
    --backend sim --trace none --out "$d/retry.json")
  seeds=$(count "$b" "seeds$i" run --config "$T/seeds.json" --results "$d/seeds.jsonl")
  cmds=$(python3 -c "import json,sys; print(sum(r['redis']['commands'] for r in json.load(open(sys.argv[1]))['runs']))" "$d/retry.json")
  echo "$b: retry no1 seed 1: $retry instructions, $cmds simulated commands, $((retry / cmds)) per command;" \
       "100 small seeds: $seeds instructions, $((seeds / 100)) per seed"
  eval "retry_$i=$retry seeds_$i=$seeds"
done
if [ $# -eq 2 ]; then
  python3 -c "import sys; r1,r2,s1,s2=map(int,sys.argv[1:]); print(f'this / baseline: retry {r1/r2:.3f}, seeds {s1/s2:.3f}')" \
    "$retry_1" "$retry_2" "$seeds_1" "$seeds_2"
  # The build's git sha is in a report's context and in a sweep's hash; nothing else may differ.
  if bash "$HERE/harness/testing/compare_reports.sh" "$T/build1" "$T/build2" > "$T/compare.txt"; then
    echo "reports: identical (but for the build's git sha; $(tail -1 "$T/compare.txt" | sed 's/: identical//'))"
  else
    cat "$T/compare.txt"
    echo "reports: DIFFER (the two builds simulate differently)"
  fi
fi
