#!/usr/bin/env bash
# cairn benchmark driver: cairn vs code-review-graph on Flask 3.0.3 and Django 5.0.6 (PyPI sdists).
#
# Usage: bench/run.sh
#
# Environment:
#   CAIRN_BENCH_CACHE        cache dir (default $HOME/.cache/cairn/bench): sdists/, corpus/,
#                            crg-venv/, crg/ (cached crg measurements), work/ (scratch), results.json
#   CARGO_TARGET_DIR         default $HOME/.cache/cairn/target
#   CAIRN_BIN                cairn binary (default $CARGO_TARGET_DIR/release/cairn)
#   CAIRN_QUERY_BENCH        query bench binary (default $CARGO_TARGET_DIR/release/examples/query_bench);
#                            skipped with a note when missing
#   CAIRN_BENCH_CORPORA      which corpora, default "flask django"
#   CAIRN_BENCH_RUNS         timed runs per cairn measurement, default 3 (median reported)
#   CAIRN_BENCH_SKIP_CAIRN=1 measure code-review-graph only
#   CAIRN_BENCH_SKIP_CRG=1   do not install/run code-review-graph (uses nothing of it)
#   CAIRN_BENCH_CRG_FRESH=1  re-measure code-review-graph even when a cached measurement exists
#                            (its version and the corpora are pinned, so by default the last
#                            measurement on the same machine kind is reused: Django takes ~2.5 min)
#
# code-review-graph 2.3.9 (found by reading its cli.py / incremental.py and trying it):
#   build:    env -u CRG_DATA_DIR -u CRG_REPO_ROOT CACHE/crg-venv/bin/code-review-graph build --repo COPY
#             ("Full graph build (re-parse all files)", with default post-processing = full:
#             flows, communities, FTS). It prints "Full build: N files, N nodes, N edges (postprocess=full)".
#   database: COPY/.code-review-graph/graph.db (plus a .gitignore; -wal/-shm if left behind).
#             CRG_DATA_DIR would move it, and --data-dir also writes an entry into a registry under
#             ~/.code-review-graph, so the driver uses neither.
#   Without a .git directory it walks every file (rglob) and parses all languages it knows, not
#   only Python: its file count can exceed the .py count (e.g. Django's admin JavaScript).
#   Tried on this 2-core machine while a cargo build ran beside it (load ~3): Flask 84 files,
#   6-8 s, DB 8.7-15.5 MB; Django 2820 files, 137-147 s, peak RSS ~575 MB, DB 449-558 MB.
#   The DB holds absolute paths, so its size depends on where the copy lives (the ranges above
#   are 18- vs 42-80-character paths): both tools therefore index a copy at the same path.
#
# Output: Markdown tables on stdout (progress on stderr), all numbers in CACHE/results.json.
# Exit 0 when everything was measured, 1 when a measured command failed (the report is still
# written), 3 when something was skipped because a prerequisite is missing (listed at the end).

set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOL="$BENCH_DIR/benchtool.py"

CACHE="${CAIRN_BENCH_CACHE:-$HOME/.cache/cairn/bench}"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn/target}"
CAIRN_BIN="${CAIRN_BIN:-$CARGO_TARGET_DIR/release/cairn}"
CAIRN_QUERY_BENCH="${CAIRN_QUERY_BENCH:-$CARGO_TARGET_DIR/release/examples/query_bench}"
CORPORA="${CAIRN_BENCH_CORPORA:-flask django}"
RUNS="${CAIRN_BENCH_RUNS:-3}"
SKIP_CAIRN="${CAIRN_BENCH_SKIP_CAIRN:-0}"
SKIP_CRG="${CAIRN_BENCH_SKIP_CRG:-0}"
CRG_FRESH="${CAIRN_BENCH_CRG_FRESH:-0}"
CRG_VERSION="2.3.9"
CRG_REPEAT_UNDER_S=60   # crg builds faster than this are run 3 times, slower ones once

NOTES=()     # go into results.json and under the tables
MISSING=()   # prerequisites that were missing: makes the exit code 3
FAILURES=()  # measured commands that failed: makes the exit code 1

say()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }
note() { NOTES+=("$*"); warn "$*"; }
failure() { FAILURES+=("$*"); NOTES+=("FAILED: $*"); printf 'FAILED: %s\n' "$*" >&2; }
missing() { MISSING+=("$*"); NOTES+=("missing: $*"); printf 'MISSING: %s\n' "$*" >&2; }

