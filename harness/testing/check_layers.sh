#!/bin/sh
# The `layers` test: every #include "..." in a library source (not *_test.cc, *_bench.cc or
# *_main.cc) names a header of its own folder or of a folder its line of layers.txt allows.
# Prints each wrong-way include as FILE:LINE: include "X" (FOLDER may use: ...); exit 1 if any.
# usage: check_layers.sh SOURCE_DIR
top=${1:?usage: check_layers.sh SOURCE_DIR}
cd "$top" || exit 2
bad=0
checked=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  dir=${line%%:*}
  allowed=" $dir ${line#*:} "
  [ -d "$dir" ] || { echo "layers.txt names $dir, which does not exist"; bad=1; continue; }
  for f in "$dir"/*.cc "$dir"/*.h "$dir"/*.c; do
    [ -f "$f" ] || continue
    case "$f" in *_test.cc|*_bench.cc|*_main.cc) continue ;; esac
    checked=$((checked + 1))
    out=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/[^"]*"' "$f" | while IFS= read -r inc; do
      n=${inc%%:*}
      path=$(printf '%s' "$inc" | sed 's/.*"\(.*\)".*/\1/')
      folder=${path%/*}
      case "$allowed" in *" $folder "*) ;; *) echo "$f:$n: include \"$path\" ($dir may use:${line#*:})" ;; esac
    done)
    [ -n "$out" ] && { echo "$out"; bad=1; }
  done
done < harness/testing/layers.txt
# Every folder with library sources must have a line (a new folder is a new layer: place it).
for d in $(find algorithms sim harness -name '*.cc' ! -name '*_test.cc' ! -name '*_bench.cc' ! -name '*_main.cc' -exec dirname {} \; | sort -u); do
  grep -q "^$d:" harness/testing/layers.txt || [ "$d" = harness/testing ] || { echo "$d has library sources but no line in harness/testing/layers.txt"; bad=1; }
done
echo "layers: $checked library sources checked"
exit $bad
