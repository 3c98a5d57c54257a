#!/usr/bin/env python3
"""Does a learning from earlier history appear in the briefing of a later change to the same
code? `cairn learn repo` at a cut in a public history, then the later commits replayed with
and without what it learned (standard library, plus tiktoken when importable).

    bench/learn_replay.py [--cairn PATH] [--commits 40] [--max-files 50] [--work DIR]
                          [--results bench/results.json] REPO...

Each REPO is a git checkout (the histories bench/learn_repo.py reads: `git clone
https://github.com/npryce/adr-tools`, `…/Adyen/adyen-commercetools`,
`…/Altinn/altinn-authentication`, at the commits the results name). Nothing here comes from a
code host: the learnings are what the repository itself teaches (decision records, guides,
reverts and quick re-fixes); review threads are measured on generated exports only
(bench/learn_reviews.py).

For each repository:

  1. the cut: the newest commit X on HEAD's first-parent line such that at least --commits
     eligible commits (not merges, at most --max-files files changed) are reachable from HEAD
     and not from X; the newest --commits of them are replayed;
  2. at X, in a work copy: `cairn index` into a data directory, copied as it is into a second
     one (the same index, no learning); in the first, `cairn learn repo`, then every pending
     memory approved at once (`cairn memory approve ID…`), as a person approving all would;
  3. each replayed commit, oldest first: its parent checked out, `cairn index` (incremental)
     in both data directories, `cairn review --diff` of the commit's whole diff (default
     budget, text as an assistant reads it) in both.

cairn runs without the semantic model (CAIRN_MODEL_DIR points nowhere, as in
bench/learn_repo.py), so memories are matched by anchors and by words only.

Per commit and learned memory: the commit *touches* the memory when a changed path (old or new
name) is one of its anchor paths or under one, a changed symbol (the briefing's JSON) is one of
its anchor symbols, or a changed path matches its file pattern (gitignore-line semantics, as
cairn matches them). A learned memory is *shown* when its id is in the briefing's text.
Recall = touching pairs shown / touching pairs. Noise = learned memories shown on commits that
do not touch them (the briefing also matches memories by the change's words). Tokens added =
the briefing's tokens with learning minus without, counted with tiktoken's o200k_base (the
encoding cairn counts with) when importable, else characters / 4. A touching pair not shown
is diagnosed on a throwaway copy of the learned data directory with `--max-tokens 100000`:
shown there means the default budget cut it, not shown means cairn did not select it.

Borne out: a risky module (`risk_module`) learned at the cut is borne out by a later commit
touching it when that commit is itself a fix or a revert, judged by its summary line with the
words cairn's history uses (fix, bug, hotfix, revert, regression, crash; dependency bumps and
formatting, lint, style or typo fixes excluded); the base rate is the same share among the
replayed commits that touch no learned risky module.

With --results, writes the `learn_replay` section of the results file and regenerates the page.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMORY_ID = re.compile(r"\bm_[0-9a-f]{16}\b")
FIX = re.compile(r"(?i)\b(fix(es|ed|ing)?|bug(fix)?s?|hotfix|revert(s|ed)?|regression|crash(es|ed)?)\b")
BUMPS = ("bump ", "update dependency", "update dependencies", "update deps", "chore(deps",
         "fix(deps", "build(deps", "deps:", "deps(", "[dependabot", "[renovate")
COSMETIC = ("format", "lint", "style", "typo", "whitespace", "prettier", "indent", "clippy",
            "rubocop")
UNBOUNDED = 100_000


def log(msg: str) -> None:
    print(f"==> {msg}", file=sys.stderr, flush=True)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          errors="replace", check=True).stdout


class Tokenizer:
    """o200k_base through tiktoken when importable (its encoding file seeded, offline, from
    the tiktoken-rs crate cairn builds with), else characters / 4."""

    def __init__(self) -> None:
        self.name, self._enc = "characters / 4 (tiktoken not importable)", None
        cache = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR",
                                           str(Path.home() / ".cache/cairn/bench/tiktoken")))
        try:
            import tiktoken  # type: ignore

            url = b"https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
            seeded = cache / hashlib.sha1(url).hexdigest()
            registry = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "registry/src"
            asset = next(registry.glob("*/tiktoken-rs-*/assets/o200k_base.tiktoken"), None)
            if not seeded.exists() and asset:
                cache.mkdir(parents=True, exist_ok=True)
                shutil.copy(asset, seeded)
            self._enc = tiktoken.get_encoding("o200k_base")
            self.name = f"o200k_base (tiktoken {tiktoken.__version__})"
        except Exception as e:  # noqa: BLE001 - any failure means the fallback
            log(f"tiktoken o200k_base unavailable ({type(e).__name__}): counting characters / 4")

    def count(self, text: str) -> int:
        if self._enc is None:
            return (len(text) + 3) // 4
        return len(self._enc.encode(text, disallowed_special=()))


class Cairn:
    """The cairn binary on one work copy and one data directory."""

    def __init__(self, binary: str, repo: Path, data: Path) -> None:
        self.bin, self.repo, self.data = binary, repo, data
        self.env = dict(os.environ, CAIRN_MODEL_DIR=str(data.parent / "no-model"))

    def run(self, *args: str) -> str:
        done = subprocess.run([self.bin, "--repo", str(self.repo), "--data-dir", str(self.data),
                               *args], capture_output=True, text=True, env=self.env, check=False)
        if done.returncode != 0:
            sys.exit(f"learn_replay.py: cairn {args[0]} failed on {self.repo}: "
                     f"{done.stderr.strip()[-800:]}")
        return done.stdout

    def index(self) -> None:
        self.run("index", "--quiet")

    def review(self, diff: Path, max_tokens: int | None = None) -> str:
        extra = ["--max-tokens", str(max_tokens)] if max_tokens else []
        return self.run("review", "--diff", str(diff), *extra)

    def structured(self, diff: Path) -> tuple[set[str], set[str]]:
        """The changed symbols' ids and the files the history alone calls fix-prone."""
        answer = json.loads(self.run("review", "--diff", str(diff), "--json"))
        symbols = {s["id"] for f in answer["files"] for s in f["symbols"]}
        fix_prone = {r["subject"] for r in answer["risks"] if r["kind"] == "fix_prone"}
        return symbols, fix_prone


