#!/usr/bin/env python3
"""Add and search latency through the `mem0ai` SDK against a cairn daemon.

    bench/mem0_latency.py [--cairn BIN] [--sizes 1000,10000] [--samples 100] [--out FILE]

Makes a git repository and a data directory in a temporary directory, starts `cairn daemon`
on them, and through `mem0.MemoryClient` fills the memories up to each size with distinct
facts (one user turn each, for one of 20 developers, `infer` on: every add goes through
cairn's write decision), timing every add. At each size it reports the latency of the last
`samples` adds before it and of `samples` searches (three words of a stored fact, filtered by
its developer, `top_k` 10), p50 and p95 in milliseconds, as JSON (and to --out) and as a
Markdown row per size.

The daemon is BIN (default: target/release/cairn, or CAIRN_BIN); a release build is what the
figures mean. It uses the embedding model where cairn finds it (.ci/fetch-model), as a user's
daemon does. The SDK is mem0ai 2.2.1: when `import mem0` fails this script runs itself again
in a venv it makes from the wheels .ci/fetch-mem0ai keeps (never from the network).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEM0AI = "2.2.1"
DEVELOPERS = 20


def wheelhouse() -> Path:
    cache = os.environ.get("CAIRN_WHEEL_CACHE") or str(Path.home() / ".cache/cairn/wheels")
    return Path(cache) / f"mem0ai-{MEM0AI}"


def rerun_in_venv() -> None:
    """Runs this script again under a Python that has the pinned SDK."""
    wheels = wheelhouse()
    if not (wheels / "complete").exists():
        sys.exit(f"mem0_latency: the mem0ai {MEM0AI} wheels are not in {wheels}: run .ci/fetch-mem0ai")
    venv = Path.home() / ".cache/cairn/bench" / f"mem0ai-{MEM0AI}-venv"
    python = venv / "bin" / "python"
    if not (venv / "installed").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--no-index", "--find-links", str(wheels), f"mem0ai=={MEM0AI}"],
            check=True,
        )
        (venv / "installed").write_text(MEM0AI)
    os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


def words(rng: random.Random, n: int) -> list[str]:
    """Made-up words, so that no two facts share much and none is a duplicate of another."""
    syllables = ["ka", "lo", "mi", "ren", "tas", "vu", "dor", "pel", "quin", "sa", "tir", "bo",
                 "zen", "fra", "gul", "hex", "jor", "nim", "op", "wal"]
    return ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(n)]


def fact(rng: random.Random, vocabulary: list[str]) -> str:
    picked = rng.sample(vocabulary, 8)
    return (f"The {picked[0]} module keeps {picked[1]} {picked[2]} apart from {picked[3]}, "
            f"so {picked[4]} reviews check {picked[5]} {picked[6]} before {picked[7]}.")


def percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def start_daemon(cairn: str, work: Path) -> tuple[subprocess.Popen, str, str]:
    repo, data = work / "repo", work / "data"
    repo.mkdir()
    (repo / "README.md").write_text("A repository for the mem0 latency bench.\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-C", str(repo)]
    subprocess.run([*git, "init", "--quiet"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "start"], check=True)
    env = {**os.environ, "CAIRN_ORGS_DIR": str(data / "orgs")}
    env.pop("CAIRN_REPO", None)
    env.pop("CAIRN_DATA_DIR", None)
    log = open(work / "daemon.log", "w")
    daemon = subprocess.Popen(
        [cairn, "--repo", str(repo), "--data-dir", str(data), "daemon"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env,
    )
    record = data / "daemon.json"
    deadline = time.monotonic() + 60
    while True:
        try:
            port = json.loads(record.read_text())["port"]
            break
        except (OSError, ValueError, KeyError):
            if daemon.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"mem0_latency: the daemon did not start; see {work / 'daemon.log'}")
            time.sleep(0.05)
    token = (data / "daemon.token").read_text().strip()
    return daemon, f"http://127.0.0.1:{port}", token


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cairn", default=os.environ.get("CAIRN_BIN", str(ROOT / "target/release/cairn")))
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out")
    args = parser.parse_args()
    # mem0 reads it on import: no usage reports from a bench.
    os.environ.setdefault("MEM0_TELEMETRY", "false")
    try:
        from mem0 import MemoryClient
    except ImportError:
        rerun_in_venv()
        return
    sizes = sorted(int(s) for s in args.sizes.split(","))
    rng = random.Random(args.seed)
    vocabulary = words(rng, 5_000)
    with tempfile.TemporaryDirectory(prefix="cairn-mem0-bench.") as tmp:
        work = Path(tmp)
        os.environ.setdefault("MEM0_DIR", str(work / "mem0"))
        daemon, host, token = start_daemon(args.cairn, work)
        try:
            client = MemoryClient(api_key=token, host=host)
            stored: list[tuple[str, str]] = []
            add_times: list[float] = []
            events: dict[str, int] = {}
            rows = []
            for size in sizes:
                while len(stored) < size:
                    text, user = fact(rng, vocabulary), f"dev{len(stored) % DEVELOPERS}"
                    started = time.perf_counter()
                    answer = client.add(text, user_id=user)
                    add_times.append(time.perf_counter() - started)
                    for result in answer["results"]:
                        events[result["event"]] = events.get(result["event"], 0) + 1
                    stored.append((text, user))
                search_times = []
                for _ in range(args.samples):
                    text, user = rng.choice(stored)
                    query = " ".join(rng.sample(text.rstrip(".").replace(",", "").split()[1:], 3))
                    started = time.perf_counter()
                    client.search(query, filters={"user_id": user}, top_k=10)
                    search_times.append(time.perf_counter() - started)
                held = sum(
                    client.get_all(filters={"user_id": f"dev{k}"}, page_size=1)["count"]
                    for k in range(DEVELOPERS)
                )
                rows.append({
                    "memories": size,
                    "held": held,
                    "add": percentiles(add_times[-args.samples:]),
                    "search": percentiles(search_times),
                })
                print(f"mem0_latency: {size} memories: {rows[-1]}", file=sys.stderr)
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    result = {"cairn": args.cairn, "mem0ai": MEM0AI, "samples": args.samples,
              "events": events, "rows": rows}
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print("| memories | add p50 / p95 | search p50 / p95 |", file=sys.stderr)
    print("|---:|---:|---:|", file=sys.stderr)
    for row in rows:
        add, search = row["add"], row["search"]
        print(f"| {row['memories']:,} | {add['p50_ms']} / {add['p95_ms']} ms "
              f"| {search['p50_ms']} / {search['p95_ms']} ms |", file=sys.stderr)


if __name__ == "__main__":
    main()
