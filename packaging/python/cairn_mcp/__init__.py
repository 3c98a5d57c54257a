"""cairn-mcp: the `cairn` binary on PATH. This module only finds it, for `cairn-mcp` and
`python -m cairn_mcp` (the name `uvx cairn-mcp` and MCP registries run)."""

import os
import sys
import sysconfig


def find_cairn_bin() -> str:
    """The path of the `cairn` binary this package installed."""
    exe = "cairn" + (sysconfig.get_config_var("EXE") or "")
    candidates = [
        sysconfig.get_path("scripts"),
        sysconfig.get_path("scripts", f"{os.name}_user"),
        os.path.dirname(sys.executable),
    ]
    for directory in candidates:
        path = os.path.join(directory, exe)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        f"the cairn binary is not installed beside this Python (looked in: {', '.join(candidates)}); "
        "reinstall with `pip install --force-reinstall cairn-mcp`"
    )
