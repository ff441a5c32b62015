#!/bin/sh
# A sweep sharded over GNU parallel (the README's recipe, on one machine) merges into exactly
# the unsharded sweep's report and results, byte for byte.
# usage: parallel_test.sh LOCKLAB_BINARY     (exit 77: GNU parallel is not installed: skipped)
set -eu
L=$1
if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
  echo "GNU parallel is not installed (Debian: apt-get install parallel): skipped"; exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/locklab_parallel_test.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
cd "$T"
cat > sweep.json <<'JSON'
{"algorithms": ["token", "redlock"], "clients": 3, "requests": 20, "ttl_ms": 200,
 "faults": {"gc_pause_ms": 300, "gc_pause_rate": 1, "net_delay_ms": 2, "net_dist": "long-tail"},
 "seeds": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]}
JSON
q="--quiet --no-progress"
"$L" run --config sweep.json $q --jobs 1 --out all.json --results all.jsonl > /dev/null
# 4 shards, 2 at a time; --will-cite: no citation notice.
parallel --will-cite --halt now,fail=1 -j 2 \
  "$L" run --config sweep.json $q --jobs 1 --shard {}/4 --out part-{}.json --results part-{}.jsonl ::: 1 2 3 4 \
  > /dev/null
"$L" merge merged.json part-1.json part-2.json part-3.json part-4.json > /dev/null
"$L" merge merged.jsonl part-*.jsonl > /dev/null
cmp all.json merged.json
cmp all.jsonl merged.jsonl
echo "GNU parallel: 4 shards of $(wc -l < all.jsonl) runs merged: byte-identical to the unsharded sweep"