# Corpus table: pip requirement, sdist file name, directory inside the sdist, file edited for re-index.
corpus_spec() {
    case "$1" in
        flask)
            VERSION=3.0.3; PIP_REQ="flask==3.0.3"; SDIST="flask-3.0.3.tar.gz"
            TOPDIR="flask-3.0.3"; EDIT_FILE="src/flask/app.py" ;;
        django)
            VERSION=5.0.6; PIP_REQ="django==5.0.6"; SDIST="Django-5.0.6.tar.gz"
            TOPDIR="Django-5.0.6"; EDIT_FILE="django/db/models/query.py" ;;
        *) die "unknown corpus '$1' in CAIRN_BENCH_CORPORA (known: flask django)" ;;
    esac
    CORPUS_NAME="$1-$VERSION"
    CORPUS_DIR="$CACHE/corpus/$CORPUS_NAME"
}

# Prints the nearest ancestor of $1 (or $1) that holds .git, if any.
git_root_of() {
    local dir="$1"
    while [[ "$dir" != "/" && -n "$dir" ]]; do
        if [[ -e "$dir/.git" ]]; then printf '%s\n' "$dir"; return 0; fi
        dir="$(dirname "$dir")"
    done
    return 1
}

# Where both tools index their fresh copy of a corpus: the same path for both, because
# code-review-graph stores absolute paths and its DB grows with the path's length (Flask:
# 8.7 MB at an 18-character path, 15.5 MB at an 80-character one).
copy_path() { printf '%s\n' "$CACHE/work/$CORPUS_NAME"; }

# Median of the numbers given as arguments (for progress lines only; the report computes its own).
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# Last record's field from a JSONL log.
last_field() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
rec = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
for key in sys.argv[2].split("."):
    rec = rec.get(key) if isinstance(rec, dict) else None
print("" if rec is None else rec)
EOF
}

# ------------------------------------------------------------------ preflight
say "preflight"
command -v python3 >/dev/null || die "python3 not found: the driver's helpers need Python >= 3.10"
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || die "python3 is $(python3 -V 2>&1); code-review-graph $CRG_VERSION needs Python >= 3.10"
[[ -f "$TOOL" ]] || die "helper $TOOL is missing (it ships next to run.sh)"
for tool in tar du cp find awk sort; do
    command -v "$tool" >/dev/null || die "'$tool' not found on PATH"
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "CAIRN_BENCH_RUNS must be a positive integer, not '$RUNS'"

mkdir -p "$CACHE/sdists" "$CACHE/corpus" "$CACHE/crg" "$CACHE/work" "$CACHE/runs" \
    || die "cannot create the cache directory $CACHE"
CACHE="$(cd "$CACHE" && pwd)"
if root="$(git_root_of "$CACHE/work")"; then
    die "the cache $CACHE is inside the git work tree $root: cairn would index that whole repository instead of the corpus copy; set CAIRN_BENCH_CACHE to a directory outside any git checkout"
fi

MACHINE_JSON="$(python3 "$TOOL" machine)"
printf '==> machine: nproc=%s, CPU: %s, memory %s GB, load average (1 min) %s\n' \
    "$(nproc 2>/dev/null || echo '?')" \
    "$(grep -m1 -i '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || echo unknown)" \
    "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["mem_total_gb"])' "$MACHINE_JSON")" \
    "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')" >&2
load="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)"
if awk -v l="$load" 'BEGIN {exit !(l > 0.5)}'; then
    note "load average was $load when the run started: something else is using the CPU and the timings are noisy"
fi
MACHINE_KEY="$(python3 -c 'import json,sys; m=json.loads(sys.argv[1]); print(str(m["nproc"]) + "|" + str(m["cpu_model"]))' "$MACHINE_JSON")"

HAVE_CAIRN=0
if [[ "$SKIP_CAIRN" == 1 ]]; then
    note "cairn not measured (CAIRN_BENCH_SKIP_CAIRN=1)"
elif [[ ! -e "$CAIRN_BIN" ]]; then
    die "cairn binary not found at $CAIRN_BIN: build it (cargo build --release, CARGO_TARGET_DIR=$CARGO_TARGET_DIR) or set CAIRN_BIN; CAIRN_BENCH_SKIP_CAIRN=1 measures code-review-graph only"
elif [[ ! -x "$CAIRN_BIN" ]]; then
    die "cairn binary $CAIRN_BIN is not executable"
elif ! "$CAIRN_BIN" --version >/dev/null 2>&1; then
    die "cairn binary $CAIRN_BIN does not run ('$CAIRN_BIN --version' failed)"
else
    HAVE_CAIRN=1
    say "cairn: $CAIRN_BIN ($("$CAIRN_BIN" --version 2>&1 | head -n1))"
