#!/usr/bin/env python3
"""Replay benchmark: cairn and code-review-graph on real commits of public git histories.

Driven by bench/replay.sh (which prepares the cache, the code-review-graph venv and the
tokenizer); run it directly only with the same arguments. Standard library only, plus
tiktoken when importable (o200k_base, the tokenizer cairn itself counts with).

For each project it picks the most recent non-merge commits that modify at least one source
file and at least one test file that already existed at the parent (skipping commits with more
than --max-source-files source files), and replays them oldest first in one work copy:

  1. check out the parent; `cairn index` (incremental; one data dir per project) and
     code-review-graph `build` (first commit) / `update` (afterwards);
  2. tests to run: `cairn review --diff SRC.diff` (text, timed; the same with --json for
     `tests_to_run`) where SRC.diff is the commit's diff restricted to source files;
     code-review-graph: the same diff applied to the work tree, `detect-changes --base HEAD`,
     `impact --base HEAD`, then (tree restored) `query tests_for` for every changed function;
  3. co-change: the diff of the first changed source file only, `cairn review --max-tokens
     1500` (text); code-review-graph `detect-changes` + `impact` on that diff; the share of
     the commit's other changed source files whose path appears in the answer;
  4. localization: `cairn context --focus SUBJECT --max-tokens 2000 --json` against the same
     without --focus; code-review-graph `search SUBJECT` cut to the same token budget; the
     share of the commit's changed source files named.

Targets are files that existed at the parent: no tool can name a file that does not exist
yet. A "test file" is one whose name says so, by the language's convention (TEST_NAMES:
test_*.py, *.test.ts, *_test.go, tests/*.rs, *Test.java, *_spec.rb, *Test.php, *Tests.cs,
test_*.c, *_test.cc, …); other files under test trees (TEST_TREES: conftest.py, helpers,
fixtures, testdata) are neither source nor target. Tests named by an answer are the distinct files of its test entries
(cairn: JSON `tests_to_run[].id` before any `::`; code-review-graph: `file_path` of the
`tests_for` results, or the test files among `impact`'s impacted nodes).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Each language cairn parses: its source extensions, the names of its test files (what a commit's
# tests are measured against) and its test trees (helpers and fixtures there are neither source
# nor target).
LANGS = {
    "python": {"py", "pyi"},
    "typescript": {"ts", "mts", "cts", "tsx", "js", "jsx", "mjs", "cjs"},
    "go": {"go"},
    "rust": {"rs"},
    "java": {"java"},
    "ruby": {"rb"},
    "php": {"php"},
    "csharp": {"cs"},
    "c": {"c", "h"},
    "cpp": {"cc", "cpp", "cxx", "hpp", "hh", "hxx", "h"},
}
TEST_NAMES = {
    "python": r"(^|/)(test_[^/]*\.pyi?|[^/]*_test\.pyi?|tests\.py)$",
    "typescript": r"(^|/)[^/]*\.(test|spec)\.[cm]?[jt]sx?$|(^|/)__tests__/",
    "go": r"_test\.go$",
    # Integration tests (tests/*.rs) and test modules kept in their own file.
    "rust": r"(^|/)tests/[^/]*\.rs$|(^|/)(tests|[^/]*_tests?)\.rs$",
    "java": r"(^|/)src/test/.*(Test|Tests|IT|TestCase)\.java$|(^|/)[^/]*(Test|Tests)\.java$",
    "ruby": r"(^|/)(spec/.*_spec|test/.*(_test|/test_[^/]*))\.rb$|_spec\.rb$|_test\.rb$",
    "php": r"(^|/)[^/]*Test\.php$",
    "csharp": r"(^|/)[^/]*Tests?\.cs$",
    # C projects keep tests in a test tree more than by name: its direct .c files count.
    "c": r"(^|/)tests?/[^/]*\.c$|(^|/)(test_[^/]*|[^/]*_test|[^/]*_tests)\.c$",
    "cpp": r"(^|/)(test_[^/]*|[^/]*[_-]test|[^/]*_tests|[^/]*Test)\.(cc|cpp|cxx)$",
}
TEST_TREES = {
    "python": r"(^|/)(tests?|testing)/|(^|/)conftest\.py$",
    "typescript": r"(^|/)(tests?|__tests__|__mocks__|fixtures)/",
    "go": r"(^|/)testdata/",
    "rust": r"(^|/)(tests|benches)/",
    "java": r"(^|/)src/test/",
    "ruby": r"(^|/)(spec|test)/",
    "php": r"(^|/)tests?/",
    "csharp": r"(^|/)[^/]*\.Tests?/|(^|/)tests?/",
    "c": r"(^|/)tests?/",
    "cpp": r"(^|/)tests?/",
}
SKIP_DIRS = re.compile(r"(^|/)(node_modules|vendor|dist|build)/")

# ------------------------------------------------------------------ helpers


def log(msg: str) -> None:
    print(f"==> {msg}", file=sys.stderr, flush=True)


def git(repo: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        errors="replace",
    )
    if check and out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None, timeout: int = 900):
    """Runs cmd; returns (rc, stdout, stderr, wall seconds)."""
    start = time.perf_counter()
    try:
        out = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
        rc, so, se = out.returncode, out.stdout, out.stderr
    except subprocess.TimeoutExpired as e:
        rc, so, se = -9, e.stdout or "", f"timeout after {timeout}s"
        so = so.decode() if isinstance(so, bytes) else so
    return rc, so, se, time.perf_counter() - start


class Tokenizer:
    def __init__(self) -> None:
        self.name = "chars/4 (tiktoken not available)"
        self._enc = None
        try:
            import tiktoken  # type: ignore

            self._enc = tiktoken.get_encoding("o200k_base")
            self.name = f"o200k_base (tiktoken {tiktoken.__version__})"
        except Exception as e:  # noqa: BLE001 - any failure means the fallback
            log(f"tiktoken o200k_base unavailable ({type(e).__name__}): counting chars/4")

    def count(self, text: str) -> int:
        if self._enc is None:
            return (len(text) + 3) // 4
        return len(self._enc.encode(text, disallowed_special=()))


def pct(values: list[float], q: float):
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def mean(values):
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


# ------------------------------------------------------------------ classification


class Classifier:
    def __init__(self, language: str) -> None:
        self.exts = LANGS[language]
        self.test_name = re.compile(TEST_NAMES[language])
        self.test_tree = re.compile(TEST_TREES[language])

    def is_code(self, path: str) -> bool:
        return path.rsplit(".", 1)[-1] in self.exts and not SKIP_DIRS.search(path)

    def is_test(self, path: str) -> bool:
        return self.is_code(path) and bool(self.test_name.search(path))

    def in_test_tree(self, path: str) -> bool:
        return bool(self.test_tree.search(path))

    def is_source(self, path: str) -> bool:
        return self.is_code(path) and not self.is_test(path) and not self.in_test_tree(path)


def select_commits(repo: Path, cls: Classifier, want: int, max_src: int, scan: int):
    """The `want` most recent qualifying commits, newest first."""
    raw = git(
        repo,
        "log",
        "--no-merges",
        "--no-renames",
        f"-n{scan}",
        "--format=%x01%H%x00%P%x00%ad%x00%s",
        "--date=short",
        "--name-status",
    )
    picked, skipped_large = [], 0
    for block in raw.split("\x01")[1:]:
        head, _, files = block.partition("\n")
        sha, parents, date, subject = head.split("\x00", 3)
        if len(parents.split()) != 1:
            continue
        changes = []
        for line in files.strip().splitlines():
            parts = line.split("\t")
            if len(parts) >= 2:
                changes.append((parts[0][0], parts[-1]))
        src = [p for s, p in changes if cls.is_source(p)]
        src_mod = [p for s, p in changes if s == "M" and cls.is_source(p)]
        tests_mod = [p for s, p in changes if s == "M" and cls.is_test(p)]
        if not src_mod or not tests_mod:
            continue
        if len(src) > max_src:
            skipped_large += 1
            continue
        picked.append(
            {
                "sha": sha,
                "parent": parents.split()[0],
                "date": date,
                "subject": subject,
                "source": src,
                "source_existing": src_mod + [p for s, p in changes if s == "D" and cls.is_source(p)],
                "tests_all": [p for s, p in changes if cls.is_test(p)],
                "tests": tests_mod + [p for s, p in changes if s == "D" and cls.is_test(p)],
            }
        )
        if len(picked) == want:
            break
    return picked, skipped_large


def named_in(text: str, paths: list[str]) -> list[str]:
    return [p for p in paths if p in text]


def json_strings(value, out: list[str]) -> list[str]:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            json_strings(v, out)
    elif isinstance(value, list):
        for v in value:
            json_strings(v, out)
    return out


def rel(path: str, root: str) -> str:
    return path[len(root) + 1 :] if path.startswith(root + "/") else path


# ------------------------------------------------------------------ the tools


class Cairn:
    def __init__(self, binary: str, repo: Path, data: Path, tok: Tokenizer) -> None:
        self.bin, self.repo, self.data, self.tok = binary, repo, data, tok

    def _cmd(self, *args: str) -> list[str]:
        return [self.bin, "--repo", str(self.repo), "--data-dir", str(self.data), *args]

    def index(self) -> dict:
        rc, so, se, wall = run(self._cmd("index", "--json"))
        if rc != 0:
            raise RuntimeError(f"cairn index failed ({rc}): {se.strip()[-500:]}")
        return {"wall_s": wall, "summary": json.loads(so)}

    def review(self, diff: Path, max_tokens: int | None = None) -> dict:
        extra = ["--max-tokens", str(max_tokens)] if max_tokens else []
        rc, text, se, wall = run(self._cmd("review", "--diff", str(diff), *extra))
        if rc != 0:
            raise RuntimeError(f"cairn review failed ({rc}): {se.strip()[-500:]}")
        return {"text": text, "wall_s": wall, "tokens": self.tok.count(text)}

    def review_json(self, diff: Path, max_tokens: int | None = None) -> dict:
        extra = ["--max-tokens", str(max_tokens)] if max_tokens else []
        rc, so, se, _ = run(self._cmd("review", "--diff", str(diff), "--json", *extra))
        if rc != 0:
            raise RuntimeError(f"cairn review --json failed ({rc}): {se.strip()[-500:]}")
        return json.loads(so)

    def context(self, focus: str | None, max_tokens: int) -> dict:
        args = ["context", "--max-tokens", str(max_tokens), "--json"]
        if focus:
            args += ["--focus", focus]
        rc, so, se, wall = run(self._cmd(*args))
        if rc != 0:
            raise RuntimeError(f"cairn context failed ({rc}): {se.strip()[-500:]}")
        return {"json": json.loads(so), "wall_s": wall}


class Crg:
    def __init__(self, binary: str, repo: Path, tok: Tokenizer) -> None:
        self.bin, self.repo, self.tok = binary, repo, tok
        self.root = str(repo)
        self.env = {k: v for k, v in os.environ.items() if k not in ("CRG_DATA_DIR", "CRG_REPO_ROOT")}
        self.built = False
        self.py = str(Path(binary).parent / "python")

    def _run(self, *args: str):
        return run([self.bin, *args, "--repo", self.root], cwd=self.repo, env=self.env)

    def refresh(self) -> dict:
        verb = "update" if self.built and (self.repo / ".code-review-graph" / "graph.db").exists() else "build"
        rc, so, se, wall = self._run(verb)
        if rc != 0:
            raise RuntimeError(f"code-review-graph {verb} failed ({rc}): {se.strip()[-500:]}")
        self.built = True
        return {"verb": verb, "wall_s": wall, "out": so.strip().splitlines()[-1:] if so.strip() else []}

    def _json(self, *args: str):
        rc, so, se, wall = self._run(*args)
        if rc != 0:
            raise RuntimeError(f"code-review-graph {args[0]} failed ({rc}): {se.strip()[-500:]}")
        try:
            data = json.loads(so)
        except json.JSONDecodeError:
            data = None  # "No changes detected." and the like
        return so, data, wall

    def detect(self) -> dict:
        # The MCP tool's function with its defaults (max_results 25, max_flows 20, flows without
        # steps): what an assistant receives. The CLI's detect-changes prints the unbounded
        # analysis (every flow with its steps: ~10x the tokens) from the same analyze_changes.
        rc, text, se, wall = run([self.py, "-c", DETECT_PY, self.root], cwd=self.repo, env=self.env)
        if rc != 0:
            raise RuntimeError(f"code-review-graph detect_changes failed ({rc}): {se.strip()[-500:]}")
        data = json.loads(text)
        fns = []
        for f in (data or {}).get("changed_functions", []) or []:
            q = f.get("qualified_name")
            if q and not f.get("is_test"):
                fns.append(q)
        return {"text": text, "wall_s": wall, "functions": fns}

    def impact(self) -> dict:
        text, data, wall = self._json("impact", "--base", "HEAD")
        tests = set()
        for node in (data or {}).get("impacted_nodes", []) or []:
            fp = node.get("file_path") if isinstance(node, dict) else None
            if fp:
                tests.add(rel(fp, self.root))
        for fp in (data or {}).get("impacted_files", []) or []:
            if isinstance(fp, str):
                tests.add(rel(fp, self.root))
        return {"text": text, "wall_s": wall, "files": sorted(tests)}

    def tests_for(self, functions: list[str]) -> dict:
        texts, wall, files = [], 0.0, set()
        for q in functions:
            text, data, w = self._json("query", "tests_for", q)
            texts.append(text)
            wall += w
            for r in (data or {}).get("results", []) or []:
                fp = r.get("file_path") if isinstance(r, dict) else None
                if fp:
                    files.add(rel(fp, self.root))
        return {"text": "\n".join(texts), "wall_s": wall, "files": sorted(files)}

    def search(self, query: str, budget: int) -> dict:
        text, data, wall = self._json("search", query, "--limit", "100")
        results = (data or {}).get("results", []) or []
        # Keep the longest prefix of results whose JSON fits the budget (cairn's budget).
        kept, used = [], 0
        for r in results:
            n = self.tok.count(json.dumps(r, indent=2))
            if used + n > budget:
                break
            kept.append(r)
            used += n
        files = []
        for r in kept:
            fp = rel(r.get("file_path") or "", self.root)
            if fp and fp not in files:
                files.append(fp)
        return {"wall_s": wall, "files": files, "tokens": used, "results": len(results), "kept": len(kept)}


DETECT_PY = """
import json, sys
from code_review_graph.tools.review import detect_changes_func
print(json.dumps(detect_changes_func(base="HEAD", repo_root=sys.argv[1]), indent=2, default=str))
"""

# ------------------------------------------------------------------ one project


def prf(named: set[str], targets: set[str]):
    hits = len(named & targets)
    recall = hits / len(targets) if targets else None
    precision = hits / len(named) if named else None
    return hits, recall, precision


def replay_project(args, name: str, language: str, tok: Tokenizer) -> dict:
    cache = Path(args.cache)
    origin = cache / "repos" / name
    work = cache / "work" / name
    data = cache / "work" / f"cairn-data-{name}"
    diffs = cache / "work" / f"diffs-{name}"
    cls = Classifier(language)

    commits, skipped_large = select_commits(origin, cls, args.commits, args.max_source_files, args.scan)
    if len(commits) < args.commits:
        log(f"{name}: only {len(commits)} qualifying commits in the last {args.scan} (wanted {args.commits})")
    commits.reverse()  # oldest first: each checkout moves the work copy forward
    log(f"{name}: {len(commits)} commits, {commits[0]['sha'][:10]}..{commits[-1]['sha'][:10]} "
        f"({commits[0]['date']} .. {commits[-1]['date']}); {skipped_large} skipped as too large")

    for d in (work, data, diffs):
        if d.exists():
            shutil.rmtree(d)
    diffs.mkdir(parents=True)
    git(cache, "clone", "-q", "--no-checkout", str(origin), str(work))
    git(work, "config", "advice.detachedHead", "false")

    newest_parent = commits[-1]["parent"]
    all_files = git(origin, "ls-tree", "-r", "--name-only", newest_parent).splitlines()
    source_count = sum(1 for p in all_files if cls.is_source(p))
    test_count = sum(1 for p in all_files if cls.is_test(p))

    cairn = Cairn(args.cairn, work, data, tok) if args.cairn else None
    crg = Crg(args.crg, work, tok) if args.crg else None
    rows = []
    for i, c in enumerate(commits, 1):
        t0 = time.perf_counter()
        git(work, "checkout", "-q", "-f", "--detach", c["parent"])
        git(work, "clean", "-fdq")  # keeps ignored files (.code-review-graph/)
        src_diff = diffs / f"{c['sha'][:12]}-src.diff"
        src_diff.write_text(git(work, "diff", "--no-color", "--no-ext-diff", c["parent"], c["sha"], "--", *c["source"]))
        first = c["source_existing"][0]
        one_diff = diffs / f"{c['sha'][:12]}-first.diff"
        one_diff.write_text(git(work, "diff", "--no-color", "--no-ext-diff", c["parent"], c["sha"], "--", first))
        targets = set(c["tests"])
        others = [p for p in c["source_existing"] if p != first]
        changed_src = c["source_existing"]
        row = {k: c[k] for k in ("sha", "parent", "date", "subject", "source", "tests", "tests_all")}
        row["first_source"] = first
        row["other_sources"] = others

        if cairn:
            r = {}
            try:
                r["index"] = cairn.index()
                rev = cairn.review(src_diff)
                body = cairn.review_json(src_diff)
                named = set()
                first = set()
                how = {}  # each named file's strongest evidence (the first entry naming it)
                evidence = {}  # …every kind of evidence found, and its confidence
                for t in body.get("tests_to_run", []) or []:
                    path = str(t.get("id", "")).split("::", 1)[0]
                    named.add(path)
                    how.setdefault(path, t.get("how"))
                    evidence.setdefault(path, {"kinds": t.get("evidence") or [t.get("how")],
                                               "confidence": t.get("confidence")})
                    if t.get("first"):
                        first.add(path)
                hits, rc_, pr_ = prf(named, targets)
                first_hits, first_rc, first_pr = prf(first, targets)
                r["tests"] = {"named": sorted(named), "how": how, "evidence": evidence,
                              "first": sorted(first), "first_hits": first_hits,
                              "first_recall": first_rc, "first_precision": first_pr,
                              "hits": hits, "recall": rc_, "precision": pr_,
                              "tokens": rev["tokens"], "wall_s": rev["wall_s"],
                              "json_tokens": body.get("tokens"), "truncated": body.get("truncated")}
                if others:
                    co = cairn.review(one_diff, max_tokens=1500)
                    found = named_in(co["text"], others)
                    r["cochange"] = {"found": found, "recall": len(found) / len(others),
                                     "tokens": co["tokens"], "wall_s": co["wall_s"]}
                if args.localize:
                    loc = {}
                    for label, focus in (("focus", c["subject"]), ("nofocus", None)):
                        ctx = cairn.context(focus, 2000)
                        strings = "\n".join(json_strings(ctx["json"], []))
                        found = named_in(strings, changed_src)
                        loc[label] = {"found": found, "recall": len(found) / len(changed_src),
                                      "tokens": ctx["json"].get("tokens"), "wall_s": ctx["wall_s"]}
                    r["localize"] = loc
            except (RuntimeError, json.JSONDecodeError) as e:
                r["error"] = str(e)
                log(f"  cairn failed on {c['sha'][:10]}: {e}")
            row["cairn"] = r

        if crg:
            r = {}
            try:
                r["index"] = crg.refresh()
                git(work, "apply", str(src_diff)) if src_diff.stat().st_size else None
                det = crg.detect()
                imp = crg.impact()
                git(work, "checkout", "-q", "-f", "HEAD")
                git(work, "clean", "-fdq")
                tf = crg.tests_for(det["functions"])
                named = {p for p in tf["files"] if cls.is_code(p) and (cls.is_test(p) or cls.in_test_tree(p))}
                hits, rc_, pr_ = prf(named, targets)
                text = det["text"] + "\n" + tf["text"]
                r["tests_for"] = {"named": sorted(named), "hits": hits, "recall": rc_, "precision": pr_,
                                  "tokens": tok.count(text), "wall_s": det["wall_s"] + tf["wall_s"],
                                  "functions": len(det["functions"])}
                named = {p for p in imp["files"] if cls.is_test(p) or cls.in_test_tree(p)}
                hits, rc_, pr_ = prf(named, targets)
                r["impact"] = {"named": sorted(named), "hits": hits, "recall": rc_, "precision": pr_,
                               "tokens": tok.count(imp["text"]), "wall_s": imp["wall_s"]}
                if others:
                    git(work, "apply", str(one_diff))
                    det1 = crg.detect()
                    imp1 = crg.impact()
                    git(work, "checkout", "-q", "-f", "HEAD")
                    git(work, "clean", "-fdq")
                    for label, out in (("cochange_detect", det1), ("cochange_impact", imp1)):
                        t = out["text"].replace(crg.root + "/", "")
                        found = named_in(t, others)
                        r[label] = {"found": found, "recall": len(found) / len(others),
                                    "tokens": tok.count(out["text"]), "wall_s": out["wall_s"]}
                if args.localize:
                    s = crg.search(c["subject"], 2000)
                    found = [p for p in changed_src if p in s["files"]]
                    r["localize"] = {"found": found, "recall": len(found) / len(changed_src),
                                     "tokens": s["tokens"], "wall_s": s["wall_s"]}
            except (RuntimeError, json.JSONDecodeError) as e:
                r["error"] = str(e)
                log(f"  code-review-graph failed on {c['sha'][:10]}: {e}")
                git(work, "checkout", "-q", "-f", "HEAD", check=False)
                git(work, "clean", "-fdq", check=False)
            row["crg"] = r

        row["replay_s"] = time.perf_counter() - t0
        rows.append(row)
        cr = row.get("cairn", {}).get("tests", {})
        gr = row.get("crg", {}).get("tests_for", {})
        log(f"  [{i}/{len(commits)}] {c['sha'][:10]} {c['subject'][:50]!r}: "
            f"cairn recall {cr.get('recall')} ({len(cr.get('named', []))} named, {cr.get('tokens')} tok), "
            f"crg {gr.get('recall')} ({len(gr.get('named', []))} named); {row['replay_s']:.1f} s")

    return {
        "name": name,
        "language": language,
        "origin": git(origin, "remote", "get-url", "origin", check=False).strip(),
        "head": git(origin, "rev-parse", "HEAD").strip(),
        "history_commits": int(git(origin, "rev-list", "--count", "HEAD").strip()),
        "range": f"{commits[0]['sha'][:10]}..{commits[-1]['sha'][:10]}",
        "dates": f"{commits[0]['date']} .. {commits[-1]['date']}",
        "source_files": source_count,
        "test_files": test_count,
        "skipped_large": skipped_large,
        "commits": rows,
    }


# ------------------------------------------------------------------ summary


def summarize(project: dict) -> list[dict]:
    rows = project["commits"]
    out = []

    def block(tool, key, sel):
        recs = [sel(r) for r in rows]
        recs = [x for x in recs if x]
        return tool, key, recs

    specs = [
        ("cairn", "review_diff", lambda r: r.get("cairn", {}).get("tests"),
         lambda r: r.get("cairn", {}).get("cochange"), lambda r: (r.get("cairn", {}).get("localize") or {}).get("focus"),
         lambda r: (r.get("cairn", {}).get("localize") or {}).get("nofocus")),
        ("code-review-graph", "detect-changes + tests_for", lambda r: r.get("crg", {}).get("tests_for"),
         lambda r: r.get("crg", {}).get("cochange_detect"), lambda r: r.get("crg", {}).get("localize"), None),
        ("code-review-graph", "impact", lambda r: r.get("crg", {}).get("impact"),
         lambda r: r.get("crg", {}).get("cochange_impact"), None, None),
    ]
    for tool, mode, tsel, csel, lsel, nsel in specs:
        tests = [x for x in (tsel(r) for r in rows) if x]
        if not tests:
            continue
        co = [x for x in (csel(r) for r in rows) if x]
        loc = [x for x in (lsel(r) for r in rows) if x] if lsel else []
        nof = [x for x in (nsel(r) for r in rows) if x] if nsel else []
        hits = sum(t["hits"] for t in tests)
        named = sum(len(t["named"]) for t in tests)
        walls = [t["wall_s"] for t in tests]
        out.append({
            "tool": tool,
            "mode": mode,
            "commits": len(tests),
            "recall": mean([t["recall"] for t in tests]),
            "precision": hits / named if named else None,
            "precision_mean": mean([t["precision"] for t in tests]),
            "tests_named_mean": named / len(tests),
            # The share of the project's test files one answer names, on average.
            "suite_share": named / len(tests) / project["test_files"] if project.get("test_files") else None,
            "tokens_median": statistics.median([t["tokens"] for t in tests]),
            "latency_p50_s": pct(walls, 0.5),
            "latency_p95_s": pct(walls, 0.95),
            "cochange_commits": len(co),
            "cochange_recall": mean([x["recall"] for x in co]),
            "cochange_tokens_median": statistics.median([x["tokens"] for x in co]) if co else None,
            "localize_commits": len(loc),
            "localize_recall": mean([x["recall"] for x in loc]),
            "localize_nofocus_recall": mean([x["recall"] for x in nof]),
            "localize_p50_s": pct([x["wall_s"] for x in loc], 0.5),
        })
    # cairn's tests by their strongest evidence: how many it named and how many the commit
    # changed (what a calibrated confidence per evidence is measured from).
    # Keyed `how+k`: the strongest evidence and how many other kinds agree (2 = two or more),
    # the rows and columns of the briefing's confidence table.
    by_how: dict[str, dict] = {}
    for r in rows:
        tests = r.get("cairn", {}).get("tests") or {}
        evidence = tests.get("evidence") or {}
        for path, how in (tests.get("how") or {}).items():
            kinds = (evidence.get(path) or {}).get("kinds") or [how]
            for key in (str(how), f"{how}+{min(len(kinds) - 1, 2)}"):
                entry = by_how.setdefault(key, {"named": 0, "changed": 0})
                entry["named"] += 1
                entry["changed"] += path in r["tests"]
    for entry in by_how.values():
        entry["precision"] = entry["changed"] / entry["named"]
    if by_how and out:
        out[0]["by_evidence"] = by_how
        firsts = [r["cairn"]["tests"] for r in rows
                  if (r.get("cairn") or {}).get("tests", {}).get("first_recall") is not None]
        if firsts:
            named = sum(len(t["first"]) for t in firsts)
            out[0]["first_recall"] = mean([t["first_recall"] for t in firsts])
            out[0]["first_precision"] = sum(t["first_hits"] for t in firsts) / named if named else None
            out[0]["first_named_mean"] = named / len(firsts)
    return out


def fmt(v, d=2):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{d}f}"
    return str(v)


def report(results: dict) -> str:
    lines = []
    for p in results["projects"]:
        lines.append(f"### {p['name']} ({p['language']}, {p['source_files']} source / {p['test_files']} test files, "
                     f"{p['history_commits']} commits; replayed {len(p['commits'])}: {p['range']}, {p['dates']})")
        lines.append("")
        lines.append("| tool | tests recall | precision | tests named (share of suite) | median tokens | p50 s | p95 s "
                     "| co-change recall (tokens) | localization: focus / no focus |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for s in p["summary"]:
            loc = "n/a"
            if s["localize_commits"]:
                loc = fmt(s["localize_recall"])
                if s["localize_nofocus_recall"] is not None:
                    loc += f" / {fmt(s['localize_nofocus_recall'])}"
            co = "n/a" if not s["cochange_commits"] else \
                f"{fmt(s['cochange_recall'])} ({fmt(s['cochange_tokens_median'], 0)}, n={s['cochange_commits']})"
            lines.append(
                f"| {s['tool']} {s['mode']} | {fmt(s['recall'])} | {fmt(s['precision'])} | "
                f"{fmt(s['tests_named_mean'], 1)} ({fmt(s.get('suite_share'), 3)}) | {fmt(s['tokens_median'], 0)} | {fmt(s['latency_p50_s'])} | "
                f"{fmt(s['latency_p95_s'])} | {co} | {loc} |")
        lines.append("")
    setup = results["setup"]
    parts = [f"Tokenizer: {setup['tokenizer']}."]
    if setup.get("cairn_bin"):
        parts.append(f"cairn: {setup['cairn_bin']} ({setup.get('cairn_profile')} build, {setup.get('cairn_version')}).")
    if setup.get("crg_version"):
        parts.append(f"code-review-graph {setup['crg_version']}.")
    parts.append(f"Run time {setup['run_s'] / 60:.1f} min, load average {setup['load_1min']:.2f} at the start.")
    lines.append(" ".join(parts))
    for n in results.get("notes", []):
        lines.append(f"- {n}")
    return "\n".join(lines)


def write_section(results: dict, path: Path, before: dict | None = None) -> None:
    """Writes the "replay" section of the project's results file (bench/results.json): one row
    per project and tool (with cairn's co-change recall in `before`, another build's run of the
    same commits, beside it), and renders the benchmarks page."""
    root = Path(__file__).resolve().parents[1]
    facts = json.loads(subprocess.run([sys.executable, str(root / "bench/benchtool.py"), "machine"],
                                      capture_output=True, text=True, check=True).stdout)
    setup = results["setup"]
    earlier = {}
    for p in (before or {}).get("projects", []):
        for s in p["summary"]:
            earlier[(p["name"], s["tool"], s["mode"])] = s
    rows = []
    for p in results["projects"]:
        for s in p["summary"]:
            row = [
                f"{p['name']} ({p['language']})", f"{s['tool']} {s['mode']}", str(s["commits"]),
                fmt(s["recall"]), fmt(s["precision"]),
                f"{fmt(s['tests_named_mean'], 1)} ({fmt((s.get('suite_share') or 0) * 100, 1)}%)",
                "n/a" if not s["cochange_commits"] else f"{fmt(s['cochange_recall'])} (n={s['cochange_commits']})",
                (f"{fmt(s['first_recall'])} / {fmt(s.get('first_precision'))} ({fmt(s['first_named_mean'], 1)})"
                 if s.get("first_recall") is not None else "n/a"),
            ]
            if before:
                was = earlier.get((p["name"], s["tool"], s["mode"]))
                row.append(fmt(was["cochange_recall"]) if was and was["cochange_commits"] else "n/a")
            rows.append(row + [fmt(s["tokens_median"], 0), fmt(s["latency_p50_s"])])
    tools = "cairn" + (f" and code-review-graph {setup['crg_version']}" if setup.get("crg_version") else "")
    doc = json.loads(path.read_text())
    doc["sections"]["replay"] = {
        "title": "Review briefings on public histories",
        "date": setup["started"][:10],
        "commit": subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip(),
        "machine": (f"{facts['nproc']} cores ({facts['cpu_model']}), {facts['mem_total_gb']} GB, "
                    f"{setup.get('cairn_profile')} build"),
        "corpus": (f"the newest {setup['commits']} qualifying commits of each history (a modified source and "
                   f"test file, at most {setup['max_source_files']} source files), {tools} in the same run; "
                   f"tokens: {setup['tokenizer']}"),
        "command": ("bench/replay.sh, then bench/replay.py --section-from OUT [--before OUT] "
                    "--results bench/results.json"),
        "columns": ["history", "tool", "commits", "tests recall", "precision", "tests named (share of suite)",
                    "co-change recall", "run first: recall / precision (named)"]
                   + (["co-change recall, build before"] if before else [])
                   + ["median tokens", "p50 s"],
        "rows": rows,
    }
    path.write_text(json.dumps(doc, indent=1) + "\n")
    subprocess.run([sys.executable, str(root / "bench/page.py")], check=True)


CODE_EVIDENCE = ["calls", "names", "neither"]
# The confidence from which a briefing puts a test first (FIRST_CONFIDENCE in
# src/review/evidence.rs).
FIRST = 0.3


def cell_of(kinds: list[str]) -> tuple[int, int, int] | None:
    """A named test file's cell in the briefing's confidence table: its strongest evidence
    in the code (calls or imports a changed symbol, names one, neither), whether it changed
    with a changed file in the history and whether it is named for a changed file. None for a
    test file in the change itself."""
    if "changed" in kinds:
        return None
    code = 0 if "calls" in kinds else 1 if "names" in kinds else 2
    return code, int("changed_with" in kinds), int("named_for" in kinds)


def calibrate(results: dict) -> str:
    """The briefing's confidence table from a replay's results: for each test file cairn
    named, its cell (`cell_of`), and the share of each cell's files that the commit changed,
    pooled over every history; then the same share with each history left out in turn (how
    much one history moves it), and for each threshold the recall and precision of the tests
    it puts first."""
    rows = [(p["name"], r) for p in results["projects"] for r in p["commits"]]

    def files(projects: set):
        for name, r in rows:
            if name not in projects:
                continue
            tests = (r.get("cairn") or {}).get("tests") or {}
            evidence = tests.get("evidence") or {}
            for path, how in (tests.get("how") or {}).items():
                cell = cell_of((evidence.get(path) or {}).get("kinds") or [how])
                if cell is not None:
                    yield cell, int(path in r["tests"])

    def table(skip: str | None = None) -> dict:
        return table_of({name for name, _ in rows} - {skip})

    def table_of(projects: set) -> dict:
        counts: dict = {}
        for cell, hit in files(projects):
            n, h = counts.get(cell, (0, 0))
            counts[cell] = (n + 1, h + hit)
        return counts

    counts = table()
    lines = ["code evidence, history: named, changed, share (range with one history left out)"]
    names = sorted({name for name, _ in rows})
    shares = {}
    for code, label in enumerate(CODE_EVIDENCE):
        for history in (0, 1):
            for named_for in (0, 1):
                cell = (code, history, named_for)
                n, h = counts.get(cell, (0, 0))
                shares[cell] = h / n if n else 0.0
                loo = []
                for name in names:
                    ln, lh = table(name).get(cell, (0, 0))
                    if ln:
                        loo.append(lh / ln)
                spread = f"{min(loo):.2f}-{max(loo):.2f}" if loo else "n/a"
                lines.append(f"  {label}, {'with' if history else 'without'} history, "
                             f"{'' if named_for else 'not '}named for a changed file: {n}, {h}, "
                             f"{shares[cell]:.3f} ({spread})")
    # Stronger code evidence must never make a test less likely: down each column, a cell
    # below the one after it is pooled with it (isotonic regression by pooling adjacent
    # violators, weighted by the files named), which only moves small cells.
    for history in (0, 1):
        for named_for in (0, 1):
            blocks = []  # [named, changed, rows]
            for code in range(len(CODE_EVIDENCE)):
                blocks.append(list(counts.get((code, history, named_for), (0, 0))) + [[code]])
                while len(blocks) > 1 and blocks[-2][0] and blocks[-1][0] and \
                        blocks[-2][1] / blocks[-2][0] < blocks[-1][1] / blocks[-1][0]:
                    n, h, codes = blocks.pop()
                    blocks[-1][0] += n
                    blocks[-1][1] += h
                    blocks[-1][2] += codes
            for n, h, codes in blocks:
                for code in codes:
                    shares[(code, history, named_for)] = h / n if n else 0.0
    lines.append("pooled where stronger evidence measured lower:")
    lines.append("const CONFIDENCE: [[[f64; 2]; 2]; 3] = [")
    lines += [f"    [[{shares[(c, 0, 0)]:.2f}, {shares[(c, 0, 1)]:.2f}], "
              f"[{shares[(c, 1, 0)]:.2f}, {shares[(c, 1, 1)]:.2f}]], // {CODE_EVIDENCE[c]}"
              for c in range(3)]
    lines.append("];")
    total_changed = sum(len(r["tests"]) for _, r in rows)
    named = list(files(set(names)))
    for threshold in (0.1, 0.15, 0.2, 0.3, 0.4):
        first = [hit for cell, hit in named if round(shares[cell], 2) >= threshold]
        lines.append(f"first at >= {threshold:.2f}: {len(first)} of {len(named)} files named, precision "
                     f"{sum(first) / len(first) if first else float('nan'):.3f}, recall of changed tests "
                     f"{sum(first) / total_changed:.3f} (all named: {sum(h for _, h in named) / total_changed:.3f})")
    # Measured on half of the histories and applied to the other half, for every such split.
    first_shares, all_shares = [], []
    for half in itertools.combinations(names, len(names) // 2):
        measured = {cell: h / n for cell, (n, h) in table_of(set(names) - set(half)).items()}
        applied = table_of(set(half))
        fn = sum(n for cell, (n, _) in applied.items() if measured.get(cell, 0.0) >= FIRST)
        fh = sum(h for cell, (_, h) in applied.items() if measured.get(cell, 0.0) >= FIRST)
        if fn:
            first_shares.append(fh / fn)
        all_shares.append(sum(h for _, h in applied.values()) / max(1, sum(n for n, _ in applied.values())))
    if first_shares:
        lines.append(f"measured on half the histories, applied to the other half ({len(all_shares)} splits): "
                     f"first at >= {FIRST}: median {statistics.median(first_shares):.2f} "
                     f"({min(first_shares):.2f}-{max(first_shares):.2f}); all named: "
                     f"median {statistics.median(all_shares):.2f}")
    return "\n".join(lines)


def main() -> int:
    if sys.argv[1:2] == ["--calibrate"]:
        # bench/replay.py --calibrate OUT: the briefing's confidence table from a run.
        print(calibrate(json.loads(Path(sys.argv[2]).read_text())))
        return 0
    if sys.argv[1:2] == ["--section-from"]:
        # bench/replay.py --section-from OUT [--before OUT] --results bench/results.json
        sp = argparse.ArgumentParser(prog="replay.py --section-from")
        sp.add_argument("--section-from", required=True)
        sp.add_argument("--before")
        sp.add_argument("--results", required=True)
        a = sp.parse_args()
        before = json.loads(Path(a.before).read_text()) if a.before else None
        write_section(json.loads(Path(a.section_from).read_text()), Path(a.results), before)
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--project", action="append", required=True, help="NAME=LANGUAGE (repos/NAME in the cache)")
    ap.add_argument("--cairn", help="cairn binary (omit to skip cairn)")
    ap.add_argument("--cairn-profile", default="unknown")
    ap.add_argument("--crg", help="code-review-graph executable (omit to skip it)")
    ap.add_argument("--crg-version", default="")
    ap.add_argument("--commits", type=int, default=30)
    ap.add_argument("--max-source-files", type=int, default=15)
    ap.add_argument("--scan", type=int, default=3000, help="how many recent commits to look through")
    ap.add_argument("--no-localize", dest="localize", action="store_false")
    ap.add_argument("--out", required=True)
    ap.add_argument("--note", action="append", default=[])
    args = ap.parse_args()

    tok = Tokenizer()
    start = time.perf_counter()
    setup = {
        "tokenizer": tok.name,
        "cairn_bin": args.cairn,
        "cairn_profile": args.cairn_profile,
        "crg_version": args.crg_version,
        "commits": args.commits,
        "max_source_files": args.max_source_files,
        "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "load_1min": os.getloadavg()[0],
    }
    if args.cairn:
        setup["cairn_version"] = run([args.cairn, "--version"])[1].strip()
    projects = []
    for spec in args.project:
        name, _, language = spec.partition("=")
        if language not in LANGS:
            sys.exit(f"replay.py: unknown language {language!r} for {name} (known: {', '.join(LANGS)})")
        log(f"replaying {name} ({language})")
        p = replay_project(args, name, language, tok)
        p["summary"] = summarize(p)
        projects.append(p)
        setup["run_s"] = time.perf_counter() - start
        Path(args.out).write_text(json.dumps({"setup": setup, "notes": args.note, "projects": projects}, indent=1))
    setup["run_s"] = time.perf_counter() - start
    results = {"setup": setup, "notes": args.note, "projects": projects}
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
