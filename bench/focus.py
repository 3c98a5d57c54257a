#!/usr/bin/env python3
"""How much of a focused `get_context` is about its focus (standard library, plus tiktoken when
importable, as bench/learn_replay.py counts).

    bench/focus.py [--cairn PATH] [--before PATH] [--max-tokens 1500] [--results FILE]
                   --case 'REPO|FOCUS|EXPECTED,NAMES' ...

REPO is a source tree (a git checkout, or Django's sdist as bench/run.sh unpacks it: `pip
download --no-deps --no-binary :all: django==5.1.4`, then `git init` and one commit so that
cairn indexes it as a repository). Each REPO is indexed once per binary into a scratch data
directory; then `cairn context --focus FOCUS --max-tokens N` (text, and `--json` for the
items) is asked of each binary (`--before`: the same with another build, for a comparison).

Every line of the answer is judged independently of cairn's own ranking:
  - a symbol or file *matches* when a word of its id (path and name split at non-letters and
    case humps, lower-cased, a final `s` dropped) is a word of the focus; a file also matches
    when it holds a matching symbol (its members, from `cairn expand FILE --json`);
  - a *neighbour* is a caller, callee, importer, import or member of a matching symbol shown
    in the answer (`cairn expand ID --json`), or the file of one;
  - a line is *about the focus* when what it names matches or is a neighbour: an entry of top
    files, top symbols or hot spots by its id; a relationship when one end matches and the
    other matches or is a neighbour; a shape line when a file about the focus lies under its
    directory; a memory when its text holds a focus word.
The share is the tokens of the lines about the focus over all the answer's tokens (headings,
the legend and the tests line count as not about it). EXPECTED names (symbol names) are
checked in the text.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from learn_replay import Tokenizer  # noqa: E402

STOP = {"the", "a", "an", "of", "and", "or", "in", "on", "to", "for", "with", "is", "by"}


def words(text: str) -> set[str]:
    parts = re.split(r"[^A-Za-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text))
    return {stem(p.lower()) for p in parts if p and p.lower() not in STOP}


def stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


class Cairn:
    def __init__(self, binary: str, repo: Path, data: Path) -> None:
        self.binary, self.repo, self.data = binary, repo, data
        self._expanded: dict[str, dict] = {}

    def run(self, *args: str) -> str:
        done = subprocess.run([self.binary, "--data-dir", str(self.data), *args], cwd=self.repo,
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise SystemExit(f"cairn {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def expand(self, target: str) -> dict:
        if target not in self._expanded:
            try:
                self._expanded[target] = json.loads(self.run("expand", target, "--json"))
            except SystemExit:
                self._expanded[target] = {}
        return self._expanded[target]


def ids_of(expanded: dict, *keys: str) -> set[str]:
    out = set()
    for key in keys:
        for item in expanded.get(key) or []:
            if isinstance(item, dict) and item.get("id"):
                out.add(item["id"])
            elif isinstance(item, str):
                out.add(item)
    return out


def file_of(node: str) -> str:
    return node.split("::", 1)[0]


def judge(cairn: Cairn, focus: str, text: str, body: dict, tok: Tokenizer) -> dict:
    wanted = words(focus)

    def named(node: str) -> bool:
        return bool(words(node) & wanted)

    symbols = [s["id"] for s in body.get("top_symbols", [])]
    files = [f["id"] for f in body.get("top_files", [])]
    hot = [f["id"] for f in body.get("hot_spots", [])]
    matching = {s for s in symbols if named(s)}
    for f in set(files) | set(hot):
        members = ids_of(cairn.expand(f), "members")
        if named(f) or any(named(m) for m in members):
            matching.add(f)
    neighbours: set[str] = set()
    for s in [s for s in symbols if s in matching]:
        near = ids_of(cairn.expand(s), "callers", "callees", "importers", "imports", "members")
        neighbours |= near | {file_of(n) for n in near}
    neighbours |= {file_of(m) for m in matching}
    about_node = matching | neighbours

    def about(node: str) -> bool:
        return node in about_node or named(node)

    shape_dirs = [d["path"] for d in body.get("shape", [])]
    about_files = {file_of(n) for n in about_node}
    section, shape_at = "", 0
    total = on = 0
    for line in text.splitlines():
        cost = tok.count(line) + 1
        total += cost
        if line.startswith("## "):
            section = line
            continue
        entry = line.lstrip().startswith("- ")
        if not entry:
            continue
        body_text = line.lstrip()[2:]
        hit = False
        if section.startswith("## Shape"):
            d = shape_dirs[shape_at] if shape_at < len(shape_dirs) else None
            shape_at += 1
            if d is not None:
                prefix = d.rstrip("…").rstrip("/")
                hit = any(f.startswith(prefix) for f in about_files) if prefix else bool(about_files)
        elif section.startswith("## Key relationships"):
            m = re.match(r"(\S+) -\w+-> (\S+)", body_text)
            if m:
                a, b = m.group(1), m.group(2)
                hit = (a in matching or named(a) or b in matching or named(b)) and about(a) and about(b)
        elif section.startswith("## Memories"):
            hit = bool(words(body_text) & wanted)
        else:
            hit = about(body_text.split()[0].rstrip(":"))
        if hit:
            on += cost
    return {"tokens": total, "about": on, "share": round(on / total, 3) if total else 0.0}


def case_run(binary: str, repo: Path, data: Path, focus: str, expected: list[str], budget: int,
             tok: Tokenizer) -> dict:
    cairn = Cairn(binary, repo, data)
    start = time.perf_counter()
    text = cairn.run("context", "--focus", focus, "--max-tokens", str(budget))
    seconds = time.perf_counter() - start
    body = json.loads(cairn.run("context", "--focus", focus, "--max-tokens", str(budget), "--json"))
    body = body.get("body", body)
    judged = judge(cairn, focus, text, body, tok)
    judged["expected_named"] = [e for e in expected if re.search(rf"\b{re.escape(e)}\b", text)]
    judged["expected"] = expected
    judged["seconds"] = round(seconds, 2)
    return judged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cairn", default=str(Path.home() / ".cache/cairn/target/release/cairn"))
    ap.add_argument("--before", help="another cairn build to compare with")
    ap.add_argument("--max-tokens", type=int, default=1500)
    ap.add_argument("--case", action="append", required=True, help="REPO|FOCUS|EXPECTED,NAMES")
    ap.add_argument("--results", type=Path)
    args = ap.parse_args()
    tok = Tokenizer()
    builds = [("after", args.cairn)] + ([("before", args.before)] if args.before else [])
    scratch = Path(tempfile.mkdtemp(prefix="cairn-focus-"))
    data: dict[tuple[str, str], Path] = {}
    rows = []
    try:
        for case in args.case:
            repo_s, focus, expected_s = (case.split("|") + ["", ""])[:3]
            repo = Path(repo_s).resolve()
            expected = [e for e in expected_s.split(",") if e]
            row = {"repo": repo.name, "focus": focus}
            for label, binary in builds:
                key = (label, str(repo))
                if key not in data:
                    data[key] = scratch / f"{label}-{repo.name}"
                    Cairn(binary, repo, data[key]).run("index")
                row[label] = case_run(binary, repo, data[key], focus, expected, args.max_tokens, tok)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.results:
        write_results(args, rows, tok)


def write_results(args, rows: list[dict], tok: Tokenizer) -> None:
    facts = json.loads(subprocess.run([sys.executable, str(ROOT / "bench/benchtool.py"), "machine"],
                                      capture_output=True, text=True, check=True).stdout)
    results = json.loads(args.results.read_text())

    def cell(r: dict) -> str:
        named = f"{len(r['expected_named'])} of {len(r['expected'])}" if r["expected"] else "–"
        return f"{r['share'] * 100:.0f}% of {r['tokens']} · {named}"

    table = [[f"{r['repo']}: `{r['focus']}`", cell(r["after"])] + ([cell(r["before"])] if "before" in r else [])
             for r in rows]
    after = [r["after"]["share"] for r in rows]
    table.append(["all (mean share)", f"{sum(after) / len(after) * 100:.0f}%"] +
                 ([f"{sum(r['before']['share'] for r in rows) / len(rows) * 100:.0f}%"]
                  if all("before" in r for r in rows) else []))
    columns = ["repository: focus", "about the focus: share of tokens · expected names shown"]
    if args.before:
        columns.append("the same before focused packs")
    results["sections"]["focus"] = {
        "title": "Focused context",
        "date": time.strftime("%Y-%m-%d"),
        "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip(),
        "machine": (f"{facts['nproc']} cores ({facts['cpu_model']}), {facts['mem_total_gb']} GB, "
                    "release build"),
        "corpus": (f"`cairn context --focus FOCUS --max-tokens {args.max_tokens}`; lines judged "
                   f"about the focus by their ids' words and the graph's neighbours (see "
                   f"bench/focus.py); tokens: {tok.name}"),
        "command": "bench/focus.py --results bench/results.json --case 'REPO|FOCUS|NAMES' ...",
        "columns": columns,
        "rows": table,
    }
    args.results.write_text(json.dumps(results, indent=1) + "\n")
    subprocess.run([sys.executable, str(ROOT / "bench/page.py")], check=True)


if __name__ == "__main__":
    main()