# ------------------------------------------------------------------ the cut and the commits


def eligible_commits(repo: Path, max_files: int) -> list[dict]:
    """Non-merge commits reachable from HEAD, newest first, with their changed paths."""
    raw = git(repo, "log", "--no-merges", "--no-renames", "--format=%x01%H%x00%P%x00%ad%x00%s",
              "--date=short", "--name-only")
    commits = []
    for block in raw.split("\x01")[1:]:
        head, _, names = block.partition("\n")
        sha, parents, date, subject = head.split("\x00", 3)
        files = [n for n in names.splitlines() if n.strip()]
        if len(parents.split()) == 1 and 0 < len(files) <= max_files:
            commits.append({"sha": sha, "parent": parents, "date": date, "subject": subject})
    return commits


def cut(repo: Path, want: int, max_files: int) -> tuple[str, list[dict]]:
    """The cut commit and the `want` newest eligible commits after it, oldest first."""
    eligible = eligible_commits(repo, max_files)
    for point in git(repo, "rev-list", "--first-parent", "HEAD").split()[1:]:
        after = set(git(repo, "rev-list", "--no-merges", f"{point}..HEAD").split())
        later = [c for c in eligible if c["sha"] in after]
        if len(later) >= want:
            return point, list(reversed(later[:want]))
    sys.exit(f"learn_replay.py: {repo} has fewer than {want} eligible commits on its first-parent line")


def changed_paths(repo: Path, parent: str, sha: str) -> list[str]:
    """Every path the commit changes, the old name of a rename too."""
    out = git(repo, "diff", "--name-status", "-M", parent, sha)
    return sorted({p for line in out.splitlines() for p in line.split("\t")[1:]})


# ------------------------------------------------------------------ what a memory is about


