#!/usr/bin/env bash
# The figures of docs/quality.md: the LoCoMo evaluation on the five shared conversations,
# arms wiki / no-wiki / bm25-turns at 1,000 and 2,000 tokens.
# Usage: bench/run_quality.sh [OUT_DIR]   (default bench/out/quality; writes
# results.json, report.md and chart-*.png there and prints the report).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${LOCOMO_DIR:-../shared/data/locomo}"
OUT="${1:-bench/out/quality}"
DREAM="${DREAM:-dream}"
command -v "$DREAM" >/dev/null 2>&1 || DREAM=.venv/bin/dream
"$DREAM" eval locomo "$DATA"/conv-26.json "$DATA"/conv-30.json "$DATA"/conv-41.json \
  "$DATA"/conv-42.json "$DATA"/conv-43.json --budget 1000,2000 --out "$OUT"
