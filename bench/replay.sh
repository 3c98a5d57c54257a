#!/usr/bin/env bash
# Replay benchmark: cairn and code-review-graph on real commits of public git histories
# (tests to run, co-change, localization; tokens and latency). The work is done by
# bench/replay.py; this driver prepares the cache and the tools.
#
# Usage: bench/replay.sh [NAME=SOURCE ...]
#   NAME=SOURCE  a project to replay: SOURCE is a git URL or a local path (a clone or a bare
#                repository), cloned once into CACHE/repos/NAME and reused afterwards.
#                Default: one history per language cairn parses (DEFAULT_PROJECTS below), i.e.
#                what `git clone` of these gives: encode/httpx (python), colinhacks/zod
#                (typescript), spf13/cobra (go), tokio-rs/bytes (rust), google/gson (java),
#                jnunemaker/httparty (ruby), Seldaek/monolog (php),
#                Altinn/altinn-authentication (csharp), DaveGamble/cJSON (c), fmtlib/fmt (cpp)
#                on https://github.com. None of them is among the histories kept for an
#                independent check. Other names need CAIRN_REPLAY_LANG_<NAME> (upper case,
#                other characters as `_`).

# Environment:
#   CAIRN_REPLAY_CACHE       cache dir (default $HOME/.cache/cairn/bench/replay): repos/ (clones),
#                            work/ (work copies, cairn data dirs, diffs), crg-venv/, tiktoken/,
#                            results.json
#   CARGO_TARGET_DIR         default $HOME/.cache/cairn/target
#   CAIRN_BIN                cairn binary (default $CARGO_TARGET_DIR/debug/cairn, the binary of
#                            `cargo test --locked --no-run`); its profile is printed with the
#                            results (CAIRN_BENCH_PROFILE overrides the guess from the path)
#   CAIRN_REPLAY_OUT         where the JSON results go (default CACHE/results.json)
#   CAIRN_REPLAY_COMMITS     commits per project (default 30)
#   CAIRN_REPLAY_MAX_SOURCE  skip commits changing more source files than this (default 15)
#   CAIRN_REPLAY_SKIP_CAIRN=1 / CAIRN_REPLAY_SKIP_CRG=1   measure only the other tool
#   CAIRN_REPLAY_NO_LOCALIZE=1                           skip the localization runs
#
# The histories are pinned by the clone: the commits replayed are the most recent qualifying
# ones reachable from the clone's HEAD (delete CACHE/repos/NAME to take newer history).
#
# code-review-graph 2.3.9 (found by reading its cli.py, incremental.py, changes.py and tools/
# in the venv, and trying it):
#   index:      `code-review-graph build --repo WORK` at the first parent, then `update --repo
#               WORK` after each checkout (diffs against the commit the graph was built at).
#               DB in WORK/.code-review-graph/ (it writes a .gitignore there, so `git clean -fd`
#               keeps it). CRG_DATA_DIR / CRG_REPO_ROOT are removed from its environment.
#   review:     the source diff applied to the work tree, then detect_changes as its MCP tool
#               answers it: tools.review.detect_changes_func(base="HEAD", repo_root=WORK) with
#               the tool's defaults (max_results 25, max_flows 20), printed as JSON with indent 2
#               like the CLI. (`detect-changes --base HEAD` on the CLI runs the same
#               analyze_changes on `git diff --name-status HEAD --`, the work tree against the
#               parent, but prints every affected flow with its steps: ~10x the tokens.)
#               Then `impact --base HEAD --repo WORK` (blast radius; JSON impacted_nodes[] and
#               impacted_files[]) and, tree restored, `query tests_for QUALIFIED_NAME --repo WORK`
#               for every changed function it named (JSON results[].file_path). With the diff
#               still applied tests_for answers the same plus a "graph is stale" note.
#   localization: `search "SUBJECT" --limit 100` (FTS over node names), results kept in rank
#               order while their JSON fits 2,000 tokens (cairn's budget).
#   Latency is wall time of the CLI processes (Python start-up included, ~0.4 s each); for
#   detect-changes + tests_for it is the sum over all its calls.
#
# Tokenizer: o200k_base through tiktoken (PyPI, installed into the venv). tiktoken downloads the
# encoding file on first use; offline, the driver seeds its cache from the tiktoken-rs crate in
# ~/.cargo/registry (the same file cairn counts with; tiktoken checks its hash). Without either,
# replay.py counts chars/4 and says so.
#
# Output: Markdown tables on stdout (progress on stderr), everything in CAIRN_REPLAY_OUT.

set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${CAIRN_REPLAY_CACHE:-$HOME/.cache/cairn/bench/replay}"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn/target}"
CAIRN_BIN="${CAIRN_BIN:-$CARGO_TARGET_DIR/debug/cairn}"
CRG_VERSION="2.3.9"

say()  { printf '==> %s\n' "$*" >&2; }
die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

command -v git >/dev/null || die "git not found"
command -v python3 >/dev/null || die "python3 not found (>= 3.10 needed by code-review-graph $CRG_VERSION)"
mkdir -p "$CACHE/repos" "$CACHE/work"
CACHE="$(cd "$CACHE" && pwd)"
if git -C "$CACHE" rev-parse --show-toplevel >/dev/null 2>&1; then
    die "the cache $CACHE is inside a git work tree: set CAIRN_REPLAY_CACHE outside any checkout"