def pattern_regex(pattern: str) -> re.Pattern:
    """A file pattern as cairn compiles it: a gitignore line, so `*.py` anywhere, `docs/`
    and `migrations` as folders at any depth, `src/api/**/*.ts` from the root."""
    body = pattern.strip().rstrip("/")
    forms = [body, f"{body}/**"] if "/" in body else [f"**/{body}", f"**/{body}/**"]

    def glob(form: str) -> str:
        out, i = "", 0
        while i < len(form):
            if form.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif form.startswith("/**", i) and i + 3 == len(form):
                out, i = out + "/.*", i + 3
            elif form.startswith("**", i):
                out, i = out + ".*", i + 2
            elif form[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif form[i] == "?":
                out, i = out + "[^/]", i + 1
            else:
                out, i = out + re.escape(form[i]), i + 1
        return out

    return re.compile("^(?:" + "|".join(glob(f) for f in forms) + ")$")


def touches(memory: dict, paths: list[str], symbols: set[str]) -> bool:
    """Whether a change of `paths` and `symbols` touches what `memory` is anchored to."""
    for anchor in memory.get("paths", []):
        if any(p == anchor or p.startswith(anchor + "/") for p in paths):
            return True
    if symbols & set(memory.get("symbols", [])):
        return True
    pattern = memory.get("file_pattern")
    return bool(pattern) and any(pattern_regex(pattern).match(p) for p in paths)


def is_fix(subject: str) -> bool:
    """A fix or a revert by its summary, as cairn's history judges; bumps and cosmetics not."""
    lower = subject.strip().lower()
    if lower.startswith(BUMPS) or any(w in lower for w in COSMETIC):
        return False
    return bool(FIX.search(subject))


# ------------------------------------------------------------------ one repository


def learn_at_cut(learned: Cairn, plain: Cairn) -> tuple[list[dict], dict]:
    """Indexes the cut into both data directories, learns into one and approves everything."""
    learned.index()
    shutil.copytree(learned.data, plain.data)
    answer = json.loads(learned.run("learn", "repo", "--json"))
    pending = json.loads(learned.run("memory", "list", "--pending", "--json"))
    if pending:
        learned.run("memory", "approve", *[m["id"] for m in pending])
    return pending, answer["counts"]


def replay_repo(args, origin: Path, tok: Tokenizer) -> dict:
    name = origin.resolve().name.replace("+", "/")
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="learn-replay-", dir=args.work))
    copy, diffs = work / "repo", work / "diffs"
    diffs.mkdir()
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(origin), str(copy)], check=True)
    git(copy, "config", "advice.detachedHead", "false")
    point, commits = cut(copy, args.commits, args.max_files)
    git(copy, "checkout", "-q", "-f", "--detach", point)
    learned = Cairn(args.cairn, copy, work / "learned")
    plain = Cairn(args.cairn, copy, work / "plain")
    memories, counts = learn_at_cut(learned, plain)
    by_id = {m["id"]: m for m in memories}
    log(f"{name}: cut at {point[:10]}, {len(memories)} learned and approved; "
        f"replaying {len(commits)} commits")

    rows = []
    for i, c in enumerate(commits, 1):
        git(copy, "checkout", "-q", "-f", "--detach", c["parent"])
        git(copy, "clean", "-fdq")
        learned.index()
        plain.index()
        diff = diffs / f"{c['sha'][:12]}.diff"
        diff.write_text(git(copy, "diff", "--no-color", "--no-ext-diff", "-M", c["parent"], c["sha"]))
        paths = changed_paths(copy, c["parent"], c["sha"])
        symbols, fix_prone = plain.structured(diff)
        with_text, without_text = learned.review(diff), plain.review(diff)
        if any(m in by_id for m in MEMORY_ID.findall(without_text)):
            sys.exit(f"learn_replay.py: a learned memory in the briefing without learning ({c['sha']})")
        shown = {m for m in MEMORY_ID.findall(with_text) if m in by_id}
        touching = {m["id"] for m in memories if touches(m, paths, symbols)}
        risky = [m for m in touching if by_id[m]["type"] == "risk_module"]
        missed = sorted(touching - shown)
        row = {
            "sha": c["sha"], "date": c["date"], "subject": c["subject"], "paths": len(paths),
            "touching": sorted(touching), "shown": sorted(shown), "missed": missed,
            "noise": sorted(shown - touching),
            "tokens_with": tok.count(with_text), "tokens_without": tok.count(without_text),
            "truncated": "_truncated:" in with_text,
            "fix": is_fix(c["subject"]),
            "touches_risk": bool(risky),
            # Touching risky modules the history's fix-prone files already name without learning.
            "risky_fix_prone": sum(1 for m in risky
                                   if all(p in fix_prone for p in by_id[m]["paths"])),
            "risky_pairs": len(risky),
        }
        if missed:
            row["missed_why"] = diagnose(learned, diff, missed, work)
        rows.append(row)
        log(f"  [{i}/{len(commits)}] {c['sha'][:10]} {c['subject'][:50]!r}: touching "
            f"{len(touching)}, shown {len(shown & touching)}, noise {len(row['noise'])}, "
            f"+{row['tokens_with'] - row['tokens_without']} tokens")
    shutil.rmtree(work)
    return {
        "name": name, "head": git(origin, "rev-parse", "--short", "HEAD").strip(),
        "cut": point[:10], "cut_date": git(origin, "log", "-1", "--format=%ad", "--date=short",
                                           point).strip(),
        "counts": counts, "learned": [{k: m.get(k) for k in
                                       ("id", "type", "paths", "symbols", "file_pattern", "title")}
                                      for m in memories],
        "commits": rows, "seconds": round(time.monotonic() - started, 1),
    }


