#!/usr/bin/env bash
# compare_reports.sh BEFORE AFTER (two capture_reports.sh outputs): every report byte-identical except context.git_sha
# and the folder a scenario file was read from (its "file"), every results file (.jsonl) except its sweep hash
# (which names the build); stdout text identical
# except lines naming the output path or the sha.
set -u
A=$1; B=$2; bad=0; n=0
while IFS= read -r f; do
  n=$((n+1))
  if [ ! -f "$B/$f" ]; then echo "missing: $f"; bad=1; continue; fi
  case "$f" in
    *.json) if ! cmp -s <(sed -E 's/"git_sha": "[0-9a-f]+"/"git_sha": "X"/; s#"file": "[^"]*/harness/scenarios/#"file": "harness/scenarios/#' "$A/$f") <(sed -E 's/"git_sha": "[0-9a-f]+"/"git_sha": "X"/; s#"file": "[^"]*/harness/scenarios/#"file": "harness/scenarios/#' "$B/$f"); then echo "DIFF: $f"; bad=1; fi;;
    *.jsonl) if ! cmp -s <(sed -E 's/"sweep":"[0-9a-f]+"/"sweep":"X"/' "$A/$f") <(sed -E 's/"sweep":"[0-9a-f]+"/"sweep":"X"/' "$B/$f"); then echo "DIFF: $f"; bad=1; fi;;
    *.txt) if ! cmp -s <(sed "s#$A#OUT#g" "$A/$f") <(sed "s#$B#OUT#g" "$B/$f"); then echo "DIFF(text): $f"; bad=1; fi;;
  esac
done < <(cd "$A" && find . -type f | sort)
echo "compared $n files: $([ $bad = 0 ] && echo identical || echo DIFFERENT)"
exit $bad
