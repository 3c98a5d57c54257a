"""Runs the `cairn` binary with this process's arguments (`cairn-mcp serve` is `cairn serve`)."""

import os
import subprocess
import sys

from cairn_mcp import find_cairn_bin


def main() -> None:
    cairn = find_cairn_bin()
    if sys.platform == "win32":
        sys.exit(subprocess.call([cairn, *sys.argv[1:]]))
    os.execv(cairn, [cairn, *sys.argv[1:]])


if __name__ == "__main__":
    main()