def diagnose(learned: Cairn, diff: Path, missed: list[str], work: Path) -> dict:
    """Why touching learnings were not shown: the budget cut them (shown without a budget) or
    cairn did not select them; on a throwaway copy, so the measured store's read counts stay."""
    scratch = Cairn(learned.bin, learned.repo, work / "scratch")
    shutil.copytree(learned.data, scratch.data)
    text = scratch.review(diff, UNBOUNDED)
    shutil.rmtree(scratch.data)
    return {m: "budget" if m in text else "not selected" for m in missed}


# ------------------------------------------------------------------ figures


def figures(repo: dict) -> dict:
    rows, by_id = repo["commits"], {m["id"]: m for m in repo["learned"]}
    pairs = sum(len(r["touching"]) for r in rows)
    shown_pairs = sum(len(set(r["touching"]) & set(r["shown"])) for r in rows)
    added = [r["tokens_with"] - r["tokens_without"] for r in rows]
    risky = [r for r in rows if r["touches_risk"]]
    others = [r for r in rows if not r["touches_risk"]]
    why = [w for r in rows for w in r.get("missed_why", {}).values()]
    kinds: dict[str, int] = {}
    for m in repo["learned"]:
        kinds[m["type"]] = kinds.get(m["type"], 0) + 1
    return {
        "learned": len(repo["learned"]), "kinds": kinds,
        "anchored": sum(1 for m in repo["learned"]
                        if m.get("paths") or m.get("symbols") or m.get("file_pattern")),
        "commits": len(rows),
        "touching_commits": sum(1 for r in rows if r["touching"]),
        "pairs": pairs, "shown_pairs": shown_pairs,
        "shown_commits": sum(1 for r in rows if set(r["touching"]) & set(r["shown"])),
        "noise": sum(len(r["noise"]) for r in rows),
        "noise_commits": sum(1 for r in rows if r["noise"]),
        "noise_unanchored": sum(1 for r in rows for m in r["noise"]
                                if not (by_id[m].get("paths") or by_id[m].get("symbols")
                                        or by_id[m].get("file_pattern"))),
        "missed_budget": why.count("budget"), "missed_unselected": why.count("not selected"),
        "tokens_added_median": statistics.median(added) if added else 0,
        "tokens_added_mean": statistics.fmean(added) if added else 0,
        "tokens_added_when_shown": [a for a, r in zip(added, rows) if r["shown"]],
        "tokens_without_median": statistics.median(r["tokens_without"] for r in rows),
        "risky_pairs": sum(r["risky_pairs"] for r in rows),
        "risky_fix_prone": sum(r["risky_fix_prone"] for r in rows),
        "risky_commits": len(risky), "risky_fixes": sum(r["fix"] for r in risky),
        "other_commits": len(others), "other_fixes": sum(r["fix"] for r in others),
    }


def share(part: int, whole: int) -> str:
    return f"{part} of {whole}" + (f" ({100 * part / whole:.0f}%)" if whole else "")