fi
HAVE_QUERY_BENCH=0
if [[ "$HAVE_CAIRN" == 1 ]]; then
    if [[ -x "$CAIRN_QUERY_BENCH" ]]; then
        HAVE_QUERY_BENCH=1
    else
        note "query latency not measured: no executable query_bench at $CAIRN_QUERY_BENCH (build it with cargo build --release --example query_bench, or set CAIRN_QUERY_BENCH)"
    fi
fi

# ------------------------------------------------------------------ corpora
fetch_corpus() {
    local name="$1"
    corpus_spec "$name"
    local sdist
    sdist="$(find "$CACHE/sdists" -maxdepth 1 -iname "$SDIST" -print -quit)"
    if [[ -z "$sdist" ]]; then
        say "downloading the $PIP_REQ sdist"
        if ! python3 -m pip download --no-deps --no-binary :all: "$PIP_REQ" -d "$CACHE/sdists" >"$CACHE/sdists/pip-$name.log" 2>&1; then
            tail -n 20 "$CACHE/sdists/pip-$name.log" >&2
            die "pip download of the $PIP_REQ sdist failed (log: $CACHE/sdists/pip-$name.log); is python3 -m pip available and the package index reachable?"
        fi
        sdist="$(find "$CACHE/sdists" -maxdepth 1 -iname "$SDIST" -print -quit)"
        [[ -n "$sdist" ]] || die "pip download of $PIP_REQ did not leave $SDIST in $CACHE/sdists"
    fi
    if [[ -f "$CACHE/corpus/$CORPUS_NAME.extracted" && -d "$CORPUS_DIR" ]]; then
        say "$CORPUS_NAME already extracted"
    else
        say "extracting $(basename "$sdist") into $CORPUS_DIR"
        local tmp="$CACHE/corpus/.extract-$name"
        rm -rf "$tmp" "$CORPUS_DIR" "$CACHE/corpus/$CORPUS_NAME.extracted"
        mkdir -p "$tmp"
        tar -xzf "$sdist" -C "$tmp" || die "cannot extract $sdist (corrupt download? delete it and re-run)"
        [[ -d "$tmp/$TOPDIR" ]] || die "$sdist does not contain the directory $TOPDIR"
        mv "$tmp/$TOPDIR" "$CORPUS_DIR"
        rm -rf "$tmp"
        touch "$CACHE/corpus/$CORPUS_NAME.extracted"
    fi
    [[ -f "$CORPUS_DIR/$EDIT_FILE" ]] || die "$CORPUS_DIR/$EDIT_FILE (the file edited for the re-index) is missing"
    local py
    py="$(find "$CORPUS_DIR" -type f -name '*.py' | wc -l | tr -d ' ')"
    say "$CORPUS_NAME: $py .py files"
    python3 "$TOOL" record --log "$LOG" --tag kind=corpus --tag "corpus=$CORPUS_NAME" \
        --tag "py_files=$py" --tag "version=$VERSION" --tag "path=$CORPUS_DIR" --tag "edit_file=$EDIT_FILE"
}

LOG="$CACHE/runs/current.jsonl"
: >"$LOG"
for name in $CORPORA; do fetch_corpus "$name"; done

# ------------------------------------------------------------------ code-review-graph venv
CRG=""
if [[ "$SKIP_CRG" == 1 ]]; then
    note "code-review-graph not measured (CAIRN_BENCH_SKIP_CRG=1)"
