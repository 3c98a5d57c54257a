#!/usr/bin/env python3
"""Growth curve: how cairn's costs grow with the repository, from 1,000 to 50,000 files.

Usage: bench/growth.py [--sizes 1000,10000,50000] [--languages python,typescript]
                       [--corpora flask,django] [--runs 20] [--iterations 100]
                       [--png PATH] [--label BUILD] [--skip-daemon] [--crg-max-files 3000]
                       [--crg-timeout SECONDS]
                       [--tree PATH --tree-name NAME --tree-file FILE --tree-function REGEX]

For synthetic Python and TypeScript repositories of each size (bench/synth.py, generated
once into the cache) and for the Flask 3.0.3 and Django 5.0.6 sdists, it measures:

- cold `cairn index`: wall time, peak RSS, store size on disk;
- the daemon (examples/daemon_bench): ready time, save → answer p50/p95 over --runs saves of
  the most imported file, RSS after the saves;
- answers in process (examples/query_bench, examples/review_bench): get_context and expand
  p95, review_diff p95 on a one-line change to a function of that file (Django: QuerySet.count);
- code-review-graph 2.3.9's build on every tree up to --crg-max-files files, in the same run
  (stopped after --crg-timeout seconds, and reported as not finished in that time).

--tree measures a real repository besides (any directory; its files are committed alone into a
copy in the cache): --tree-file is the file saved and reviewed, --tree-function the pattern of
the line starting the function the review diff changes. The Linux kernel, as measured in the
README: `apt-get download linux-source-6.1` (Debian's kernel source, v6.1 with Debian's
patches) and unpack `usr/src/linux-source-6.1.tar.xz` from it (then delete the lines of its
`.gitignore` from `# Debian packaging` on: they ignore the whole tree for Debian's packaging), or
`git clone --depth 1 --branch v6.1 https://github.com/torvalds/linux`; then
`--tree linux-source-6.1 --tree-name "Linux 6.1" --tree-file kernel/sched/core.c
--tree-function '^void scheduler_tick\('`.

It prints a Markdown table, the cost per 1,000 files (to see where growth is not linear), and
writes CACHE/growth.json and a PNG plot (matplotlib, installed once into CACHE/plot-venv).

Environment:
  CAIRN_BENCH_CACHE     cache dir (default $HOME/.cache/cairn/bench)
  CAIRN_BIN             cairn binary (default $CARGO_TARGET_DIR/release/cairn)
  CAIRN_EXAMPLES        directory of the bench examples (default: beside CAIRN_BIN, examples/)
  CAIRN_BENCH_SKIP_CRG=1  do not run code-review-graph
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchtool  # noqa: E402
import languages  # noqa: E402
import synth  # noqa: E402

# Corpora: sdist, the file saved and reviewed, the function the review diff touches.
CORPORA = {
    "flask": ("flask", "3.0.3", "src/flask/app.py", r"    def dispatch_request\("),
    "django": ("django", "5.0.6", "django/db/models/query.py", r"    def count\("),
}


def say(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


def git_tree(source: Path, dest: Path, stamp: str) -> Path:
    """A copy of SOURCE committed alone at DEST (reused while STAMP matches)."""
    marker = dest / ".git" / "cairn-bench-stamp"
    if marker.exists() and marker.read_text() == stamp:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    # Without its history, if the source has one: the tree is committed alone.
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "-C", str(dest), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(dest), *ident, "commit", "-q", "-m", stamp], check=True)
    marker.write_text(stamp)
    return dest


def synthetic_tree(cache: Path, language: str, files: int, seed: int) -> tuple[Path, str, str]:
    """The synthetic repository, its most imported module and the pattern of its first function."""
    dest = cache / "growth" / f"{language}-{files}"
    stamp = f"synth v{synth.GENERATOR_VERSION} seed {seed}"
    marker = dest / ".git" / "cairn-bench-stamp"
    if not (marker.exists() and marker.read_text() == stamp):
        say(f"generating a {files}-file {language} repository")
        synth.write(language, files, dest, seed)
        marker.write_text(stamp)
    hub = synth.hub_path(language)
    pattern = r"^def \w+\(" if language == "python" else r"^export (async )?function \w+\("
    return dest, hub, pattern


def added_line(rel: str, indent: str) -> str:
    """A statement in the file's language, one level inside INDENT."""
    if rel.endswith(".py"):
        return f"{indent}    reviewed = True\n"
    if rel.endswith((".c", ".h")):
        return f"{indent}\tint reviewed = 1;\n"
    return f"{indent}  const reviewed = true;\n"