fi

# The default set: one public history per language cairn parses, with its language.
declare -A KNOWN_LANG=(
    [httpx]=python [zod]=typescript [cobra]=go [bytes]=rust [gson]=java [httparty]=ruby
    [monolog]=php [altinn-authentication]=csharp [cjson]=c [fmt]=cpp
)
DEFAULT_PROJECTS=(
    httpx=https://github.com/encode/httpx
    zod=https://github.com/colinhacks/zod
    cobra=https://github.com/spf13/cobra
    bytes=https://github.com/tokio-rs/bytes
    gson=https://github.com/google/gson
    httparty=https://github.com/jnunemaker/httparty
    monolog=https://github.com/Seldaek/monolog
    altinn-authentication=https://github.com/Altinn/altinn-authentication
    cjson=https://github.com/DaveGamble/cJSON
    fmt=https://github.com/fmtlib/fmt
)

projects=("$@")
if ((${#projects[@]} == 0)); then
    projects=("${DEFAULT_PROJECTS[@]}")
fi

specs=()
for p in "${projects[@]}"; do
    name="${p%%=*}"; src="${p#*=}"
    [[ "$name" != "$p" && -n "$name" && -n "$src" ]] || die "bad project '$p' (want NAME=URL-or-path)"
    var="CAIRN_REPLAY_LANG_${name^^}"
    var="${var//[^A-Z0-9_]/_}"
    lang="${!var:-${KNOWN_LANG[$name]:-}}"
    [[ -n "$lang" ]] || die "set $var to the language of project $name (python, typescript, go, rust, java, ruby, php, csharp, c, cpp)"
    if [[ -d "$CACHE/repos/$name/.git" ]]; then
        say "$name: using the clone in $CACHE/repos/$name ($(git -C "$CACHE/repos/$name" log -1 --format='%h %cs'))"
    else
        say "$name: cloning $src"
        rm -rf "$CACHE/repos/$name"
        git clone -q "$src" "$CACHE/repos/$name" || die "git clone $src failed"
    fi
    specs+=(--project "$name=$lang")
done

OUT="${CAIRN_REPLAY_OUT:-$CACHE/results.json}"
args=(--cache "$CACHE" --out "$OUT"
    --commits "${CAIRN_REPLAY_COMMITS:-30}" --max-source-files "${CAIRN_REPLAY_MAX_SOURCE:-15}")
[[ "${CAIRN_REPLAY_NO_LOCALIZE:-0}" == 1 ]] && args+=(--no-localize)

if [[ "${CAIRN_REPLAY_SKIP_CAIRN:-0}" != 1 ]]; then
    [[ -x "$CAIRN_BIN" ]] || die "no cairn binary at $CAIRN_BIN: run 'cargo test --locked --no-run' (CARGO_TARGET_DIR=$CARGO_TARGET_DIR) or set CAIRN_BIN; CAIRN_REPLAY_SKIP_CAIRN=1 measures code-review-graph only"
    case "$(basename "$(dirname "$CAIRN_BIN")")" in
        debug) guess=debug ;; release) guess=release ;; *) guess=unknown ;;
    esac
    profile="${CAIRN_BENCH_PROFILE:-$guess}"
    args+=(--cairn "$CAIRN_BIN" --cairn-profile "$profile")
    say "cairn: $CAIRN_BIN ($profile, $("$CAIRN_BIN" --version))"
fi

VENV="$CACHE/crg-venv"
have_crg() {
    [[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("code-review-graph"))' 2>/dev/null)" == "$CRG_VERSION" ]]
}
if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
fi
if [[ "${CAIRN_REPLAY_SKIP_CRG:-0}" != 1 ]] && ! have_crg; then
    say "installing code-review-graph $CRG_VERSION into $VENV"
    "$VENV/bin/pip" install -q "code-review-graph==$CRG_VERSION" || die "pip install code-review-graph==$CRG_VERSION failed"
fi
"$VENV/bin/python" -c 'import tiktoken' 2>/dev/null || "$VENV/bin/pip" install -q tiktoken ||
    say "tiktoken could not be installed: tokens will be chars/4"
if [[ "${CAIRN_REPLAY_SKIP_CRG:-0}" != 1 ]]; then
    args+=(--crg "$VENV/bin/code-review-graph" --crg-version "$CRG_VERSION")
fi

# tiktoken's cache: the file name is the SHA-1 of the URL it would download.
export TIKTOKEN_CACHE_DIR="$CACHE/tiktoken"
mkdir -p "$TIKTOKEN_CACHE_DIR"
if ! "$VENV/bin/python" -c 'import tiktoken; tiktoken.get_encoding("o200k_base")' >/dev/null 2>&1; then
    asset="$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -path '*tiktoken-rs-*/assets/o200k_base.tiktoken' 2>/dev/null | head -n1 || true)"
    if [[ -n "$asset" ]]; then
        key="$(python3 -c 'import hashlib; print(hashlib.sha1(b"https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken").hexdigest())')"
        cp "$asset" "$TIKTOKEN_CACHE_DIR/$key"
        say "seeded tiktoken's o200k_base from $asset"
    fi
fi

say "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'), $(nproc) CPUs"
exec "$VENV/bin/python" "$BENCH_DIR/replay.py" "${args[@]}" "${specs[@]}"
