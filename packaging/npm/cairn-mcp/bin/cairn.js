#!/usr/bin/env node
// cairn-mcp's launcher: finds the package of this platform's cairn binary (installed by npm as
// one of the optional dependencies, the one whose os/cpu/libc match) and runs it with the same
// arguments, standard streams and exit status.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const { PLATFORMS } = require("../platforms.json");

/** This machine as the platform packages are named: os-cpu, and the C library on Linux. */
function platformKey() {
  let key = `${process.platform}-${process.arch}`;
  if (process.platform === "linux") {
    const report = process.report && process.report.getReport();
    const glibc = report && report.header && report.header.glibcVersionRuntime;
    key += glibc ? "-gnu" : "-musl";
  }
  return key;
}

function fail(message) {
  process.stderr.write(`cairn-mcp: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const key = platformKey();
  const name = PLATFORMS[key];
  if (!name) {
    fail(
      `no cairn binary is built for this platform (${key}); supported: ` +
        `${Object.keys(PLATFORMS).join(", ")}. ` +
        "Other ways to get cairn: cargo install cairn-mcp, or build it from source.",
    );
  }
  try {
    const manifest = require.resolve(`${name}/package.json`);
    return path.join(path.dirname(manifest), "bin", "cairn");
  } catch {
    fail(
      `the package with this platform's binary (${name}, for ${key}) is not installed: ` +
        "reinstall cairn-mcp without --omit=optional or --no-optional.",
    );
  }
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => fail(`cannot run cairn: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
