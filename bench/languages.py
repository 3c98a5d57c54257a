#!/usr/bin/env python3
"""Language benchmark: cairn (and code-review-graph 2.3.9) on one public project per language.

Usage: bench/languages.py [LANG ...]          (default: every language below)

Each project is a public git history pinned to a commit. It is cloned into the cache from
`https://github.com/OWNER/NAME.git`, or from a local clone named by CAIRN_LANG_BENCH_MIRROR
(a directory holding `OWNER+NAME/repo` or `OWNER+NAME` git directories), and the tree at the
pinned commit is committed alone into a fresh repository (as the Flask sdist baseline is: the
index measures parsing and building, not mining history). To get the same tree by hand:

    git clone https://github.com/gin-gonic/gin && git -C gin checkout dcaa4296d111...

For every project it reports the files and MB of source cairn indexed, symbols, the share of
imports into the repository that resolved to a file, the share of calls into project code
bound to a definition, wall time, MB of source per second and peak RSS; code-review-graph's
build time, nodes and peak RSS on the same tree; and the ratio of the two times. Python (Flask
3.0.3 from its git history is held out, so the Flask sdist of bench/run.sh is used) is the
baseline for the speed per MB.

Environment:
  CAIRN_BENCH_CACHE        cache dir (default $HOME/.cache/cairn/bench): lang/ (clones),
                           crg-venv/, languages.json
  CAIRN_BIN                cairn binary (default $CARGO_TARGET_DIR/release/cairn)
  CAIRN_LANG_BENCH_MIRROR  directory of local git clones to clone from instead of GitHub
  CAIRN_BENCH_SKIP_CRG=1   do not install or run code-review-graph
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchtool  # noqa: E402

CRG_VERSION = "2.3.9"

# language, project (OWNER/NAME), pinned commit, the extensions counted as its source.
PROJECTS = [
    ("go", "gin-gonic/gin", "dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9", ["go"]),
    ("rust", "BurntSushi/ripgrep", "3fce3b5bb0236da2df6d99672afb8a719642eca7", ["rs"]),
    ("java", "google/gson", "9835b6f90192f79cdf5300c528fc6212455fb6c1", ["java"]),
    ("csharp", "App-vNext/Polly", "173d6d1d2e28a4697f1ac1d22da68f77ff19a0c9", ["cs"]),
    ("ruby", "rack/rack", "8bf4eb078498edc9105fb04add80d89c5340e60b", ["rb"]),
    ("php", "slimphp/Slim", "038fd5713d5a41636fdff0e8dcceedecdd17fc17", ["php"]),
    ("c", "libuv/libuv", "6179e7af87413396d5853a1c3722c8b5749336c8", ["c", "h"]),
    ("cpp", "google/leveldb", "78a352f47ed6c1e9d750545e9b242289185b87e1", ["cc", "cpp", "h"]),
]
PYTHON = ("python", "flask 3.0.3 (sdist)", None, ["py"])


def say(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def clone(cache: Path, project: str, commit: str) -> Path:
    """The project's tree at the pinned commit, cloned once into the cache."""
    dest = cache / "lang" / project.replace("/", "+")
    if not (dest / ".git").exists():
        source = f"https://github.com/{project}.git"
        mirror = os.environ.get("CAIRN_LANG_BENCH_MIRROR")
        if mirror:
            for candidate in (Path(mirror) / project.replace("/", "+") / "repo",
                              Path(mirror) / project.replace("/", "+")):
                if candidate.exists():
                    source = str(candidate)
                    break
        say(f"cloning {project} from {source}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        run(["git", "clone", "-q", "--no-checkout", source, str(dest)])
    return snapshot(cache, dest, commit)


def snapshot(cache: Path, clone_dir: Path, commit: str) -> Path:
    """The tree at a commit as a repository of one commit, as the Python baseline (an sdist)
    is: the index then measures parsing and building, not mining a long history."""
    tree = cache / "lang-tree" / clone_dir.name
    stamp = tree / ".git" / "cairn-bench-commit"
    if stamp.exists() and stamp.read_text() == commit:
        return tree
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    # A checkout, not `git archive`: that would leave out what `.gitattributes` marks
    # export-ignore (Slim's tests).
    index = tree.parent / f".{clone_dir.name}.index"
    subprocess.run(["git", "--git-dir", str(clone_dir / ".git"), "--work-tree", str(tree),
                    "checkout", "-q", "-f", commit, "--", "."], check=True, capture_output=True,
                   env={**os.environ, "GIT_INDEX_FILE": str(index)})
    index.unlink(missing_ok=True)
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    run(["git", "-C", str(tree), "init", "-q"])
    run(["git", "-C", str(tree), "add", "-A"])
    run(["git", "-C", str(tree), *ident, "commit", "-q", "-m", f"snapshot of {commit}"])
    stamp.write_text(commit)
    return tree


def source_bytes(tree: Path, extensions: list[str]) -> tuple[int, int]:
    """Files and bytes with the language's extensions, outside .git."""
    files = size = 0
    for root, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            if name.rsplit(".", 1)[-1] in extensions:
                files += 1
                size += os.path.getsize(os.path.join(root, name))
    return files, size


def measure(log: Path, tags: list[str], cmd: list[str], parse: str, cwd_env=None) -> dict | None:
    """One command run through benchtool's measure (wall time, peak RSS of the child)."""
    with tempfile.NamedTemporaryFile("w+", suffix=".out") as out:
        args = [sys.executable, benchtool.__file__, "measure", "--log", str(log), "--parse",
                parse, "--stdout", out.name, "--stderr", os.devnull]
        for tag in tags:
            args += ["--tag", tag]
        subprocess.run(args + ["--"] + cmd, env=cwd_env)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    record = records[-1] if records else None
    return record if record and record.get("rc") == 0 else None


def crg_binary(cache: Path) -> str | None:
    venv = cache / "crg-venv"
    binary = venv / "bin" / "code-review-graph"
    if not binary.exists():
        say(f"installing code-review-graph {CRG_VERSION} into {venv}")
        try:
            run([sys.executable, "-m", "venv", str(venv)])
            run([str(venv / "bin" / "pip"), "install", "-q", f"code-review-graph=={CRG_VERSION}"])
        except subprocess.CalledProcessError as err:
            say(f"code-review-graph unavailable: {err.stderr.strip()[:200]}")
            return None
    return str(binary)


def bench_one(cache: Path, cairn: str, crg: str | None, lang: str, project: str, tree: Path,
              extensions: list[str]) -> dict:
    log = cache / "languages.log"
    files, size = source_bytes(tree, extensions)
    row = {"language": lang, "project": project, "source_files": files, "source_mb": size / 1e6}
    with tempfile.TemporaryDirectory() as data:
        say(f"cairn index {project}")
        record = measure(log, [f"language={lang}", "tool=cairn"],
                         [cairn, "--repo", str(tree), "--data-dir", data, "index", "--json"], "json")
    if record and record.get("output"):
        out, stats = record["output"], record["output"].get("stats", {})
        internal, missed = stats.get("imports_internal", 0), stats.get("imports_unresolved", 0)
        calls, unresolved = stats.get("calls_resolved", 0), stats.get("calls_unresolved", 0)
        row.update({
            "files": out.get("files"),
            "symbols": out.get("symbols"),
            "imports_in_repo": internal + missed,
            "import_share": internal / (internal + missed) if internal + missed else None,
            "project_calls": calls + unresolved,
            "call_share": calls / (calls + unresolved) if calls + unresolved else None,
            "seconds": record["wall_s"],
            "mb_per_s": size / 1e6 / record["wall_s"] if record["wall_s"] else None,
            "rss_mb": record["peak_rss_kb"] / 1000,
        })
    if crg:
        work = cache / "lang-crg" / lang
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(tree, work, symlinks=True)
        env = {k: v for k, v in os.environ.items() if k not in ("CRG_DATA_DIR", "CRG_REPO_ROOT")}
        say(f"code-review-graph build {project}")
        record = measure(log, [f"language={lang}", "tool=crg"],
                         [crg, "build", "--repo", str(work)], "crg", env)
        if record:
            out = record.get("output") or {}
            row.update({"crg_files": out.get("files"), "crg_nodes": out.get("nodes"),
                        "crg_seconds": record["wall_s"], "crg_rss_mb": record["peak_rss_kb"] / 1000})
        shutil.rmtree(work, ignore_errors=True)
    return row


def pct(value) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def num(value, digits=1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def table(rows: list[dict]) -> str:
    base = next((r.get("mb_per_s") for r in rows if r["language"] == "python"), None)
    lines = [
        "| language | project | files | source MB | symbols | imports into repo resolved | "
        "calls into project resolved | cairn s | MB/s (vs Python) | cairn RSS MB | "
        "crg s | crg RSS MB | crg / cairn time |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        speed = r.get("mb_per_s")
        relative = f" ({speed / base:.2f}×)" if speed and base else ""
        ratio = (r["crg_seconds"] / r["seconds"]) if r.get("crg_seconds") and r.get("seconds") else None
        lines.append(
            f"| {r['language']} | {r['project']} | {r.get('files', '–')} | {num(r['source_mb'], 2)} | "
            f"{r.get('symbols', '–')} | {pct(r.get('import_share'))} of {r.get('imports_in_repo', '–')} | "
            f"{pct(r.get('call_share'))} of {r.get('project_calls', '–')} | {num(r.get('seconds'), 2)} | "
            f"{num(speed, 2)}{relative} | {num(r.get('rss_mb'), 0)} | {num(r.get('crg_seconds'), 2)} | "
            f"{num(r.get('crg_rss_mb'), 0)} | {num(ratio, 1)}{'×' if ratio else ''} |"
        )
    return "\n".join(lines)


def main() -> int:
    cache = Path(os.environ.get("CAIRN_BENCH_CACHE", Path.home() / ".cache/cairn/bench"))
    target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache/cairn/target"))
    cairn = os.environ.get("CAIRN_BIN", f"{target}/release/cairn")
    if not os.access(cairn, os.X_OK):
        sys.exit(f"no cairn binary at {cairn}: set CAIRN_BIN")
    wanted = set(sys.argv[1:])
    cache.mkdir(parents=True, exist_ok=True)
    crg = None if os.environ.get("CAIRN_BENCH_SKIP_CRG") == "1" else crg_binary(cache)
    rows = []
    if not wanted or "python" in wanted:
        tree = benchtool.sdist_tree(cache, "flask", "3.0.3")
        if tree:
            rows.append(bench_one(cache, cairn, crg, PYTHON[0], PYTHON[1], tree, PYTHON[3]))
    for lang, project, commit, extensions in PROJECTS:
        if wanted and lang not in wanted:
            continue
        try:
            tree = clone(cache, project, commit)
        except subprocess.CalledProcessError as err:
            say(f"skipped {lang}: cannot get {project} at {commit[:8]}: {err.stderr.strip()[:200]}")
            continue
        rows.append(bench_one(cache, cairn, crg, lang, f"{project}@{commit[:8]}", tree, extensions))
    machine = benchtool.machine_info()
    (cache / "languages.json").write_text(json.dumps({"machine": machine, "cairn": cairn,
                                                      "rows": rows}, indent=2))
    print(table(rows))
    print(f"\n{machine.get('nproc')} cores, {cairn}; figures in {cache / 'languages.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
