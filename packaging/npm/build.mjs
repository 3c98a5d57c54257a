#!/usr/bin/env node
// npm packages around built cairn binaries, as esbuild and biome ship theirs: the launcher
// `cairn-mcp` (packaging/npm/cairn-mcp: bin/cairn.js, which runs the binary) with one optional
// dependency per platform, and a package per platform carrying its binary, chosen by npm
// through `os`, `cpu` and `libc`.
//
//   node packaging/npm/build.mjs --out DIR --binary linux-x64-gnu=target/release/cairn [...]
//
// writes DIR/cairn-mcp/ and DIR/<platform>/ (ready for `npm pack` or `npm publish`); the
// launcher lists every supported platform whether or not its binary is given here.

import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const scope = "@cairn-mcp";

// The platforms cairn is released for: the key the launcher computes, and npm's fields.
const PLATFORMS = {
  "linux-x64-gnu": { os: "linux", cpu: "x64", libc: "glibc" },
  "linux-arm64-gnu": { os: "linux", cpu: "arm64", libc: "glibc" },
  "linux-x64-musl": { os: "linux", cpu: "x64", libc: "musl" },
  "linux-arm64-musl": { os: "linux", cpu: "arm64", libc: "musl" },
  "darwin-x64": { os: "darwin", cpu: "x64" },
  "darwin-arm64": { os: "darwin", cpu: "arm64" },
};

function fail(message) {
  process.stderr.write(`build.mjs: ${message}\n`);
  process.exit(1);
}

function cargoVersion() {
  const match = readFileSync(join(root, "Cargo.toml"), "utf8").match(/^version\s*=\s*"([^"]+)"/m);
  if (!match) fail("no version in Cargo.toml");
  return match[1];
}

function args() {
  const out = { binaries: {} };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) fail(`${flag} needs a value`);
    if (flag === "--out") out.dir = resolve(value);
    else if (flag === "--version") out.version = value;
    else if (flag === "--binary") {
      const [key, file] = value.split(/=(.*)/s);
      if (!PLATFORMS[key]) {
        fail(`unknown platform ${key}; supported: ${Object.keys(PLATFORMS).join(", ")}`);
      }
      out.binaries[key] = resolve(file);
    } else fail(`unknown flag ${flag}`);
  }
  if (!out.dir) fail("--out DIR is required");
  return out;
}

function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

const common = {
  license: "MIT",
  homepage: "https://github.com/cairn-mcp/cairn",
  repository: { type: "git", url: "git+https://github.com/cairn-mcp/cairn.git" },
};

function launcher(dir, version) {
  const source = join(here, "cairn-mcp");
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(join(source, "bin", "cairn.js"), join(dir, "bin", "cairn.js"));
  chmodSync(join(dir, "bin", "cairn.js"), 0o755);
  copyFileSync(join(source, "README.md"), join(dir, "README.md"));
  copyFileSync(join(root, "LICENSE"), join(dir, "LICENSE"));
  const names = Object.fromEntries(Object.keys(PLATFORMS).map((key) => [key, `${scope}/${key}`]));
  writeJson(join(dir, "platforms.json"), { PLATFORMS: names });
  writeJson(join(dir, "package.json"), {
    name: "cairn-mcp",
    version,
    description: "Repository and code-review memory for coding assistants, served over MCP",
    ...common,
    keywords: ["mcp", "mcp-server", "code-review", "memory", "claude", "cursor"],
    // The MCP registry checks that this package belongs to the server named in server.json.
    mcpName: "io.github.cairn-mcp/cairn",
    bin: { "cairn-mcp": "bin/cairn.js", cairn: "bin/cairn.js" },
    files: ["bin/cairn.js", "platforms.json", "README.md", "LICENSE"],
    engines: { node: ">=16" },
    optionalDependencies: Object.fromEntries(Object.values(names).map((name) => [name, version])),
  });
}

function platformPackage(dir, key, binary, version) {
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(binary, join(dir, "bin", "cairn"));
  chmodSync(join(dir, "bin", "cairn"), 0o755);
  copyFileSync(join(root, "LICENSE"), join(dir, "LICENSE"));
  const { os, cpu, libc } = PLATFORMS[key];
  writeJson(join(dir, "package.json"), {
    name: `${scope}/${key}`,
    version,
    description: `The cairn binary for ${key} (installed by cairn-mcp)`,
    ...common,
    os: [os],
    cpu: [cpu],
    ...(libc ? { libc: [libc] } : {}),
    files: ["bin/cairn", "LICENSE"],
    preferUnplugged: true,
  });
}

const options = args();
const version = options.version ?? cargoVersion();
launcher(join(options.dir, "cairn-mcp"), version);
for (const [key, binary] of Object.entries(options.binaries)) {
  platformPackage(join(options.dir, key), key, binary, version);
}
process.stdout.write(`${options.dir}\n`);