def review_diff(tree: Path, rel: str, pattern: str, out: Path) -> bool:
    """A one-line change at the start of the first function matching PATTERN, as a diff."""
    path = tree / rel
    # Restored with its time too: a file whose time changed is read again by the daemon
    # that starts next, and its recency with it, which would rebuild the graph at its start.
    times = path.stat()
    lines = path.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        if re.match(pattern, line):
            indent = line[: len(line) - len(line.lstrip())]
            # The body starts after the signature (which may span lines) ends.
            end = i
            while not lines[end].rstrip().endswith((":", "{")):
                end += 1
            added = added_line(rel, indent)
            path.write_text("".join(lines[: end + 1] + [added] + lines[end + 1:]))
            try:
                diff = subprocess.run(["git", "-C", str(tree), "diff"], check=True,
                                      capture_output=True, text=True).stdout
            finally:
                subprocess.run(["git", "-C", str(tree), "checkout", "-q", "--", rel], check=True)
                os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
            out.write_text(diff)
            return bool(diff)
    return False


def json_line(cmd: list[str], timeout: int) -> dict | None:
    """The last JSON line a bench example prints, or None (with its error shown)."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        say(f"{Path(cmd[0]).name} failed: {done.stderr.strip()[-300:]}")
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def source_extensions() -> tuple[str, ...]:
    """Every extension cairn reads, from its grammars' language.toml files."""
    import tomllib
    grammars = Path(__file__).resolve().parent.parent / "grammars"
    found = set()
    for toml in grammars.glob("*/language.toml"):
        found.update(tomllib.loads(toml.read_text()).get("extensions", []))
    return tuple(f".{ext}" for ext in sorted(found))


def source_size(tree: Path) -> tuple[int, int]:
    """Files and bytes of source in a language cairn reads, outside .git and node_modules."""
    extensions = source_extensions()
    files = size = 0
    for root, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in (".git", "node_modules")]
        for name in names:
            if name.endswith(extensions):
                files += 1
                size += os.path.getsize(os.path.join(root, name))
    return files, size


def measure_tree(args, cache: Path, name: str, tree: Path, hub: str, pattern: str,
                 crg: str | None) -> dict:
    cairn, examples = args.cairn, args.examples
    files, size = source_size(tree)
    row: dict = {"repo": name, "files": files, "source_mb": size / 1e6}
    log = cache / "growth.log"
    with tempfile.TemporaryDirectory(prefix="cairn-growth-") as scratch:
        data = Path(scratch) / "data"
        say(f"{name}: cold index ({files} files)")
        record = languages.measure(log, [f"repo={name}", "kind=index"],
                                   [cairn, "--repo", str(tree), "--data-dir", str(data), "index",
                                    "--json"], "json")
        if not record:
            return row
        row.update({"index_s": record["wall_s"], "index_rss_mb": record["peak_rss_kb"] / 1000,
                    "store_mb": benchtool.du_bytes(str(data)) / 1e6})
        query = json_line([str(examples / "query_bench"), "--repo", str(tree), "--data-dir",
                           str(data), "--iterations", str(args.iterations)], 3600)
        if query:
            row.update({"get_context_p95_ms": query.get("context_p95_ms"),
                        "expand_p95_ms": query.get("expand_p95_ms")})
        diff = Path(scratch) / "change.diff"
        if review_diff(tree, hub, pattern, diff):
            review = json_line([str(examples / "review_bench"), "--repo", str(tree), "--data-dir",
                                str(data), "--iterations", str(args.iterations), str(diff)], 3600)
            if review:
                row["review_diff_p95_ms"] = review.get("p95_ms")
        if not args.skip_daemon:
            say(f"{name}: daemon, {args.runs} saves of {hub}")
            original = (tree / hub).read_bytes()
            try:
                daemon = json_line([str(examples / "daemon_bench"), "--cairn", cairn, "--repo",
                                    str(tree), "--data-dir", str(data), "--file", hub, "--runs",
                                    str(args.runs), "--idle", "5"], 7200)
            finally:
                (tree / hub).write_bytes(original)
            if daemon:
                row.update({"daemon_ready_s": daemon["ready_s"],
                            "save_p50_ms": daemon["save_to_answer_ms"]["p50"],
                            "save_p95_ms": daemon["save_to_answer_ms"]["p95"],
                            "daemon_rss_mb": daemon["rss_mb"]["after_edits"],
                            "idle_cpu_percent": daemon["idle_cpu_percent"]})
    if crg and files <= args.crg_max_files:
        work = cache / "growth" / "crg-work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(tree, work, symlinks=True)
        env = {k: v for k, v in os.environ.items() if k not in ("CRG_DATA_DIR", "CRG_REPO_ROOT")}
        say(f"{name}: code-review-graph build")
        # `timeout` ends it with 124 when the time is up (no record is kept for a failed run).
        record = languages.measure(log, [f"repo={name}", "kind=crg"],
                                   ["timeout", str(args.crg_timeout), crg, "build", "--repo",
                                    str(work)], "crg", env)
        if record:
            row.update({"crg_s": record["wall_s"], "crg_rss_mb": record["peak_rss_kb"] / 1000})
        else:
            records = log.read_text().splitlines()
            if records and json.loads(records[-1]).get("rc") == 124:
                row["crg_unfinished_s"] = args.crg_timeout
        shutil.rmtree(work, ignore_errors=True)
    return row