else
    VENV="$CACHE/crg-venv"
    have_crg() {
        [[ -x "$VENV/bin/code-review-graph" ]] &&
            [[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("code-review-graph"))' 2>/dev/null)" == "$CRG_VERSION" ]]
    }
    if have_crg; then
        say "code-review-graph $CRG_VERSION already installed in $VENV"
    else
        say "installing code-review-graph $CRG_VERSION into $VENV"
        rm -rf "$VENV"
        if ! python3 -m venv "$VENV" >"$CACHE/crg-install.log" 2>&1; then
            tail -n 20 "$CACHE/crg-install.log" >&2
            missing "code-review-graph: 'python3 -m venv' failed (Debian: apt-get install python3-venv); log $CACHE/crg-install.log"
        elif ! "$VENV/bin/pip" install "code-review-graph==$CRG_VERSION" >>"$CACHE/crg-install.log" 2>&1; then
            tail -n 20 "$CACHE/crg-install.log" >&2
            missing "code-review-graph: pip install code-review-graph==$CRG_VERSION failed; log $CACHE/crg-install.log"
            rm -rf "$VENV"
        fi
    fi
    if have_crg; then
        CRG="$VENV/bin/code-review-graph"
    elif [[ -d "$VENV" ]]; then
        missing "code-review-graph: $VENV exists but has no working code-review-graph $CRG_VERSION (delete it and re-run)"
    fi
fi

# ------------------------------------------------------------------ cairn
bench_cairn() {
    local name="$1"
    corpus_spec "$name"
    local repo data work
    repo="$(copy_path "$name")"; data="$CACHE/work/cairn-data-$CORPUS_NAME"; work="$CACHE/work/logs-cairn-$CORPUS_NAME"
    local i rc cold_walls=() re_walls=()
    say "cairn on $CORPUS_NAME: $RUNS cold index(es) + re-index(es) of a copy at $repo"
    for ((i = 1; i <= RUNS; i++)); do
        rm -rf "$work" "$repo" "$data"
        mkdir -p "$work"
        cp -a "$CORPUS_DIR" "$repo"
        rc=0
        python3 "$TOOL" measure --log "$LOG" --parse json \
            --tag "corpus=$CORPUS_NAME" --tag kind=cairn_cold --tag "run=$i" --tag "repo_path=$repo" \
            --du "store_bytes=$data/store" \
            --stdout "$work/cold.json" --stderr "$work/cold.err" -- \
            "$CAIRN_BIN" --repo "$repo" --data-dir "$data" index --json || rc=$?
        if [[ "$rc" != 0 ]]; then
            tail -n 20 "$work/cold.err" >&2
            failure "$CORPUS_NAME: cairn index failed (exit $rc), see $work/cold.err; cairn runs stopped"
            return 0
        fi
        [[ -d "$data/store" ]] || note "$CORPUS_NAME: cairn left no $data/store directory: store size unknown"
        cold_walls+=("$(last_field "$LOG" wall_s)")

        printf '# cairn bench: edit for the incremental re-index, run %s\n' "$i" >>"$repo/$EDIT_FILE"
        rc=0
        python3 "$TOOL" measure --log "$LOG" --parse json \
            --tag "corpus=$CORPUS_NAME" --tag kind=cairn_reindex --tag "run=$i" \
            --tag "edited_file=$EDIT_FILE" --du "store_bytes=$data/store" \
            --stdout "$work/reindex.json" --stderr "$work/reindex.err" -- \
            "$CAIRN_BIN" --repo "$repo" --data-dir "$data" index --json || rc=$?
        if [[ "$rc" != 0 ]]; then
            tail -n 20 "$work/reindex.err" >&2
            failure "$CORPUS_NAME: cairn re-index failed (exit $rc), see $work/reindex.err; cairn runs stopped"
            return 0
        fi
        re_walls+=("$(last_field "$LOG" wall_s)")
        local parsed
        parsed="$(last_field "$LOG" output.parsed)"
        [[ "$parsed" == 1 ]] || warn "$CORPUS_NAME: re-index parsed '$parsed' files, expected 1"
        say "  run $i: cold $(printf '%.2f' "${cold_walls[-1]}") s, re-index $(printf '%.3f' "${re_walls[-1]}") s (parsed $parsed)"
    done
    say "  median: cold $(median "${cold_walls[@]}") s, re-index $(median "${re_walls[@]}") s"

    if [[ "$HAVE_QUERY_BENCH" == 1 ]]; then
        say "query_bench on $CORPUS_NAME (200 iterations)"
        rc=0
        python3 "$TOOL" measure --log "$LOG" --parse json \
            --tag "corpus=$CORPUS_NAME" --tag kind=query_bench \
            --stdout "$work/query.json" --stderr "$work/query.err" -- \
            "$CAIRN_QUERY_BENCH" --repo "$repo" --data-dir "$data" --iterations 200 || rc=$?
        if [[ "$rc" != 0 ]]; then
            tail -n 20 "$work/query.err" >&2
            failure "$CORPUS_NAME: query_bench failed (exit $rc), see $work/query.err"
        fi
    fi
}

if [[ "$HAVE_CAIRN" == 1 ]]; then
    for name in $CORPORA; do bench_cairn "$name"; done
fi

# ------------------------------------------------------------------ code-review-graph builds
bench_crg() {
    local name="$1"
    corpus_spec "$name"
    local crglog="$CACHE/crg/$CORPUS_NAME.jsonl" key="$CACHE/crg/$CORPUS_NAME.machine"
    local reuse_key
    reuse_key="$MACHINE_KEY|$CRG_VERSION|$(copy_path "$name")"
    if [[ "$CRG_FRESH" != 1 && -s "$crglog" && -f "$key" && "$(cat "$key")" == "$reuse_key" ]] &&
        grep -q '"rc": 0' "$crglog"; then
        say "code-review-graph on $CORPUS_NAME: reusing the measurement in $crglog (CAIRN_BENCH_CRG_FRESH=1 re-measures)"
        return 0
    fi
    [[ -n "$CRG" ]] || return 0
    local repo work
    repo="$(copy_path "$name")"; work="$CACHE/work/logs-crg-$CORPUS_NAME"
    local i rc wall runs=1 walls=()
    local newlog="$crglog.partial"
    rm -f "$crglog" "$key"
    : >"$newlog"
    for ((i = 1; i <= runs; i++)); do
        rm -rf "$work" "$repo"
        mkdir -p "$work"
        cp -a "$CORPUS_DIR" "$repo"
        say "code-review-graph build on $CORPUS_NAME, run $i, copy at $repo (Django takes minutes)"
        rc=0
        python3 "$TOOL" measure --log "$newlog" --parse crg \
            --tag "corpus=$CORPUS_NAME" --tag kind=crg_build --tag "run=$i" \
            --tag "measured_at=$(date -Iseconds)" \
            --tag "command=code-review-graph build --repo COPY (DB: COPY/.code-review-graph)" \
            --tag "repo_path=$repo" \
            --du "db_bytes=$repo/.code-review-graph" \
            --stdout "$work/build.out" --stderr "$work/build.err" -- \
            env -u CRG_DATA_DIR -u CRG_REPO_ROOT "$CRG" build --repo "$repo" || rc=$?
        if [[ "$rc" != 0 ]]; then
            tail -n 20 "$work/build.err" >&2
            failure "$CORPUS_NAME: code-review-graph build failed (exit $rc), see $work/build.err"
            mv "$newlog" "$crglog"   # reported as failed, re-measured next time (no machine key)
            return 0
        fi
        [[ -f "$repo/.code-review-graph/graph.db" ]] ||
            note "$CORPUS_NAME: code-review-graph left no $repo/.code-review-graph/graph.db: its database moved?"
        wall="$(last_field "$newlog" wall_s)"
        walls+=("$wall")
        say "  run $i: $(printf '%.1f' "$wall") s, DB $(last_field "$newlog" db_bytes) bytes"
        if [[ "$i" == 1 ]] && awk -v w="$wall" -v t="$CRG_REPEAT_UNDER_S" 'BEGIN {exit !(w < t)}'; then
            runs=3
        fi
        rm -rf "$repo"   # graph.db of a Django build is ~450 MB
    done
    mv "$newlog" "$crglog"
    printf '%s\n' "$reuse_key" >"$key"
    say "  median: $(median "${walls[@]}") s over ${#walls[@]} run(s)"
}

if [[ "$SKIP_CRG" != 1 ]]; then
    for name in $CORPORA; do bench_crg "$name"; done
fi

# ------------------------------------------------------------------ report
report_args=(--out "$CACHE/results.json" --log "$LOG" --machine "$MACHINE_JSON" --setup "runs=$RUNS"
    --setup "cache=$CACHE" --setup "crg_version=$CRG_VERSION")
if [[ "$HAVE_CAIRN" == 1 ]]; then
    report_args+=(--setup "cairn_bin=$CAIRN_BIN" --setup "cairn_version=$("$CAIRN_BIN" --version 2>&1 | head -n1)")
fi
[[ "$HAVE_QUERY_BENCH" == 1 ]] && report_args+=(--setup "query_bench=$CAIRN_QUERY_BENCH")
if [[ "$SKIP_CRG" != 1 ]]; then
    for name in $CORPORA; do
        corpus_spec "$name"
        [[ -s "$CACHE/crg/$CORPUS_NAME.jsonl" ]] && report_args+=(--log "$CACHE/crg/$CORPUS_NAME.jsonl")
    done
fi
for n in "${NOTES[@]+"${NOTES[@]}"}"; do report_args+=(--note "$n"); done
echo
python3 "$TOOL" report "${report_args[@]}" || die "could not write the report ($CACHE/results.json)"
echo
echo "Results: $CACHE/results.json"
if ((${#FAILURES[@]})); then
    printf 'FAILED:\n' >&2
    printf '  - %s\n' "${FAILURES[@]}" >&2
    exit 1
fi
if ((${#MISSING[@]})); then
    printf 'INCOMPLETE, missing:\n' >&2
    printf '  - %s\n' "${MISSING[@]}" >&2
    exit 3
fi
