#!/usr/bin/env python3
"""Time and memory of `cairn learn reviews` on a large generated review history (stdlib only).

    bench/learn_reviews.py [--cairn PATH] [--pulls 10000] [--seed 7] [--keep DIR]
                           [--results bench/results.json]

Generates, in GitHub's REST shapes as `gh api --paginate` writes them (pages of 100 items one
after another), the pull requests, review comments (threads with replies) and reviews of a
synthetic repository, then runs `cairn learn reviews` on them twice (the second run finds
everything recorded already) and reports wall time and peak RSS of each run, with what was
learned. These are generated threads, not real ones: the figures measure cost, not the
quality of the decisions (see the fixtures from the hosts' documented examples for that).
With --results, writes the `learn` section of the results file and regenerates the page.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPO = "bench-org/shop"

ASKS = [
    "Please add a test for the {what} path.",
    "Could you add a test covering {what}?",
    "This needs error handling when {what} fails.",
    "What happens if {what} raises here?",
    "Rename `{name}` to something that says what it holds.",
    "nit: trailing whitespace",
    "nit: import order",
    "This is O(n^2) on large {what} lists.",
    "Cache the {what} lookup instead of querying in the loop (N+1).",
    "Is this thread-safe? Two workers can update {what} at once.",
    "Document why {name} is needed.",
    "Use a guard clause here.",
    "The {what} token must not be logged.",
    "Prefer the existing helper `{name}` over a new one.",
    "This breaks backwards compatibility for {what} clients.",
]
REPLIES = [
    "Done.",
    "Fixed, thanks!",
    "Good catch, updated.",
    "Won't fix: this is intentional.",
    "I'd rather keep it as is, it is by design.",
    "Good point, follow-up in #{issue}.",
    "Out of scope for this PR, tracked in #{issue}.",
    "Not sure what you mean?",
]
WORDS = ["cart", "order", "invoice", "refund", "payment", "webhook", "session", "coupon",
         "shipment", "customer", "tax", "discount", "ledger", "report", "export"]


def user(login: str) -> dict:
    return {"login": login, "id": abs(hash(login)) % 10**6, "type": "User",
            "html_url": f"https://github.com/{login}", "site_admin": False}


def generate(out: Path, pulls: int, seed: int) -> dict:
    rng = random.Random(seed)
    authors = [f"dev{i:02}" for i in range(30)]
    reviewers = [f"rev{i:02}" for i in range(10)]
    files = [f"src/{d}/{w}_{i}.py" for d in ("api", "core", "billing", "jobs", "web")
             for w in WORDS for i in range(7)]
    prs, comments, reviews = [], [], []
    comment_id, review_id = 10_000_000, 50_000_000
    for number in range(1, pulls + 1):
        author = rng.choice(authors)
        merged = rng.random() < 0.85
        day = 1 + number % 28
        at = f"2024-{1 + number % 12:02}-{day:02}T12:00:00Z"
        head = f"{number:040x}"
        prs.append({
            "url": f"https://api.github.com/repos/{REPO}/pulls/{number}",
            "html_url": f"https://github.com/{REPO}/pull/{number}", "number": number,
            "state": "closed", "title": f"Change {number}", "user": user(author),
            "body": "Please pull these changes in.", "created_at": at, "updated_at": at,
            "closed_at": at, "merged_at": at if merged else None,
            "head": {"sha": head, "ref": f"topic-{number}"},
            "base": {"sha": "0" * 40, "ref": "main", "repo": {"full_name": REPO}},
        })
        reviewer = rng.choice(reviewers)
        for _ in range(rng.choice([0, 1, 1, 2, 3, 4, 6])):
            comment_id += 1
            what = rng.choice(WORDS)
            body = rng.choice(ASKS).format(what=what, name=f"{what}_{rng.randint(1, 9)}")
            line = rng.randint(1, 400)
            url = f"https://api.github.com/repos/{REPO}/pulls/{number}"
            outdated = rng.random() < 0.3
            comments.append({
                "id": comment_id, "pull_request_url": url, "diff_hunk": "@@ -1,3 +1,4 @@",
                "path": rng.choice(files), "line": None if outdated else line,
                "original_line": line, "side": "RIGHT", "commit_id": head,
                "original_commit_id": f"{number + 1:040x}", "user": user(reviewer),
                "body": body, "created_at": at,
            })
            if rng.random() < 0.7:
                root = comment_id
                comment_id += 1
                reply = rng.choice(REPLIES).format(issue=rng.randint(1, 5000))
                comments.append({
                    "id": comment_id, "in_reply_to_id": root, "pull_request_url": url,
                    "diff_hunk": "@@", "path": comments[-1]["path"], "user": user(author),
                    "body": reply, "created_at": at,
                })
        review_id += 1
        state = rng.choice(["APPROVED", "APPROVED", "CHANGES_REQUESTED", "COMMENTED"])
        reviews.append({"id": review_id, "user": user(reviewer), "state": state,
                        "pull_request_url": f"https://api.github.com/repos/{REPO}/pulls/{number}",
                        "submitted_at": at})
    names = {}
    for name, items in (("pulls.json", prs), ("comments.json", comments), ("reviews.json", reviews)):
        with open(out / name, "w", encoding="utf-8") as fh:
            for start in range(0, len(items), 100):
                fh.write(json.dumps(items[start:start + 100]))
                fh.write("\n")
        names[name] = len(items)
    return names


def run(cairn: str, repo: Path, data: Path, exports: Path) -> dict:
    files = [str(exports / n) for n in ("pulls.json", "comments.json", "reviews.json")]
    env = dict(os.environ, CAIRN_MODEL_DIR=str(data / "no-model"))
    start = time.monotonic()
    done = subprocess.run(
        [cairn, "--repo", str(repo), "--data-dir", str(data), "learn", "reviews", "--json", *files],
        capture_output=True, text=True, env=env, check=False)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"learn_reviews.py: cairn failed: {done.stderr}")
    answer = json.loads(done.stdout)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": round(seconds, 1), "peak_mb": round(peak_kb / 1024), "answer": answer}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cairn", default=str(Path.home() / ".cache/cairn/target/release/cairn"))
    parser.add_argument("--pulls", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="cairn-learn-bench-"))
    repo, data, exports = work / "repo", work / "data", work / "exports"
    for d in (repo, data, exports):
        d.mkdir(parents=True, exist_ok=True)
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)
    git("init", "-q", "-b", "main")
    git("remote", "add", "origin", f"https://github.com/{REPO}.git")
    (repo / "README.md").write_text("shop\n")
    git("add", ".")
    git("-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "start")
    counts = generate(exports, args.pulls, args.seed)
    size_mb = sum(f.stat().st_size for f in exports.iterdir()) / 1e6
    first = run(args.cairn, repo, data, exports)
    again = run(args.cairn, repo, data, exports)
    a = first["answer"]
    print(json.dumps({
        "exports": counts, "export_mb": round(size_mb, 1),
        "first": {k: v for k, v in first.items() if k != "answer"},
        "again": {k: v for k, v in again.items() if k != "answer"},
        "reviews": a["reviews"], "implemented": a["implemented"], "rejected": a["rejected"],
        "deferred": a["deferred"], "unknown": a["unknown"], "written": a["stored"]["written"],
        "repeated": again["answer"]["stored"]["repeated"], "proposed": len(a["proposed"]),
    }, indent=1))
    if args.results:
        write_results(args, counts, size_mb, first, again)


def write_results(args, counts, size_mb, first, again) -> None:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    machine = subprocess.run([sys.executable, str(ROOT / "bench/benchtool.py"), "machine"],
                             capture_output=True, text=True, check=True).stdout
    facts = json.loads(machine)
    results = json.loads(args.results.read_text())
    a = first["answer"]
    results["sections"]["learn"] = {
        "title": "Learning a review history",
        "date": time.strftime("%Y-%m-%d"),
        "commit": commit,
        "machine": (f"{facts['nproc']} cores ({facts['cpu_model']}), {facts['mem_total_gb']} GB, "
                    "release build"),
        "corpus": (f"generated GitHub exports: {counts['pulls.json']:,} pull requests, "
                   f"{counts['comments.json']:,} review comments and replies, "
                   f"{counts['reviews.json']:,} reviews, {size_mb:.0f} MB (seed {args.seed}); "
                   "not real threads"),
        "command": f"bench/learn_reviews.py --pulls {args.pulls} --results bench/results.json",
        "columns": ["run", "wall time", "peak RSS", "what it did"],
        "rows": [
            ["first", f"{first['seconds']} s", f"{first['peak_mb']} MB",
             f"{a['reviews']:,} reviews recorded ({a['implemented']:,} findings implemented, "
             f"{a['rejected']:,} rejected, {a['deferred']:,} deferred, {a['unknown']:,} undecided); "
             f"{len(a['proposed'])} proposals"],
            ["again", f"{again['seconds']} s", f"{again['peak_mb']} MB",
             f"{again['answer']['stored']['repeated']:,} reviews found recorded, nothing written"],
        ],
    }
    args.results.write_text(json.dumps(results, indent=1) + "\n")
    subprocess.run([sys.executable, str(ROOT / "bench/page.py")], check=True)


if __name__ == "__main__":
    main()