def table_row(label: str, f: dict) -> list[str]:
    when = f["tokens_added_when_shown"]
    return [
        label,
        f"{f['learned']} ({', '.join(f'{n} {k}' for k, n in sorted(f['kinds'].items()))})",
        f"{f['touching_commits']} of {f['commits']}",
        share(f["shown_pairs"], f["pairs"]),
        f"{f['missed_budget']} / {f['missed_unselected']}",
        f"{f['noise']} on {f['noise_commits']} commits",
        f"{f['tokens_added_median']:+.0f} / {statistics.median(when):+.0f}" if when
        else f"{f['tokens_added_median']:+.0f} / –",
        f"{share(f['risky_fixes'], f['risky_commits'])} vs {share(f['other_fixes'], f['other_commits'])}",
    ]


def total(all_figures: list[dict]) -> dict:
    t: dict = {"kinds": {}, "tokens_added_when_shown": []}
    for f in all_figures:
        for k, v in f.items():
            if k == "kinds":
                for kind, n in v.items():
                    t["kinds"][kind] = t["kinds"].get(kind, 0) + n
            elif k == "tokens_added_when_shown":
                t[k] += v
            elif isinstance(v, int) and not k.endswith(("median", "mean")):
                t[k] = t.get(k, 0) + v
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cairn", default=str(Path.home() / ".cache/cairn/target/release/cairn"))
    parser.add_argument("--commits", type=int, default=40, help="commits replayed after the cut")
    parser.add_argument("--max-files", type=int, default=50,
                        help="commits changing more files are not eligible")
    parser.add_argument("--work", type=Path, help="where work copies go (default: a temp dir)")
    parser.add_argument("--out", type=Path, help="every commit's record, as JSON")
    parser.add_argument("--results", type=Path)
    parser.add_argument("repos", nargs="+", type=Path)
    args = parser.parse_args()
    tok = Tokenizer()
    repos = [replay_repo(args, repo, tok) for repo in args.repos]
    all_figures = [figures(r) for r in repos]
    for r, f in zip(repos, all_figures):
        r["figures"] = f
    every = total(all_figures)
    every["tokens_added_median"] = statistics.median(
        r["tokens_with"] - r["tokens_without"] for repo in repos for r in repo["commits"])
    rows = [table_row(f"{r['name']} @ {r['head']}, cut {r['cut']} ({r['cut_date']})", f)
            for r, f in zip(repos, all_figures)] + [table_row("all", every)]
    report = {"tokenizer": tok.name, "commits": args.commits, "repos": repos, "total": every}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    for row in rows:
        print(" | ".join(row))
    print(json.dumps({k: v for k, v in every.items() if k != "tokens_added_when_shown"}))
    if args.results:
        write_results(args, rows, every, tok)


def write_results(args, rows: list[list[str]], every: dict, tok: Tokenizer) -> None:
    facts = json.loads(subprocess.run([sys.executable, str(ROOT / "bench/benchtool.py"), "machine"],
                                      capture_output=True, text=True, check=True).stdout)
    results = json.loads(args.results.read_text())
    results["sections"]["learn_replay"] = {
        "title": "Learnings in later briefings",
        "date": time.strftime("%Y-%m-%d"),
        "commit": git(ROOT, "rev-parse", "--short", "HEAD").strip(),
        "machine": (f"{facts['nproc']} cores ({facts['cpu_model']}), {facts['mem_total_gb']} GB, "
                    "release build"),
        "corpus": (f"the histories of the previous section, each cut before its newest "
                   f"{args.commits} commits of at most {args.max_files} files (merges left out); "
                   f"everything `cairn learn repo` proposed at the cut approved; of the touching "
                   f"risky modules, {every['risky_fix_prone']} of {every['risky_pairs']} are files "
                   f"the briefing without learning already calls fix-prone; tokens: {tok.name}"),
        "command": f"bench/learn_replay.py --commits {args.commits} --results bench/results.json REPO...",
        "columns": ["repository", "learned, approved", "commits touching a learning",
                    "touching learnings shown", "not shown: budget / not selected",
                    "shown, not touching",
                    "tokens added: median / when shown", "fixes: touching a risky module vs not"],
        "rows": rows,
    }
    args.results.write_text(json.dumps(results, indent=1) + "\n")
    subprocess.run([sys.executable, str(ROOT / "bench/page.py")], check=True)


if __name__ == "__main__":
    main()
