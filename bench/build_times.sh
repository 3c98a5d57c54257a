#!/usr/bin/env bash
# What building cairn costs a newcomer on this machine, each step cold: a fresh clone of HEAD
# and an empty target directory of its own (deleted afterwards).
#
#   release   cargo build --release --locked
#   tests     the README's test command: .ci/deps && .ci/fetch-model && cargo test --locked
#   ci        .ci/run
#   size      the release binary (built by `release`, or CAIRN_BIN): as built, stripped (what the
#             dist profile ships), compressed as the release archive (tar.xz), its largest
#             crates (cargo bloat, when installed), and `cairn --version` (hyperfine, when
#             installed)
#
# Usage: bench/build_times.sh [release] [tests] [ci] [size]   (default: all four; each cold
# step takes 20–60 minutes on two cores). Writes the "build" section of bench/results.json
# (through bench/benchtool.py results) and prints it.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(release tests ci size)
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
    tests) timed tests bash -c '.ci/deps && .ci/fetch-model && cargo test --locked' ;;
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
      version_ms=""
      if command -v hyperfine >/dev/null 2>&1; then
        hyperfine --warmup 3 --runs 30 --export-json "$work/version.json" \
          "$work/cairn.stripped --version" >/dev/null
        version_ms="$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(round(r['median']*1000, 1))" "$work/version.json")"
      fi
      python3 "$here/bench/benchtool.py" record --log "$log" --tag step=size \
        --tag "binary_mb=$(($(stat -c %s "$bin") / 1000000))" \
        --tag "stripped_mb=$(($(stat -c %s "$work/cairn.stripped") / 1000000))" \
        --tag "archive_mb=$(($(stat -c %s "$work/cairn.tar.xz") / 1000000))" \
        --tag "version_ms=$version_ms"
      if command -v cargo-bloat >/dev/null 2>&1; then
        (cd "$here" && cargo bloat --release --crates -n 15 --message-format json) \
          >"$work/bloat.json" 2>/dev/null || true
        python3 "$here/bench/benchtool.py" record --log "$log" --tag step=bloat \
          --tag "crates=$(python3 -c "
import json,sys
try:
    d=json.load(open(sys.argv[1]))
    print('; '.join(f\"{c['name']} {c['size']/1e6:.1f} MB\" for c in d['crates'][:12]))
except Exception:
    print('')
" "$work/bloat.json")"
      fi
      ;;
    *)
      echo "build_times: unknown step $step (release, tests, ci, size)" >&2
      exit 2
      ;;
  esac
done

python3 "$here/bench/benchtool.py" results set --file "$here/bench/results.json" --section build \
  --commit "$commit" --log "$log"
python3 "$here/bench/page.py"
