#!/usr/bin/env python3
"""What `cairn learn repo` proposes on real repositories, how fast, and how many of its
proposals a person would keep (stdlib only).

    bench/learn_repo.py [--cairn PATH] [--labels bench/labels/learn_repo.jsonl]
                        [--results bench/results.json] REPO...

Each REPO is a git checkout (obtain the same ones with `git clone`, e.g.
`git clone https://github.com/npryce/adr-tools`, then check out the commit the results name).
For each: `cairn index`, then `cairn learn repo --dry-run --json` timed, into a fresh data
directory. Prints every proposal as one JSON line (repository, commit, type, source, from,
content) for labelling. With --labels (JSON lines: repository, from, type, label `keep` or
`drop`, why), reports the share kept among the labelled proposals. With --results, writes the
`learn_repo` section of the results file and regenerates the page.

It also reports what the repository's CODEOWNERS gives: the file cairn read, its rules, how many
tracked files have owners (by GitHub's rules, read here independently of cairn), and whether
`cairn expand FILE` names those owners, on one owned file cairn indexes for each set of
owners (3 at most).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def cairn_run(cairn: str, repo: Path, data: Path) -> tuple[list[str], dict]:
    base = [cairn, "--repo", str(repo), "--data-dir", str(data)]
    return base, {"CAIRN_MODEL_DIR": str(data / "no-model"), "PATH": "/usr/bin:/bin"}


def learn(cairn: str, repo: Path) -> dict:
    data = Path(tempfile.mkdtemp(prefix="cairn-learn-repo-"))
    base, env = cairn_run(cairn, repo, data)
    subprocess.run([*base, "index", "--quiet"], check=True, capture_output=True, env=env)
    start = time.monotonic()
    done = subprocess.run([*base, "learn", "repo", "--dry-run", "--json"], capture_output=True,
                          text=True, env=env, check=False)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"learn_repo.py: cairn failed on {repo}: {done.stderr}")
    return {"seconds": seconds, "answer": json.loads(done.stdout), "data": data}


def owners_pattern(pattern: str) -> re.Pattern:
    """A CODEOWNERS pattern as GitHub reads it: anchored when a `/` precedes its end, `*` within
    a folder, `**` across them, a folder's files at any depth unless its last part is a wildcard."""
    body, out = pattern.strip("/"), "" if "/" in pattern.rstrip("/") else "(?:.*/)?"
    for part in re.split(r"(\*\*/|\*\*|\*|\?)", body):
        out += {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
    last = body.rsplit("/", 1)[-1]
    return re.compile(out + ("/.*" if pattern.endswith("/") else "" if "*" in last else "(?:/.*)?"))


def owners_of(rules: list, path: str) -> list[str]:
    """The owners the last matching rule names (none when it names none)."""
    return next((owners for rule, owners in reversed(rules) if rule.fullmatch(path)), [])


def codeowners(cairn: str, repo: Path, data: Path, found: str | None) -> str:
    """What CODEOWNERS gives: its rules, the tracked files it owns, and `cairn expand` on one
    owned file cairn indexes for each set of owners, 3 at most (their owners named, exactly)."""
    if not found:
        return "none"
    rules = []
    for line in (repo / found).read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            rules.append((owners_pattern(words[0]), words[1:]))
    files = git(repo, "ls-files").splitlines()
    owned = {f: o for f in files if (o := owners_of(rules, f))}
    parsed = {e for t in (ROOT / "grammars").glob("*/language.toml")
              for e in re.findall(r'"(\w+)"', re.search(r"^extensions.*", t.read_text(), re.M)[0])}
    indexed = [f for f in sorted(owned) if f.rsplit(".", 1)[-1] in parsed]
    by_owners: dict[tuple, str] = {}
    for f in indexed:
        by_owners.setdefault(tuple(owned[f]), f)
    sample = list(by_owners.values())[:3]
    base, env = cairn_run(cairn, repo, data)
    named = 0
    for f in sample:
        out = subprocess.run([*base, "expand", f, "--include", "history"], capture_output=True,
                             text=True, env=env, check=False).stdout
        line = next((l for l in out.splitlines() if l.startswith("- owners: ")), "")
        named += line.split(" (")[0] == "- owners: " + ", ".join(owned[f])
        print(f"{repo.name} expand {f}: {line or 'no owners'}", file=sys.stderr)
    return (f"{found}, {len(rules)} rules: {len(owned):,} of {len(files):,} files owned "
            f"({len(indexed)} in languages cairn indexes); expand names them on {named} of "
            f"{len(sample)} sampled")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cairn", default=str(Path.home() / ".cache/cairn/target/release/cairn"))
    parser.add_argument("--labels", type=Path)
    parser.add_argument("--results", type=Path)
    parser.add_argument("repos", nargs="+", type=Path)
    args = parser.parse_args()
    labels = {}
    if args.labels and args.labels.exists():
        for line in args.labels.read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                labels[(item["repository"], item["type"], item["from"])] = item["label"]
    rows, kept, labelled = [], 0, 0
    per_type: dict[str, list[int]] = {}
    for repo in args.repos:
        name = repo.resolve().name.replace("+", "/")
        commit = git(repo, "rev-parse", "--short", "HEAD")
        commits = int(git(repo, "rev-list", "--count", "HEAD"))
        run = learn(args.cairn, repo)
        answer = run["answer"]
        proposed = answer["proposed"]
        for p in proposed:
            print(json.dumps({"repository": name, "commit": commit, "type": p["type"],
                              "source": p["learned_from"], "from": p["from"],
                              "content": p["content"][:300]}))
            label = labels.get((name, p["type"], p["from"]))
            if label:
                labelled += 1
                kept += label == "keep"
                counts = per_type.setdefault(p["type"], [0, 0])
                counts[0] += label == "keep"
                counts[1] += 1
        by_type = {}
        for p in proposed:
            by_type[p["type"]] = by_type.get(p["type"], 0) + 1
        c = answer["counts"]
        rows.append([f"{name} @ {commit}", f"{commits:,}", f"{run['seconds']:.1f} s",
                     f"{len(proposed)} ({', '.join(f'{n} {t}' for t, n in sorted(by_type.items()))})",
                     f"{1000 * len(proposed) / max(commits, 1):.0f}",
                     f"{c['decision_records']} records, {c['guide_sections']} guide sections, "
                     f"{c['reverts']} reverts, {c['refixes']} re-fixes",
                     codeowners(args.cairn, repo, run["data"], answer.get("codeowners"))])
    by_type = "; ".join(f"{t}: {k} of {n}" for t, (k, n) in sorted(per_type.items()))
    summary = (f"{kept} of {labelled} labelled proposals kept ({100 * kept / labelled:.0f}%; {by_type})"
               if labelled else "no labels given")
    print(summary, file=sys.stderr)
    if args.results:
        write_results(args, rows, summary)


def write_results(args, rows, summary) -> None:
    facts = json.loads(subprocess.run([sys.executable, str(ROOT / "bench/benchtool.py"), "machine"],
                                      capture_output=True, text=True, check=True).stdout)
    results = json.loads(args.results.read_text())
    results["sections"]["learn_repo"] = {
        "title": "Learning from the repository",
        "date": time.strftime("%Y-%m-%d"),
        "commit": git(ROOT, "rev-parse", "--short", "HEAD"),
        "machine": (f"{facts['nproc']} cores ({facts['cpu_model']}), {facts['mem_total_gb']} GB, "
                    "release build"),
        "corpus": f"public repositories with decision records, fetched at the commits named; {summary}",
        "command": "bench/learn_repo.py --labels bench/labels/learn_repo.jsonl REPO...",
        "columns": ["repository", "commits", "time", "proposals", "per 1,000 commits", "read",
                    "CODEOWNERS"],
        "rows": rows,
    }
    args.results.write_text(json.dumps(results, indent=1) + "\n")
    subprocess.run([sys.executable, str(ROOT / "bench/page.py")], check=True)


if __name__ == "__main__":
    main()