def fmt(value, digits=1) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def table(rows: list[dict]) -> str:
    lines = [
        "| repository | files | source MB | cold index | index peak RSS | store | daemon ready | "
        "daemon RSS after saves | save → answer p50 / p95 | get_context p95 | expand p95 | "
        "review_diff p95 | crg build | crg / cairn |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ratio = r["crg_s"] / r["index_s"] if r.get("crg_s") and r.get("index_s") else None
        crg = (f"> {r['crg_unfinished_s'] / 60:,.0f} min (stopped)" if r.get("crg_unfinished_s")
               else f"{fmt(r.get('crg_s'))} s")
        if r.get("crg_unfinished_s") and r.get("index_s"):
            ratio_text = f"> {r['crg_unfinished_s'] / r['index_s']:,.1f}×"
        else:
            ratio_text = f"{fmt(ratio)}{'×' if ratio else ''}"
        lines.append(
            f"| {r['repo']} | {r['files']:,} | {fmt(r['source_mb'])} | {fmt(r.get('index_s'), 2)} s | "
            f"{fmt(r.get('index_rss_mb'), 0)} MB | {fmt(r.get('store_mb'))} MB | "
            f"{fmt(r.get('daemon_ready_s'))} s | {fmt(r.get('daemon_rss_mb'), 0)} MB | "
            f"{fmt(r.get('save_p50_ms'), 0)} / {fmt(r.get('save_p95_ms'), 0)} ms | "
            f"{fmt(r.get('get_context_p95_ms'))} ms | {fmt(r.get('expand_p95_ms'))} ms | "
            f"{fmt(r.get('review_diff_p95_ms'))} ms | {crg} | {ratio_text} |")
    return "\n".join(lines)


def per_thousand(rows: list[dict]) -> str:
    """Cost per 1,000 files: flat columns mean linear growth."""
    lines = ["| repository | index s / 1k files | index RSS MB / 1k files | store MB / 1k files |",
             "|---|---:|---:|---:|"]
    for r in rows:
        if not r.get("index_s"):
            continue
        k = r["files"] / 1000
        lines.append(f"| {r['repo']} | {fmt(r['index_s'] / k, 2)} | "
                     f"{fmt(r['index_rss_mb'] / k, 0)} | {fmt(r['store_mb'] / k, 1)} |")
    return "\n".join(lines)


PLOT = r"""
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = json.load(open(sys.argv[1]))["rows"]
panels = [
    ("cold index (s)", ["index_s"]),
    ("memory (MB)", ["index_rss_mb", "daemon_rss_mb", "store_mb"]),
    ("save → answer p95 (ms)", ["save_p95_ms"]),
    ("answer p95 (ms)", ["get_context_p95_ms", "expand_p95_ms", "review_diff_p95_ms"]),
]
fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
for ax, (title, keys) in zip(axes.flat, panels):
    for lang, marker in (("python", "o"), ("typescript", "s")):
        series = [r for r in rows if r.get("language") == lang]
        for key in keys:
            points = [(r["files"], r[key]) for r in series if r.get(key) is not None]
            if points:
                xs, ys = zip(*points)
                label = f"{lang} {key.replace('_', ' ')}" if len(keys) > 1 else lang
                ax.plot(xs, ys, marker=marker, label=label)
    for r in rows:
        if r.get("language") is None:
            for key in keys:
                if r.get(key) is not None:
                    ax.scatter([r["files"]], [r[key]], marker="*", s=90, zorder=3)
                    ax.annotate(r["repo"].split()[0], (r["files"], r[key]), fontsize=7,
                                xytext=(4, 4), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("files")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
fig.suptitle(sys.argv[3])
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
"""


def plot(cache: Path, results: Path, png: Path, title: str) -> bool:
    venv = cache / "plot-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        say(f"installing matplotlib into {venv}")
        try:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "matplotlib"], check=True)
        except subprocess.CalledProcessError:
            say("matplotlib unavailable: no plot")
            return False
    png.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([str(python), "-c", PLOT, str(results), str(png), title],
                          capture_output=True, text=True)
    if done.returncode != 0:
        say(f"plot failed: {done.stderr.strip()[-300:]}")
    return done.returncode == 0


