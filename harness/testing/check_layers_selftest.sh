#!/bin/sh
# The `layers_catch_wrong_way` test: check_layers.sh must fail on a tree with one wrong-way
# include (sim/ reaching up into harness/run/) and pass on the same tree without it.
# usage: check_layers_selftest.sh SOURCE_DIR
top=${1:?usage: check_layers_selftest.sh SOURCE_DIR}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/harness/testing" "$tmp/sim" "$tmp/harness/run"
cp "$top/harness/testing/layers.txt" "$tmp/harness/testing/"
# Every folder layers.txt names must exist in the fixture.
grep -v '^#' "$tmp/harness/testing/layers.txt" | cut -d: -f1 | while read -r d; do [ -n "$d" ] && mkdir -p "$tmp/$d"; done
printf '#include "algorithms/env.h"\n' > "$tmp/sim/ok.cc"
printf '#include "sim/ok.h"\n' > "$tmp/harness/run/up.cc"
sh "$top/harness/testing/check_layers.sh" "$tmp" >/dev/null || { echo "a tree with only right-way includes was refused"; exit 1; }
printf '#include "harness/run/runtime.h"\n' > "$tmp/sim/wrong.cc"
out=$(sh "$top/harness/testing/check_layers.sh" "$tmp") && { echo "a wrong-way include was not caught"; exit 1; }
echo "$out" | grep -q 'sim/wrong.cc:1: include "harness/run/runtime.h"' || { echo "unexpected report: $out"; exit 1; }
echo "layers_catch_wrong_way: caught: $(echo "$out" | head -n 1)"
