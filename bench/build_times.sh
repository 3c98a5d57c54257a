#!/usr/bin/env bash
# What building cairn costs a newcomer on this machine, each step cold: a fresh clone of HEAD
# and an empty target directory of its own (deleted afterwards).
#
#   release   cargo build --release --locked
#   tests     the README's test command: .ci/deps && .ci/fetch-model && cargo test --locked
#   ci        .ci/run
#   test_build  the tests' build alone: cargo test --locked --no-run
#   dist      the shipped binary: `cargo build --profile dist`, its size and tar.xz archive
#   size      the release binary (built by `release`, or CAIRN_BIN): as built, stripped, compressed
#             as the release archive (tar.xz), its largest parts by crate (bench/bloat.py, from
#             its symbol table), and `cairn --version` (hyperfine, when installed)
#
# Usage: bench/build_times.sh [release] [tests] [ci] [dist] [size]   (default: all five; each cold
# step takes 20–60 minutes on two cores). Writes the "build" section of bench/results.json
# (through bench/benchtool.py results) and prints it.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(release tests ci dist size)
work="$(mktemp -d "${TMPDIR:-/tmp}/cairn-cold.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log="$work/records.jsonl"
commit="$(git -C "$here" rev-parse --short HEAD)"

# A fresh clone of HEAD in $work/<step>, with an empty target directory beside it.
fresh() {
  local dir="$work/$1"
  git clone --quiet --no-hardlinks "$here" "$dir/src"
  git -C "$dir/src" checkout --quiet "$commit"
  mkdir -p "$dir/target"
  echo "$dir"
}

# Runs a command in a fresh clone with its own target directory; records the wall time.
timed() {
  local step="$1"
  shift
  local dir
  dir="$(fresh "$step")"
  echo "build_times: $step: $* (cold, in $dir)" >&2
  local start end
  start="$(date +%s)"
  (cd "$dir/src" && CARGO_TARGET_DIR="$dir/target" CARGO_INCREMENTAL=0 "$@") >"$dir/log" 2>&1 || {
    echo "build_times: $step failed; the last lines:" >&2
    tail -20 "$dir/log" >&2
    exit 1
  }
  end="$(date +%s)"
  python3 "$here/bench/benchtool.py" record --log "$log" --tag "step=$step" --tag "seconds=$((end - start))"
  if [[ "$step" == release ]]; then
    cp "$dir/target/release/cairn" "$work/cairn"
  fi
  rm -rf "$dir"
}

for step in "${steps[@]}"; do
  case "$step" in
    release) timed release cargo build --release --locked ;;
    dist)
      # The shipped binary: its size and archive matter, its build time less (release CI).
      dir="$(fresh dist)"
      start="$(date +%s)"
      (cd "$dir/src" && CARGO_TARGET_DIR="$dir/target" CARGO_INCREMENTAL=0 cargo build --profile dist --locked) >"$dir/log" 2>&1 \
        || { tail -20 "$dir/log" >&2; exit 1; }
      seconds="$(($(date +%s) - start))"
      mkdir -p "$dir/archive/cairn-mcp-x86_64-unknown-linux-gnu"
      cp "$dir/target/dist/cairn" "$dir/archive/cairn-mcp-x86_64-unknown-linux-gnu/cairn"
      tar -C "$dir/archive" -cJf "$dir/cairn.tar.xz" cairn-mcp-x86_64-unknown-linux-gnu
      python3 "$here/bench/benchtool.py" record --log "$log" --tag step=dist --tag "seconds=$seconds" \
        --tag "binary_mb=$(($(stat -c %s "$dir/target/dist/cairn") / 1000000))" \
        --tag "archive_mb=$(($(stat -c %s "$dir/cairn.tar.xz") / 1000000))"
      rm -rf "$dir"
      ;;
    tests) timed tests bash -c '.ci/deps && .ci/fetch-model && cargo test --locked' ;;
    test_build) timed test_build cargo test --locked --no-run ;;
    ci) timed ci .ci/run ;;
    size)
      bin="${CAIRN_BIN:-$work/cairn}"
      if [[ ! -x "$bin" ]]; then
        echo "build_times: size needs the release step first, or CAIRN_BIN" >&2
        exit 1
      fi
      strip -o "$work/cairn.stripped" "$bin"
      mkdir -p "$work/archive/cairn-mcp-x86_64-unknown-linux-gnu"
      cp "$work/cairn.stripped" "$work/archive/cairn-mcp-x86_64-unknown-linux-gnu/cairn"
      tar -C "$work/archive" -cJf "$work/cairn.tar.xz" cairn-mcp-x86_64-unknown-linux-gnu
      # `cairn --version`, median of 30 runs after 3 warm-ups.
      version_ms="$(python3 -c "
import statistics, subprocess, sys, time
def once():
    start = time.perf_counter()
    subprocess.run([sys.argv[1], '--version'], check=True, capture_output=True)
    return time.perf_counter() - start
for _ in range(3):
    once()
print(round(statistics.median(once() for _ in range(30)) * 1000, 1))
" "$work/cairn.stripped")"
      python3 "$here/bench/benchtool.py" record --log "$log" --tag step=size \
        --tag "binary_mb=$(($(stat -c %s "$bin") / 1000000))" \
        --tag "stripped_mb=$(($(stat -c %s "$work/cairn.stripped") / 1000000))" \
        --tag "archive_mb=$(($(stat -c %s "$work/cairn.tar.xz") / 1000000))" \
        --tag "version_ms=$version_ms"
      python3 "$here/bench/benchtool.py" record --log "$log" --tag step=bloat \
        --tag "crates=$(python3 "$here/bench/bloat.py" "$bin" --json --top 10 | python3 -c "
import json, sys
d = json.load(sys.stdin)
print('; '.join(f\"{c['name']} {c['size'] / 1e6:.1f} MB\" for c in d['crates']))
")"
      ;;
    *)
      echo "build_times: unknown step $step (release, tests, ci, test_build, dist, size)" >&2
      exit 2
      ;;
  esac
done

python3 "$here/bench/benchtool.py" results set --file "$here/bench/results.json" --section build \
  --commit "$commit" --log "$log"
python3 "$here/bench/page.py"
