#!/usr/bin/env python3
"""Synthetic repositories for the growth curve: Python or TypeScript, any number of files.

Usage: bench/synth.py {python|typescript} FILES DEST [--seed N]

Writes a git repository of one commit at DEST with about FILES source files shaped like an
application's code, so that index and answer costs can be measured at sizes no public project
offers in both languages:

- packages of subpackages of modules (about 12 modules per subpackage, 4 subpackages per
  package), each module 1-3 classes and 2-5 functions, ~4 KB on average (Django 5.0.6: 6 KB);
- imports mostly within the subpackage, some across packages, and cycles between neighbours;
- calls to imported functions, constructors and methods of imported classes, `self`/`this`
  methods, module-qualified calls, and calls to the standard library;
- inheritance from classes of other modules, names repeated across modules (`load`, `save`,
  `Handler`...) so resolution has namesakes to tell apart;
- side effects (environment, file I/O, network, subprocess, time and randomness);
- a test file per 6 modules (tests/ with `test_*.py`, or `*.test.ts`) calling the module's
  functions.

The output depends only on the language, FILES and the seed (default 7).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

GENERATOR_VERSION = 1

VERBS = ["load", "save", "parse", "render", "resolve", "build", "apply", "check", "merge",
         "fetch", "update", "compute", "format", "split", "validate", "encode", "decode",
         "collect", "dispatch", "normalize", "register", "lookup", "flush", "prepare"]
NOUNS = ["config", "record", "token", "cache", "session", "query", "field", "route", "item",
         "node", "event", "message", "header", "payload", "schema", "index", "user", "order",
         "account", "report", "batch", "channel", "template", "filter"]
CLASS_NOUNS = ["Handler", "Manager", "Store", "Builder", "Parser", "Client", "Registry",
               "Resolver", "Adapter", "Service", "Backend", "Engine", "Loader", "Writer"]
MODULE_NAMES = ["base", "models", "utils", "views", "forms", "fields", "storage", "cache",
                "signals", "serializers", "handlers", "backends", "loaders", "query",
                "compiler", "options", "validators", "middleware", "routing", "helpers",
                "encoding", "events", "tasks", "registry"]
PACKAGE_NAMES = ["core", "db", "web", "auth", "admin", "api", "mail", "files", "cache",
                 "forms", "views", "template", "search", "billing", "jobs", "geo", "media",
                 "sessions", "messages", "reports"]


@dataclass
class Klass:
    name: str
    methods: list[str]
    base: tuple[int, str] | None = None  # (module index, class name)


@dataclass
class Module:
    index: int
    package: str
    sub: str
    name: str
    functions: list[str]
    classes: list[Klass]
    imports: list[int] = field(default_factory=list)  # module indexes, within the repo

    @property
    def dotted(self) -> str:
        return f"{self.package}.{self.sub}.{self.name}"


def plan(files: int, rng: random.Random) -> list[Module]:
    """The modules, their definitions and imports; tests are added on top (1 per 6)."""
    count = max(6, round(files * 6 / 7))
    modules: list[Module] = []
    per_sub, subs_per_package = 12, 4
    for i in range(count):
        sub_index, position = divmod(i, per_sub)
        package_index, sub_in_package = divmod(sub_index, subs_per_package)
        package = PACKAGE_NAMES[package_index % len(PACKAGE_NAMES)]
        if package_index >= len(PACKAGE_NAMES):
            package += str(package_index // len(PACKAGE_NAMES))
        sub = f"{MODULE_NAMES[sub_in_package * 5 % len(MODULE_NAMES)]}_{sub_in_package}"
        name = MODULE_NAMES[position % len(MODULE_NAMES)]
        functions = sorted({f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
                            for _ in range(rng.randint(2, 4))} | {rng.choice(VERBS)})
        classes = []
        used = set()
        for _ in range(rng.randint(1, 3)):
            cname = f"{rng.choice(NOUNS).title()}{rng.choice(CLASS_NOUNS)}"
            if cname in used:
                continue
            used.add(cname)
            methods = sorted({rng.choice(VERBS) for _ in range(rng.randint(2, 5))})
            classes.append(Klass(cname, methods))
        modules.append(Module(i, package, sub, name, functions, classes))
    for m in modules:
        first = m.index - m.index % per_sub
        local = [j for j in range(first, min(first + per_sub, count)) if j != m.index]
        # Mostly earlier neighbours; one later neighbour makes a cycle now and then.
        picks = rng.sample(local, min(len(local), rng.randint(2, 4)))
        # Across packages: shared code near the start is imported most (a core package).
        for _ in range(rng.randint(1, 2)):
            j = min((int(rng.paretovariate(1.2)) - 1) * per_sub + rng.randrange(per_sub), count - 1)
            if j != m.index:
                picks.append(j)
        if count > 1:
            picks.append(rng.randrange(count))
        m.imports = sorted(set(p for p in picks if p != m.index))
        for k in m.classes:
            if m.imports and rng.random() < 0.4:
                other = modules[rng.choice(m.imports)]
                if other.classes:
                    k.base = (other.index, rng.choice(other.classes).name)
    return modules


EFFECTS_PY = [
    ("os", "os.environ.get({q}CAIRN_{n}{q}, {q}{q})"),
    ("json", "json.loads(open(path).read())"),
    ("subprocess", "subprocess.run([{q}true{q}], check=False)"),
    ("time", "time.time()"),
    ("random", "random.random()"),
    ("urllib.request", "urllib.request.urlopen(url).read()"),
]
EFFECTS_TS = [
    ("", "process.env.CAIRN_{n} ?? {q}{q}"),
    ("fs", "fs.readFileSync(path, {q}utf8{q})"),
    ("child_process", "child_process.execSync({q}true{q})"),
    ("", "Date.now()"),
    ("", "Math.random()"),
    ("", "await fetch(url)"),
]


def python_module(m: Module, modules: list[Module], rng: random.Random) -> str:
    out = [f'"""{m.dotted}: {m.name} of the {m.package} {m.sub} package."""', ""]
    effects = rng.sample(EFFECTS_PY, rng.randint(0, 2))
    stdlib = sorted({mod for mod, _ in effects} | {"logging"})
    out += [f"import {s}" for s in stdlib]
    out.append("")
    bound: list[tuple[str, str]] = []  # (how to call, what kind)
    for j in m.imports:
        other = modules[j]
        if rng.random() < 0.3:
            out.append(f"from {other.package}.{other.sub} import {other.name} as {other.name}_{j}")
            bound += [(f"{other.name}_{j}.{f}", "function") for f in other.functions[:2]]
        else:
            names = other.functions[:2] + [k.name for k in other.classes[:1]]
            # A namesake of a local or imported name is imported under an alias, as people do.
            taken = {b for b, _ in bound} | set(m.functions) | {k.name for k in m.classes}
            parts = []
            for n in names:
                alias = n if n not in taken else f"{n}_{j}"
                parts.append(n if alias == n else f"{n} as {alias}")
                kind = "class" if n[0].isupper() else "function"
                bound.append((alias, kind))
                taken.add(alias)
            out.append(f"from {other.dotted} import {', '.join(parts)}")
    for k in m.classes:
        if k.base and not any(b == k.base[1] for b, _ in bound):
            other = modules[k.base[0]]
            out.append(f"from {other.dotted} import {k.base[1]}")
            bound.append((k.base[1], "class"))
    out += ["", "log = logging.getLogger(__name__)", f"LIMIT = {rng.randint(8, 512)}", ""]

    def call_line(indent: str) -> str:
        if not bound:
            return f"{indent}log.debug('nothing bound')"
        target, kind = rng.choice(bound)
        if kind == "class":
            return f"{indent}helper = {target}(value)\n{indent}helper_result = repr(helper)"
        return f"{indent}value = {target}(value) or value"

    for k in m.classes:
        base = f"({k.base[1]})" if k.base else ""
        out.append(f"class {k.name}{base}:")
        out.append(f'    """{k.name} keeps the {m.name} state of one request."""')
        out.append("")
        out.append("    def __init__(self, value=None):")
        if k.base:
            out.append("        super().__init__(value)")
        out.append("        self.value = value")
        out.append("        self.items = []")
        out.append("")
        for idx, method in enumerate(k.methods):
            out.append(f"    def {method}(self, value=None):")
            out.append("        if value is None:")
            out.append("            value = self.value")
            if idx + 1 < len(k.methods):
                out.append(f"        value = self.{k.methods[idx + 1]}(value)")
            out.append(call_line("        "))
            if rng.random() < 0.5:
                fn = rng.choice(m.functions)
                out.append(f"        self.items.append({fn}(value))")
            out.append("        for item in list(self.items)[:LIMIT]:")
            out.append("            log.debug('%s %s', item, value)")
            out.append("        return value")
            out.append("")
        out.append("")
    for idx, fn in enumerate(m.functions):
        out.append(f"def {fn}(value=None, path='data.json', url='http://localhost'):")
        out.append(f'    """{fn.replace("_", " ").capitalize()} for {m.name}."""')
        if idx + 1 < len(m.functions) and rng.random() < 0.6:
            out.append(f"    value = {m.functions[idx + 1]}(value)")
        out.append(call_line("    "))
        if m.classes and rng.random() < 0.7:
            k = rng.choice(m.classes)
            out.append(f"    obj = {k.name}(value)")
            out.append(f"    value = obj.{rng.choice(k.methods)}(value)")
        if effects and rng.random() < 0.5:
            _, expr = rng.choice(effects)
            out.append(f"    side = {expr.format(q=chr(39), n=idx)}")
            out.append("    log.info('%s', side)")
        out.append("    if isinstance(value, dict):")
        out.append("        value = {key: item for key, item in value.items() if item}")
        out.append("    return value")
        out.append("")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def python_test(m: Module, rng: random.Random) -> str:
    names = m.functions[:3]
    out = [f"from {m.dotted} import {', '.join(names)}"]
    if m.classes:
        out[0] += f", {m.classes[0].name}"
    out += ["", ""]
    for fn in names:
        out += [f"def test_{fn}():", f"    assert {fn}({{'a': 1}}) is not None", "", ""]
    if m.classes:
        k = m.classes[0]
        out += [f"def test_{k.name.lower()}_{k.methods[0]}():",
                f"    obj = {k.name}({{'b': 2}})",
                f"    assert obj.{k.methods[0]}() is not None", ""]
    return "\n".join(out).rstrip() + "\n"


def ts_path(m: Module) -> str:
    return f"src/{m.package}/{m.sub}/{m.name}.ts"


def ts_import(frm: Module, to: Module) -> str:
    if frm.package == to.package and frm.sub == to.sub:
        return f"./{to.name}"
    if frm.package == to.package:
        return f"../{to.sub}/{to.name}"
    return f"../../{to.package}/{to.sub}/{to.name}"


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(r.title() for r in rest)


def ts_module(m: Module, modules: list[Module], rng: random.Random) -> str:
    out = [f"// {m.dotted}: {m.name} of the {m.package} {m.sub} package.", ""]
    effects = rng.sample(EFFECTS_TS, rng.randint(0, 2))
    for mod in sorted({mod for mod, _ in effects if mod}):
        out.append(f'import * as {mod} from "node:{mod}";')
    bound: list[tuple[str, str]] = []
    for j in m.imports:
        other = modules[j]
        if rng.random() < 0.3:
            alias = f"{other.name}{j}"
            out.append(f'import * as {alias} from "{ts_import(m, other)}";')
            bound += [(f"{alias}.{camel(f)}", "function") for f in other.functions[:2]]
        else:
            taken = ({b for b, _ in bound} | {camel(f) for f in m.functions}
                     | {k.name for k in m.classes})
            parts = []
            for n in [camel(f) for f in other.functions[:2]] + [k.name for k in other.classes[:1]]:
                alias = n if n not in taken else f"{n}{j}"
                parts.append(n if alias == n else f"{n} as {alias}")
                bound.append((alias, "class" if n[0].isupper() else "function"))
                taken.add(alias)
            out.append(f'import {{ {", ".join(parts)} }} from "{ts_import(m, other)}";')
    for k in m.classes:
        if k.base and not any(b == k.base[1] for b, _ in bound):
            other = modules[k.base[0]]
            out.append(f'import {{ {k.base[1]} }} from "{ts_import(m, other)}";')
            bound.append((k.base[1], "class"))
    out += ["", f"export const LIMIT = {rng.randint(8, 512)};", ""]

    def call_line(indent: str) -> str:
        if not bound:
            return f"{indent}console.debug(\"nothing bound\");"
        target, kind = rng.choice(bound)
        if kind == "class":
            return f"{indent}const helper = new {target}(value);\n{indent}void helper;"
        return f"{indent}value = {target}(value) ?? value;"

    for k in m.classes:
        ext = f" extends {k.base[1]}" if k.base else ""
        out.append(f"/** {k.name} keeps the {m.name} state of one request. */")
        out.append(f"export class {k.name}{ext} {{")
        if not k.base:
            out.append("  items: unknown[] = [];")
        out.append("")
        out.append("  constructor(public value: any = null) {")
        if k.base:
            out.append("    super(value);")
        out.append("  }")
        out.append("")
        for idx, method in enumerate(k.methods):
            out.append(f"  {method}(value: any = this.value): any {{")
            if idx + 1 < len(k.methods):
                out.append(f"    value = this.{k.methods[idx + 1]}(value);")
            out.append(call_line("    "))
            if rng.random() < 0.5:
                out.append(f"    this.items.push({camel(rng.choice(m.functions))}(value));")
            out.append("    for (const item of this.items.slice(0, LIMIT)) {")
            out.append("      console.debug(item, value);")
            out.append("    }")
            out.append("    return value;")
            out.append("  }")
            out.append("")
        out.append("}")
        out.append("")
    for idx, fn in enumerate(m.functions):
        name = camel(fn)
        asynchronous = any("await" in e for _, e in effects)
        out.append(f"/** {fn.replace('_', ' ').capitalize()} for {m.name}. */")
        out.append(f"export {'async ' if asynchronous else ''}function {name}(value: any = null, "
                   "path = \"data.json\", url = \"http://localhost\"): any {")
        if idx + 1 < len(m.functions) and rng.random() < 0.6:
            out.append(f"  value = {'await ' if asynchronous else ''}{camel(m.functions[idx + 1])}(value);")
        out.append(call_line("  "))
        if m.classes and rng.random() < 0.7:
            k = rng.choice(m.classes)
            out.append(f"  const obj = new {k.name}(value);")
            out.append(f"  value = obj.{rng.choice(k.methods)}(value);")
        if effects and rng.random() < 0.5:
            _, expr = rng.choice(effects)
            out.append(f"  const side = {expr.format(q=chr(34), n=idx)};")
            out.append("  console.info(side, path, url);")
        out.append("  if (value && typeof value === \"object\") {")
        out.append("    value = Object.fromEntries(Object.entries(value).filter(([, v]) => v));")
        out.append("  }")
        out.append("  return value;")
        out.append("}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def ts_test(m: Module) -> str:
    names = [camel(f) for f in m.functions[:3]]
    rel = f"../../../src/{m.package}/{m.sub}/{m.name}"
    imported = names + ([m.classes[0].name] if m.classes else [])
    out = [f'import {{ {", ".join(imported)} }} from "{rel}";', "",
           f'describe("{m.dotted}", () => {{']
    for fn in names:
        out += [f'  it("{fn}", async () => {{', f"    expect(await {fn}({{ a: 1 }})).toBeDefined();",
                "  });"]
    if m.classes:
        k = m.classes[0]
        out += [f'  it("{k.name}.{k.methods[0]}", () => {{',
                f"    expect(new {k.name}({{ b: 2 }}).{k.methods[0]}()).toBeDefined();", "  });"]
    out.append("});")
    return "\n".join(out) + "\n"


def hub_path(language: str) -> str:
    """The first module of the core package, which imports from every package reach."""
    m = Module(0, PACKAGE_NAMES[0], f"{MODULE_NAMES[0]}_0", MODULE_NAMES[0], [], [])
    return f"{m.package}/{m.sub}/{m.name}.py" if language == "python" else ts_path(m)


def write(language: str, files: int, dest: Path, seed: int) -> int:
    rng = random.Random(f"{seed}:{language}:{files}")
    modules = plan(files, rng)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    written = 0
    if language == "python":
        packages = {(m.package, m.sub) for m in modules}
        for package, sub in packages:
            for d in (dest / package, dest / package / sub):
                d.mkdir(parents=True, exist_ok=True)
                init = d / "__init__.py"
                if not init.exists():
                    init.write_text("")
                    written += 1
        for m in modules:
            path = dest / m.package / m.sub / f"{m.name}.py"
            path.write_text(python_module(m, modules, rng))
            written += 1
        for m in modules[::6]:
            path = dest / "tests" / m.package / m.sub / f"test_{m.name}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(python_test(m, rng))
            written += 1
        (dest / "pyproject.toml").write_text('[project]\nname = "synthetic"\nversion = "1.0"\n')
    else:
        for m in modules:
            path = dest / ts_path(m)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(ts_module(m, modules, rng))
            written += 1
        for m in modules[::6]:
            path = dest / "tests" / m.package / m.sub / f"{m.name}.test.ts"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(ts_test(m))
            written += 1
        (dest / "package.json").write_text('{"name": "synthetic", "version": "1.0.0"}\n')
        (dest / "tsconfig.json").write_text('{"compilerOptions": {"strict": false}}\n')
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "-C", str(dest), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(dest), *ident, "commit", "-q", "-m",
                    f"synthetic {language} repository, {files} files"], check=True)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("language", choices=("python", "typescript"))
    parser.add_argument("files", type=int)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    count = write(args.language, args.files, args.dest, args.seed)
    print(f"{count} files written to {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
