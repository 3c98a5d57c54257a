#!/usr/bin/env python3
"""Two builds of cairn on one repository, in the same run: what a build setting costs at run time.

Usage: bench/compare_builds.py --repo DIR --build LABEL=BINARY --build LABEL=BINARY
                               [--runs 5] [--symbol ID] [--file PATH]

DIR is a git work tree (Django's sdist as bench/focus.py prepares it: `pip download --no-deps
--no-binary :all: django==5.1.4`, unpacked, `git init` and one commit). For each round, the
builds take turns (the order alternates, so neither always runs on a warmer cache), each with
its own data directory:

- cold `cairn index` (the data directory emptied first): parsing, the graph, the store's writes;
- `cairn index` after a one-line change to FILE: one file parsed, the store patched;
- `cairn context --max-tokens 2000`, `cairn expand SYMBOL`, `cairn review` of that change: a
  process that opens the store, loads the graph and answers (what SurrealDB is asked most).

It prints the median of each over the rounds per build, and the ratio of the second build's to
the first's. Nothing else should run beside it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = ["cold index", "index after a one-line change", "context", "expand", "review"]


def timed(command: list[str], cwd: Path, data: Path) -> float:
    env = {"CAIRN_DATA_DIR": str(data), "PATH": "/usr/bin:/bin", "HOME": str(data.parent)}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"compare_builds: {' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return took


def round_of(binary: str, repo: Path, data: Path, symbol: str, file: str) -> dict[str, float]:
    subprocess.run(["rm", "-rf", str(data)], check=True)
    data.mkdir(parents=True)
    times = {"cold index": timed([binary, "index", "--quiet"], repo, data)}
    path = repo / file
    original = path.read_text()
    try:
        path.write_text(original + "\n# touched\n")
        times["index after a one-line change"] = timed([binary, "index", "--quiet"], repo, data)
        times["context"] = timed([binary, "context", "--max-tokens", "2000"], repo, data)
        times["expand"] = timed([binary, "expand", symbol], repo, data)
        times["review"] = timed([binary, "review"], repo, data)
    finally:
        path.write_text(original)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--build", action="append", required=True, help="LABEL=BINARY")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--symbol", default="django/db/models/query.py::QuerySet.count")
    parser.add_argument("--file", default="django/db/models/query.py")
    args = parser.parse_args()
    builds = [b.split("=", 1) for b in args.build]
    if len(builds) != 2 or any(len(b) != 2 for b in builds):
        sys.exit("compare_builds: give two --build LABEL=BINARY")
    work = Path(tempfile.mkdtemp(prefix="cairn-compare."))
    samples: dict[str, dict[str, list[float]]] = {label: {s: [] for s in STEPS} for label, _ in builds}
    for run in range(args.runs):
        order = builds if run % 2 == 0 else list(reversed(builds))
        for label, binary in order:
            times = round_of(binary, args.repo.resolve(), work / label / "data", args.symbol, args.file)
            for step, took in times.items():
                samples[label][step].append(took)
            print(f"round {run + 1} {label}: " + ", ".join(f"{s} {t:.2f} s" for s, t in times.items()),
                  file=sys.stderr)
    (first, _), (second, _) = builds
    print(f"| step | {first} | {second} | {second} / {first} |")
    print("|---|---:|---:|---:|")
    for step in STEPS:
        a = statistics.median(samples[first][step])
        b = statistics.median(samples[second][step])
        print(f"| {step} | {a:.2f} s | {b:.2f} s | {b / a:.2f} |")
    subprocess.run(["rm", "-rf", str(work)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
