#!/usr/bin/env python3
"""What each part of a cairn binary costs: the sizes of its symbols (`nm --size-sort`, on a
binary that still has its symbol table, such as `cargo build --release`'s), summed by the crate
that emitted them, with the tree-sitter grammars' C tables as one part.

    bloat.py BINARY [--top N] [--json]

Generic code is counted where it was instantiated: `core::…` and `alloc::…` symbols are mostly
SurrealDB's futures and collections, monomorphised in its crates. The sections' sizes (`size
-A`) are printed too, since unwinding tables (.eh_frame, .gcc_except_table) carry no symbol.
Like `cargo bloat --crates`, without rebuilding anything.
"""

import argparse
import collections
import json
import re
import subprocess
import sys

CRATE = re.compile(r"[<_&\s*]*(?:impl\s+|dyn\s+)?([A-Za-z_][A-Za-z0-9_]*)::")


def part(name: str) -> str:
    if name.startswith(("ts_", "tree_sitter_")):
        return "tree-sitter grammars (C)"
    match = CRATE.match(name)
    return match.group(1) if match else "(other symbols)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    symbols = subprocess.run(
        ["nm", "-C", "--size-sort", "-S", args.binary], capture_output=True, text=True
    ).stdout
    if not symbols.strip():
        sys.exit(f"bloat.py: {args.binary} has no symbol table (measure before stripping)")
    parts = collections.Counter()
    for line in symbols.splitlines():
        fields = line.split(" ", 3)
        if len(fields) == 4:
            parts[part(fields[3])] += int(fields[1], 16)
    sections = {}
    for line in subprocess.run(["size", "-A", args.binary], capture_output=True, text=True).stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].startswith(".") and fields[1].isdigit():
            sections[fields[0]] = int(fields[1])
    top = [(name, size) for name, size in parts.most_common(args.top)]
    if args.json:
        print(json.dumps({"crates": [{"name": n, "size": s} for n, s in top], "sections": sections}))
        return 0
    for name, size in top:
        print(f"{size / 1e6:8.1f} MB  {name}")
    print("sections: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(sections.items(), key=lambda kv: -kv[1])[:6]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
