#!/usr/bin/env bash
# Dream's output as Git tree ids, to show a refactor changed no byte of memory/: build the same
# stores with the code of checkout WORKTREE (its .venv) and print each store's memory/ tree id;
# run it on two commits and diff the two files. LoCoMo comes from ../shared/data/locomo beside it.
# Usage: bench/memory_trees.sh WORKTREE OUTFILE   (about 5 minutes on 2 cores)
set -euo pipefail
WT=$(cd "$1" && pwd); OUT=$(realpath -m "$2"); BIN=$WT/.venv/bin
T=$(mktemp -d /tmp/trees.XXXX)
cd "$WT"
run_all() { # dream run until nothing is pending
  for i in 1 2 3 4 5 6; do
    s=$($BIN/dream run --store "$1" --allow-unapproved --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin).get("status",""))' || true)
    [ "$s" = "committed" ] || break
  done
}
{
for c in 26 30 41 42 43; do
  S=$T/conv-$c; $BIN/memoryfs init "$S" --user alex --assistant atlas >/dev/null 2>&1
  $BIN/memoryfs ingest $WT/../shared/data/locomo/conv-$c.json --format locomo --store "$S" >/dev/null 2>&1
  run_all "$S"; echo "locomo conv-$c $(git -C "$S" rev-parse HEAD:memory)"
done
# the sample ships in the package; older checkouts keep it at the top (labels stay the same)
SAMPLE=dream/data/sample_memory; [ -d "$SAMPLE" ] || SAMPLE=sample_memory
for d in sample_memory/transcripts sample_memory/chatlogs/logs bench/data/chatlogs-heldout/logs; do
  S=$T/$(echo $d | tr / _); $BIN/memoryfs init "$S" --user alex --assistant atlas >/dev/null 2>&1
  src=${d/#sample_memory/$SAMPLE}
  for f in $src/*.md $src/*.jsonl; do [ -f "$f" ] && [ "$(basename $f)" != README.md ] && $BIN/memoryfs ingest "$f" --store "$S" >/dev/null 2>&1 || true; done
  run_all "$S"; echo "chat $d $(git -C "$S" rev-parse HEAD:memory)"
done
S=$T/synthetic
$BIN/python - "$S" <<'PY'
import sys; sys.path.insert(0, "bench")
from pathlib import Path
from synthetic import write_sessions
try:
    from memoryfs.store.store import init_store
except ImportError:
    from memoryfs.store import init_store
s = init_store(Path(sys.argv[1]), "dana", "atlas")
write_sessions(s, 0, 300, 7)
PY
run_all "$S"; echo "synthetic 300-full $(git -C "$S" rev-parse HEAD:memory)"
$BIN/python - "$S" <<'PY'
import sys; sys.path.insert(0, "bench")
from pathlib import Path
from synthetic import write_sessions
try:
    from memoryfs.store.store import Store
except ImportError:
    from memoryfs.store import Store
write_sessions(Store.open(Path(sys.argv[1])), 300, 320, 7)
PY
run_all "$S"; echo "synthetic 300+20 $(git -C "$S" rev-parse HEAD:memory)"
} > "$OUT"
rm -rf "$T"