def save(cache: Path, machine: dict | None, cairn: str, rows: list[dict]) -> Path:
    """CACHE/growth.json with the rows so far (written after every repository: a long run
    stopped half way keeps what it measured)."""
    results = cache / "growth.json"
    results.write_text(json.dumps({"machine": machine, "cairn": cairn, "rows": rows}, indent=2))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--languages", default="python,typescript")
    parser.add_argument("--corpora", default="flask,django")
    parser.add_argument("--runs", type=int, default=20, help="daemon saves per repository")
    parser.add_argument("--iterations", type=int, default=100, help="calls per answer measured")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--png", type=Path)
    parser.add_argument("--skip-daemon", action="store_true")
    parser.add_argument("--label", help="the build named in the plot's title "
                        "(default: release or debug, from CAIRN_BIN's directory)")
    parser.add_argument("--crg-max-files", type=int, default=3000,
                        help="run code-review-graph on trees up to this many files")
    parser.add_argument("--crg-timeout", type=int, default=3600,
                        help="stop code-review-graph's build after this many seconds")
    parser.add_argument("--tree", type=Path, help="a real repository to measure besides")
    parser.add_argument("--tree-name", help="its name in the table (default: the directory's)")
    parser.add_argument("--tree-file", help="the file of --tree saved and reviewed")
    parser.add_argument("--tree-function",
                        help="the pattern of the line starting the function the diff changes")
    args = parser.parse_args()
    cache = Path(os.environ.get("CAIRN_BENCH_CACHE", Path.home() / ".cache/cairn/bench"))
    target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache/cairn/target"))
    args.cairn = os.environ.get("CAIRN_BIN", f"{target}/release/cairn")
    args.examples = Path(os.environ.get("CAIRN_EXAMPLES", Path(args.cairn).parent / "examples"))
    needed = [Path(args.cairn)] + [args.examples / n for n in ("query_bench", "review_bench")]
    if not args.skip_daemon:
        needed.append(args.examples / "daemon_bench")
    for path in needed:
        if not os.access(path, os.X_OK):
            sys.exit(f"missing {path}: build cairn and its examples with the same profile "
                     "(cargo build --release --bins --examples), or set CAIRN_BIN/CAIRN_EXAMPLES")
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "growth.log").unlink(missing_ok=True)
    crg = None if os.environ.get("CAIRN_BENCH_SKIP_CRG") == "1" else languages.crg_binary(cache)
    if args.tree and not (args.tree_file and args.tree_function):
        sys.exit("--tree needs --tree-file and --tree-function")
    if args.tree and not (args.tree / args.tree_file).is_file():
        sys.exit(f"no file {args.tree_file} in {args.tree}")
    rows = []
    if args.tree:
        name = args.tree_name or args.tree.resolve().name
        slug = re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-").lower()
        tree = git_tree(args.tree, cache / "growth" / f"real-{slug}",
                        f"{name} {args.tree.resolve()}")
        rows.append(measure_tree(args, cache, name, tree, args.tree_file, args.tree_function,
                                 crg))
        save(cache, None, args.cairn, rows)
    for corpus in [c for c in args.corpora.split(",") if c]:
        project, version, hub, function = CORPORA[corpus]
        source = benchtool.sdist_tree(cache, project, version)
        if source is None:
            say(f"skipped {corpus}: its sdist is not available")
            continue
        tree = git_tree(source, cache / "growth" / f"{project}-{version}", f"{project} {version}")
        rows.append(measure_tree(args, cache, f"{project.title()} {version}", tree, hub, function,
                                 crg))
        save(cache, None, args.cairn, rows)
    for language in [lang for lang in args.languages.split(",") if lang]:
        for files in [int(n) for n in args.sizes.split(",") if n]:
            tree, hub, function = synthetic_tree(cache, language, files, args.seed)
            row = measure_tree(args, cache, f"synthetic {language} {files:,}", tree, hub,
                               function, crg)
            row["language"] = language
            rows.append(row)
            save(cache, None, args.cairn, rows)
    machine = benchtool.machine_info()
    results = save(cache, machine, args.cairn, rows)
    print(table(rows))
    print()
    print(per_thousand(rows))
    png = args.png or cache / "growth.png"
    build = args.label or Path(args.cairn).parent.name
    title = f"cairn growth, {machine.get('nproc')} cores, {build} build"
    if plot(cache, results, png, title):
        print(f"\nplot: {png}")
    print(f"figures: {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
