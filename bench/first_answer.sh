#!/usr/bin/env bash
# A new user's first minute, from the packages as users get them: how long from one install
# command to cairn answering an MCP client about a repository, on a machine with Python or
# Node but no Rust. The packages are made here from a built binary (the release build, or
# CAIRN_BIN) by the packaging scripts and installed offline, so the figure leaves out the
# download (the wheel and the npm platform package are each one file of 30–60 MB).
#
#   pip    python3 -m venv + pip install cairn_mcp-….whl        then  cairn index, cairn serve
#   npx    npm install of the launcher and this platform's tarball, then  npx cairn-mcp …
#
# Each way, three steps are timed: install, `cairn index` of the corpus (cold, a fresh data
# directory), and an MCP session over stdio (initialize, then `get_context`) until its answer.
#
# Usage: bench/first_answer.sh [CORPUS]   (default: this checkout). Writes the "first_answer"
# records to stdout as JSON lines.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${1:-$here}"
bin="${CAIRN_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/cairn/target}/release/cairn}"
[[ -x "$bin" ]] || { echo "first_answer: no binary at $bin (build with cargo build --release, or set CAIRN_BIN)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/cairn-first.XXXXXX")"
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
since() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$1" "$(now)"; }

# An MCP session over stdio with `$@`: initialize, initialized, one get_context call; exits when
# the answer arrives (or fails after 120 s).
mcp_first_answer() {
  python3 - "$@" <<'EOF'
import json, subprocess, sys, time
proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(message):
    proc.stdin.write(json.dumps(message) + "\n"); proc.stdin.flush()
def answer(wanted):
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            sys.exit("first_answer: the server closed its output")
        message = json.loads(line)
        if message.get("id") == wanted:
            return message
    sys.exit("first_answer: no answer in 120 s")
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "first-answer", "version": "1"}}})
answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_context", "arguments": {"max_tokens": 1500}}})
reply = answer(2)
proc.stdin.close(); proc.wait(timeout=30)
text = reply["result"]["content"][0]["text"]
if reply["result"].get("isError") or len(text) < 200:
    sys.exit(f"first_answer: get_context did not answer with the repository: {text[:200]}")
EOF
}

record() {
  python3 -c 'import json, sys; print(json.dumps({"step": "first_answer", "way": sys.argv[1], "install_s": float(sys.argv[2]), "index_s": float(sys.argv[3]), "answer_s": float(sys.argv[4]), "total_s": round(float(sys.argv[2]) + float(sys.argv[3]) + float(sys.argv[4]), 2), "corpus": sys.argv[5]}))' "$@"
}

python3 "$here/packaging/python/wheel.py" cairn --binary "$bin" --out "$work/wheels" >/dev/null
node "$here/packaging/npm/build.mjs" --out "$work/npm" --binary "$(node -e 'const {platform, arch} = process; const libc = platform === "linux" ? "-gnu" : ""; console.log(`${platform}-${arch}${libc}`)')=$bin" >/dev/null
(cd "$work/npm" && for d in */; do npm pack --silent "./$d" >/dev/null; done)

# pip: a fresh venv, the wheel installed offline.
start="$(now)"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --no-index --find-links "$work/wheels" cairn-mcp
install_s="$(since "$start")"
data="$work/pip-data"
start="$(now)"
"$work/venv/bin/cairn" --repo "$corpus" --data-dir "$data" index --quiet >/dev/null
index_s="$(since "$start")"
start="$(now)"
(cd "$corpus" && mcp_first_answer "$work/venv/bin/cairn" --data-dir "$data" serve)
answer_s="$(since "$start")"
record pip "$install_s" "$index_s" "$answer_s" "$(basename "$corpus")"

# npx: the launcher and this platform's package from their tarballs into a scratch project.
start="$(now)"
mkdir -p "$work/project" && (cd "$work/project" && npm init -y >/dev/null && npm install --silent --offline "$work"/npm/*.tgz >/dev/null)
install_s="$(since "$start")"
data="$work/npx-data"
start="$(now)"
(cd "$work/project" && npx --offline cairn-mcp --repo "$corpus" --data-dir "$data" index --quiet >/dev/null)
index_s="$(since "$start")"
start="$(now)"
(cd "$work/project" && mcp_first_answer npx --offline cairn-mcp --repo "$corpus" --data-dir "$data" serve)
answer_s="$(since "$start")"
record npx "$install_s" "$index_s" "$answer_s" "$(basename "$corpus")"
