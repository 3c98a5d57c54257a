#!/usr/bin/env python3
"""Helpers for bench/run.sh (stdlib only).

  benchtool.py measure --log FILE --tag k=v ... [--parse json|crg|none]
                       [--du KEY=PATH] [--stdout FILE] [--stderr FILE] -- CMD ARGS...
      Runs CMD, appends one JSON record (tags, wall seconds, peak RSS of the
      child, exit code, parsed output, sizes of --du paths) to FILE, and exits with CMD's code.
      Peak RSS comes from getrusage(RUSAGE_CHILDREN): this process has no other
      children, so it is the child's (and its waited-for descendants') peak.

  benchtool.py record --log FILE --tag k=v ...
      Appends a record made of tags only (numbers are parsed as numbers).

  benchtool.py machine
      Prints machine facts as JSON (nproc, CPU model, memory, load average).

  benchtool.py report --out results.json --log FILE [--log FILE ...]
      Aggregates the records (medians over runs), writes results.json and
      prints the Markdown tables to stdout.

  benchtool.py results set --file bench/results.json --section build --commit C --log FILE
      Writes one section of the project's results file (the one docs/src/benchmarks.md is
      generated from) from the records in FILE; rows not measured this time keep their
      previous figures.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

MB = 1_000_000  # sizes are reported in decimal megabytes (du -sb / 1e6)


def _tag_value(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _parse_tags(tags: list[str]) -> dict:
    out = {}
    for tag in tags or []:
        if "=" not in tag:
            sys.exit(f"benchtool: bad --tag {tag!r} (want key=value)")
        key, value = tag.split("=", 1)
        out[key] = _tag_value(value)
    return out


def _append(log: str, record: dict) -> None:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")


def _summarize_json(obj):
    """Keeps scalars and small objects; replaces top-level lists by their length."""
    if not isinstance(obj, dict):
        return obj
    out = {}
    for key, value in obj.items():
        if isinstance(value, list):
            out[f"{key}_count"] = len(value)
        else:
            out[key] = value
    return out


def _parse_json_output(text: str):
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


CRG_SUMMARY = re.compile(r"Full build:\s*(\d+) files,\s*(\d+) nodes,\s*(\d+) edges")


def _parse_crg_output(text: str):
    match = CRG_SUMMARY.search(text)
    if not match:
        return None
    files, nodes, edges = (int(g) for g in match.groups())
    return {"files": files, "nodes": nodes, "edges": edges}


def du_bytes(path: str):
    """Apparent size like `du -sb PATH` (None when PATH does not exist)."""
    if not os.path.exists(path):
        return None
    try:
        out = subprocess.run(["du", "-sb", path], capture_output=True, text=True, check=True).stdout
        return int(out.split()[0])
    except (OSError, subprocess.CalledProcessError, ValueError, IndexError):
        total = os.lstat(path).st_size
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                total += os.lstat(os.path.join(root, name)).st_size
        return total


def cmd_measure(args) -> int:
    cmd = args.cmd
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        sys.exit("benchtool measure: no command given")
    stdout_path = args.stdout or os.devnull
    stderr_path = args.stderr or os.devnull
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        started = time.perf_counter()
        try:
            proc = subprocess.run(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
            rc = proc.returncode
        except OSError as exc:
            err.write(f"benchtool: cannot run {cmd[0]}: {exc}\n".encode())
            rc = 127
        wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = _parse_tags(args.tag)
    record.update(
        {
            "wall_s": round(wall, 4),
            "peak_rss_kb": usage.ru_maxrss,  # kilobytes on Linux
            "user_s": round(usage.ru_utime, 3),
            "sys_s": round(usage.ru_stime, 3),
            "rc": rc,
            "loadavg": round(os.getloadavg()[0], 2),
        }
    )
    for spec in args.du or []:
        key, _, path = spec.partition("=")
        record[key] = du_bytes(path)
    if args.parse != "none" and args.stdout:
        with open(args.stdout, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        parsed = _parse_json_output(text) if args.parse == "json" else _parse_crg_output(text)
        record["output"] = _summarize_json(parsed) if parsed is not None else None
    _append(args.log, record)
    return rc


def cmd_record(args) -> int:
    _append(args.log, _parse_tags(args.tag))
    return 0


def sdist_tree(cache, project: str, version: str):
    """A PyPI sdist unpacked as bench/run.sh unpacks it, CACHE/corpus/NAME-VERSION (downloaded
    into CACHE/sdists when missing); None when pip cannot get it."""
    from pathlib import Path

    cache = Path(cache)
    sdists = cache / "sdists"

    def archive():
        # Django's sdist is Django-5.0.6.tar.gz: match the name without case.
        wanted = f"{project}-{version}.tar.gz".lower()
        found = [p for p in sdists.iterdir() if p.name.lower() == wanted] if sdists.exists() else []
        return found[0] if found else None

    if archive() is None:
        sdists.mkdir(parents=True, exist_ok=True)
        print(f"==> downloading the {project} {version} sdist", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                        ":all:", "-d", str(sdists), f"{project}=={version}"], check=True,
                       capture_output=True)
    found = archive()
    if found is None:
        return None
    tree = cache / "corpus" / found.name.removesuffix(".tar.gz")
    if not tree.exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-xzf", str(found), "-C", str(tree.parent)], check=True)
    return tree if tree.exists() else None


def machine_info() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_kb = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem_kb = int(line.split()[1])
                    break
    except OSError:
        pass
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count()
    return {
        "nproc": nproc,
        "cpu_model": model,
        "mem_total_gb": round(mem_kb / 1024 / 1024, 1) if mem_kb else None,
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "kernel": os.uname().release,
    }


def cmd_machine(_args) -> int:
    print(json.dumps(machine_info()))
    return 0


# ---------------------------------------------------------------- report


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _fmt(value, digits=2):
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def _load(paths):
    records = []
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line:
                    records.append(json.loads(line))
    return records


def _ok(records):
    return [r for r in records if r.get("rc", 0) == 0]


def aggregate(records: list[dict]) -> dict:
    corpora: dict[str, dict] = {}
    order: list[str] = []

    def corpus(name):
        if name not in corpora:
            corpora[name] = {"corpus": name, "warnings": []}
            order.append(name)
        return corpora[name]

    by_kind: dict[tuple, list] = {}
    for rec in records:
        name = rec.get("corpus")
        if name is None:
            continue
        c = corpus(name)
        kind = rec.get("kind")
        if kind == "corpus":
            c.update({k: v for k, v in rec.items() if k not in ("kind",)})
            continue
        if kind == "note":
            c["warnings"].append(rec.get("text"))
            continue
        by_kind.setdefault((name, kind), []).append(rec)

    for name in order:
        c = corpora[name]
        cold = by_kind.get((name, "cairn_cold"), [])
        reindex = by_kind.get((name, "cairn_reindex"), [])
        queries = by_kind.get((name, "query_bench"), [])
        crg = by_kind.get((name, "crg_build"), [])
        for label, recs in (("cairn cold index", cold), ("cairn re-index", reindex),
                            ("query_bench", queries), ("code-review-graph build", crg)):
            failed = [r for r in recs if r.get("rc", 0) != 0]
            if failed:
                c["warnings"].append(f"{label}: {len(failed)} run(s) failed (rc {failed[0].get('rc')})")

        if cold or reindex:
            cold_ok, re_ok = _ok(cold), _ok(reindex)
            cold_out = [r.get("output") or {} for r in cold_ok]
            re_out = [r.get("output") or {} for r in re_ok]
            last = cold_out[-1] if cold_out else {}
            cairn = {
                "runs": len(cold),
                "cold_wall_s": [r["wall_s"] for r in cold_ok],
                "cold_wall_s_median": _median([r["wall_s"] for r in cold_ok]),
                "cold_seconds_median": _median([o.get("seconds") for o in cold_out]),
                "cold_peak_rss_mb_max": (max(r["peak_rss_kb"] for r in cold_ok) / 1024) if cold_ok else None,
                "reindex_wall_s": [r["wall_s"] for r in re_ok],
                "reindex_wall_s_median": _median([r["wall_s"] for r in re_ok]),
                "reindex_seconds_median": _median([o.get("seconds") for o in re_out]),
                "reindex_parsed": [o.get("parsed") for o in re_out],
                "reindex_peak_rss_mb_max": (max(r["peak_rss_kb"] for r in re_ok) / 1024) if re_ok else None,
                "store_bytes_median": _median([r.get("store_bytes") for r in cold_ok]),
                "store_bytes_after_reindex_median": _median([r.get("store_bytes") for r in re_ok]),
                "files": last.get("files"),
                "symbols": last.get("symbols"),
                "parsed": last.get("parsed"),
                "edges": last.get("edges"),
                "unresolved_call_share": last.get("unresolved_call_share"),
                "edited_file": (re_ok[0].get("edited_file") if re_ok else None),
            }
            bad = [p for p in cairn["reindex_parsed"] if p != 1]
            if bad:
                c["warnings"].append(f"cairn re-index parsed {bad} files, expected 1")
            c["cairn"] = cairn
        if queries:
            q_ok = _ok(queries)
            c["query_bench"] = q_ok[-1].get("output") if q_ok else None
            if q_ok and c["query_bench"] is None:
                c["warnings"].append("query_bench printed no JSON line")
        if crg:
            crg_ok = _ok(crg)
            out = [r.get("output") or {} for r in crg_ok]
            c["crg"] = {
                "runs": len(crg),
                "build_wall_s": [r["wall_s"] for r in crg_ok],
                "build_wall_s_median": _median([r["wall_s"] for r in crg_ok]),
                "peak_rss_mb_max": (max(r["peak_rss_kb"] for r in crg_ok) / 1024) if crg_ok else None,
                "db_bytes_median": _median([r.get("db_bytes") for r in crg_ok]),
                "files": out[-1].get("files") if out else None,
                "nodes": out[-1].get("nodes") if out else None,
                "edges": out[-1].get("edges") if out else None,
                "measured_at": crg_ok[-1].get("measured_at") if crg_ok else None,
                "command": crg_ok[-1].get("command") if crg_ok else None,
            }
        cairn_paths = {r.get("repo_path") for r in cold if r.get("repo_path")}
        crg_paths = {r.get("repo_path") for r in crg if r.get("repo_path")}
        if cairn_paths and crg_paths and cairn_paths != crg_paths:
            c["warnings"].append(
                f"cairn indexed {sorted(cairn_paths)} but code-review-graph {sorted(crg_paths)}: "
                "crg's DB size depends on the path length"
            )
        cairn = c.get("cairn") or {}
        crg_r = c.get("crg") or {}
        c["ratios"] = {
            "speed_crg_over_cairn": _ratio(crg_r.get("build_wall_s_median"), cairn.get("cold_wall_s_median")),
            "size_crg_over_cairn": _ratio(crg_r.get("db_bytes_median"), cairn.get("store_bytes_median")),
        }
    return {"corpora": [corpora[n] for n in order]}


def markdown(results: dict) -> str:
    lines = []
    m = results.get("machine") or {}
    lines.append(
        f"Machine: {m.get('nproc')} CPUs, {m.get('cpu_model')}, {m.get('mem_total_gb')} GB RAM, "
        f"load average {m.get('loadavg_1m')} at start"
    )
    lines.append("")
    lines.append(
        "| corpus | .py files | cairn files | cairn cold index s | re-index s (wall / cairn) "
        "| peak RSS MB | store MB | crg build s | crg DB MB | speed ratio (crg/cairn) | size ratio (crg/cairn) |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in results["corpora"]:
        cairn = c.get("cairn") or {}
        crg = c.get("crg") or {}
        ratios = c.get("ratios") or {}
        store = cairn.get("store_bytes_median")
        db = crg.get("db_bytes_median")
        speed = ratios.get("speed_crg_over_cairn")
        size = ratios.get("size_crg_over_cairn")
        lines.append(
            "| {} | {} | {} | {} | {} / {} | {} | {} | {} | {} | {} | {} |".format(
                c["corpus"],
                _fmt(c.get("py_files")),
                _fmt(cairn.get("files")),
                _fmt(cairn.get("cold_wall_s_median")),
                _fmt(cairn.get("reindex_wall_s_median"), 3),
                _fmt(cairn.get("reindex_seconds_median"), 3),
                _fmt(cairn.get("cold_peak_rss_mb_max"), 1),
                _fmt(store / MB if store is not None else None, 1),
                _fmt(crg.get("build_wall_s_median"), 1),
                _fmt(db / MB if db is not None else None, 1),
                (_fmt(speed, 1) + "x") if speed is not None else "n/a",
                (_fmt(size, 1) + "x") if size is not None else "n/a",
            )
        )
    if any(c.get("query_bench") for c in results["corpora"]):
        lines.append("")
        lines.append("| corpus | context p50 ms | context p95 ms | expand p50 ms | expand p95 ms | context tokens | load ms |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|")
        for c in results["corpora"]:
            q = c.get("query_bench") or {}
            if not q:
                continue
            lines.append(
                "| {} | {} | {} | {} | {} | {} | {} |".format(
                    c["corpus"],
                    _fmt(q.get("context_p50_ms")),
                    _fmt(q.get("context_p95_ms")),
                    _fmt(q.get("expand_p50_ms")),
                    _fmt(q.get("expand_p95_ms")),
                    _fmt(q.get("context_tokens")),
                    _fmt(q.get("load_ms")),
                )
            )
    lines.append("")
    lines.append(
        "Wall times are medians over runs (cairn: cold index on an empty data dir; re-index after "
        "appending one comment line). Peak RSS is the maximum over cold runs. Sizes: `du -sb`, MB = 10^6 bytes."
    )
    for c in results["corpora"]:
        crg = c.get("crg") or {}
        if crg.get("measured_at"):
            lines.append(
                f"- {c['corpus']}: code-review-graph {crg.get('runs')} run(s) measured at {crg['measured_at']}; "
                f"it parsed {crg.get('files')} files ({crg.get('nodes')} nodes, {crg.get('edges')} edges)."
            )
        for w in c.get("warnings") or []:
            lines.append(f"- {c['corpus']}: WARNING: {w}")
    for note in results.get("notes") or []:
        lines.append(f"- {note}")
    return "\n".join(lines)


def cmd_report(args) -> int:
    records = _load(args.log)
    results = aggregate(records)
    results["machine"] = json.loads(args.machine) if args.machine else machine_info()
    results["generated_at"] = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    results["setup"] = _parse_tags(args.setup)
    results["notes"] = args.note or []
    results["raw"] = records
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2, sort_keys=False)
        fh.write("\n")
    os.replace(tmp, args.out)
    print(markdown(results))
    return 0


def _minutes(seconds) -> str:
    return f"{int(seconds) / 60:.1f} min"


# What each record of bench/build_times.sh becomes in the "build" section: (row label, figure).
BUILD_ROWS = {
    "release": ("release build, cold (`cargo build --release`)", lambda r: _minutes(r["seconds"])),
    "tests": (
        "the README's test command, cold (`.ci/deps && .ci/fetch-model && cargo test`)",
        lambda r: _minutes(r["seconds"]),
    ),
    "ci": ("`.ci/run`, cold (formatting, clippy, the tests)", lambda r: _minutes(r["seconds"])),
    "test_build": ("the tests' build alone, cold (`cargo test --no-run`)", lambda r: _minutes(r["seconds"])),
    "test_run": ("the test suite's run, built (`cargo test`)", lambda r: _minutes(r["seconds"])),
    "size": (
        "release binary: as built / stripped / tar.xz archive",
        lambda r: f"{r['binary_mb']} / {r['stripped_mb']} / {r['archive_mb']} MB",
    ),
    "version": ("`cairn --version` (median of 30)", lambda r: f"{r['version_ms']} ms"),
    "dist": (
        "shipped binary (`--profile dist`: fat LTO, SurrealDB optimised for size, stripped): binary / tar.xz archive; its cold build",
        lambda r: f"{r['binary_mb']} / {r['archive_mb']} MB; {_minutes(r['seconds'])}",
    ),
    "bloat": ("largest parts of the release binary, by crate (bench/bloat.py)", lambda r: r["crates"]),
}


def _dump(results) -> str:
    """The results file as it is kept: indented, with each list of plain values (a row, the
    columns) on one line, so a change of figures is a one-line diff."""
    text = json.dumps(results, indent=2, ensure_ascii=False)
    scalar = r'(?:"(?:[^"\\]|\\.)*"|-?[0-9.eE+-]+|true|false|null)'
    flat = re.compile(r"\[\n\s*(" + scalar + r"(?:,\n\s*" + scalar + r")*)\n\s*\]")
    return flat.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)


def cmd_results(args) -> int:
    path = Path(args.file)
    results = json.loads(path.read_text())
    records = []
    for line in Path(args.log).read_text().splitlines():
        if line.strip():
            records.append(json.loads(line))
    if args.section != "build":
        sys.exit(f"benchtool: results set knows the build section only, not {args.section!r}")
    previous = results["sections"].get(args.section, {})
    rows = {row[0]: row for row in previous.get("rows", [])}
    for record in records:
        step = record.get("step")
        if step == "size" and record.get("version_ms") not in (None, ""):
            label, figure = BUILD_ROWS["version"]
            rows[label] = [label, figure(record)]
        if step == "first_answer":
            label = (
                f"first answer through {record['way']}, from its package: install, "
                f"`cairn index` of {record['corpus']}, an MCP `get_context` (bench/first_answer.sh)"
            )
            figure = f"{record['total_s']} s ({record['install_s']} + {record['index_s']} + {record['answer_s']})"
            rows[label] = [label, figure]
        if step in BUILD_ROWS and (step != "bloat" or record.get("crates")):
            label, figure = BUILD_ROWS[step]
            rows[label] = [label, figure(record)]
    order = [label for label, _ in BUILD_ROWS.values()]
    order += sorted(label for label in rows if label.startswith("first answer"))
    machine = json.loads(subprocess.run([sys.executable, __file__, "machine"], capture_output=True, text=True).stdout or "{}")
    results["sections"][args.section] = {
        "title": "Building cairn",
        "date": _dt.date.today().isoformat(),
        "commit": args.commit,
        "machine": f"{machine.get('nproc', '?')} cores ({machine.get('cpu_model', 'unknown CPU')}), "
        f"{machine.get('mem_total_gb', '?')} GB; builds from an empty target directory and a fresh clone"
        + (f"; {args.note}" if args.note else ""),
        "corpus": "cairn itself",
        "command": "bench/build_times.sh",
        "columns": ["what", "figure"],
        "rows": sorted(rows.values(), key=lambda r: order.index(r[0]) if r[0] in order else len(order)),
    }
    path.write_text(_dump(results) + "\n")
    print(json.dumps(results["sections"][args.section], indent=2, ensure_ascii=False))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchtool.py")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("measure")
    p.add_argument("--log", required=True)
    p.add_argument("--tag", action="append", default=[])
    p.add_argument("--stdout")
    p.add_argument("--stderr")
    p.add_argument("--parse", choices=("json", "crg", "none"), default="none")
    p.add_argument("--du", action="append", default=[], help="KEY=PATH: record du -sb of PATH after the run")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_measure)

    p = sub.add_parser("record")
    p.add_argument("--log", required=True)
    p.add_argument("--tag", action="append", default=[])
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("machine")
    p.set_defaults(func=cmd_machine)

    p = sub.add_parser("report")
    p.add_argument("--out", required=True)
    p.add_argument("--log", action="append", default=[])
    p.add_argument("--machine")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--setup", action="append", default=[], help="KEY=VALUE describing the run")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("results")
    p.add_argument("action", choices=("set",))
    p.add_argument("--file", required=True)
    p.add_argument("--section", required=True)
    p.add_argument("--commit", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--note", help="how this run's machine differed (busy, another build, …)")
    p.set_defaults(func=cmd_results)

    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
