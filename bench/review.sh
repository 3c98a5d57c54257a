#!/usr/bin/env bash
# review_diff benchmark: cairn's briefing latency and size on Flask 3.0.3 and Django 5.0.6 for
# small realistic diffs, beside code-review-graph's detect-changes / get_review_context outputs
# on the same diffs (measured separately, saved as text, counted here with the same tokenizer).
#
# Needs (from bench/run.sh and a one-time setup, see docs/src/benchmarks.md):
#   $CACHE/review/{flask,django}-git   git repositories of the corpora (one commit each)
#   $CACHE/review/*.diff               flask-dispatch, flask-helpers, django-count, django-middleware
#   $CACHE/review/crg-*-{detect,review}.txt   code-review-graph's outputs for those diffs
# Usage: bench/review.sh [ITERATIONS]
set -euo pipefail
CACHE="${CAIRN_BENCH_CACHE:-$HOME/.cache/cairn/bench}"
TARGET="${CARGO_TARGET_DIR:-$HOME/.cache/cairn/target}"
PROFILE="${CAIRN_BENCH_PROFILE:-release}"
CAIRN="$TARGET/$PROFILE/cairn"
BENCH="$TARGET/$PROFILE/examples/review_bench"
R="$CACHE/review"
N="${1:-30}"
for corpus in flask django; do
    data="$R/data-$corpus"
    "$CAIRN" --repo "$R/$corpus-git" --data-dir "$data" index >&2
    "$BENCH" --repo "$R/$corpus-git" --data-dir "$data" --iterations "$N" --save "$R/out" "$R/$corpus"-*.diff
    for diff in "$R/$corpus"-*.diff; do
        name="$(basename "$diff" .diff)"
        start=$(date +%s.%N)
        "$CAIRN" --repo "$R/$corpus-git" --data-dir "$data" review --diff "$diff" > /dev/null
        echo "{\"cli\": \"$name\", \"seconds\": $(echo "$(date +%s.%N) - $start" | bc)}"
    done
done
"$BENCH" --count "$R"/crg-*-detect.txt "$R"/crg-*-review.txt
