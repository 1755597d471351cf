// @ts-check
// node scripts/build-relay.mjs: compiles fixtures/relay/lab-relay.c into fixtures/relay/build/lab-relay
// (see fixtures/relay/README.md). $CC overrides `cc`. Rebuilds only when the binary is missing or
// older than the source, and writes it atomically (a temp name in the build folder, then rename).
// Never fails the caller: off Linux, without a compiler, or when compilation fails it says why on
// stderr and exits 0; the tests then start real Node servers instead.
import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "fixtures", "relay", "lab-relay.c");
const buildDir = join(root, "fixtures", "relay", "build");
const binary = join(buildDir, "lab-relay");
const flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-D_GNU_SOURCE"];
const fallback = "the tests will start Node servers instead";

/** @param {string} why */
function skip(why) {
  rmSync(binary, { force: true }); // a stale relay must not stand in for the source that failed
  process.stderr.write(`build-relay: ${why}; ${fallback}\n`);
  process.exit(0);
}

/** @param {string} file */
function mtimeMs(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

if (process.platform !== "linux") skip(`not on Linux (${process.platform})`);
const sourceTime = mtimeMs(source);
if (sourceTime === undefined) skip(`${source} is missing`);
const binaryTime = mtimeMs(binary);
if (binaryTime !== undefined && sourceTime !== undefined && binaryTime >= sourceTime) process.exit(0);

// $CC may carry words of its own ("ccache gcc", "gcc -m32"), as in make.
const [cc = "cc", ...ccArgs] = (process.env.CC?.trim() || "cc").split(/\s+/);
mkdirSync(buildDir, { recursive: true });
const temp = join(buildDir, `.lab-relay.${process.pid}.tmp`);
const result = spawnSync(cc, [...ccArgs, ...flags, "-o", temp, source], { encoding: "utf8" });
if (result.error) {
  rmSync(temp, { force: true });
  const code = /** @type {NodeJS.ErrnoException} */ (result.error).code;
  skip(code === "ENOENT" ? `no C compiler found (${cc})` : `cannot run ${cc}: ${result.error.message}`);
}
if (result.status !== 0) {
  rmSync(temp, { force: true });
  process.stderr.write(result.stderr);
  skip(`${cc} failed to compile ${source} (${result.signal ?? `exit ${result.status}`})`);
}
if (result.stderr) process.stderr.write(result.stderr); // warnings: shown, but the build stands
renameSync(temp, binary);
process.stderr.write(`build-relay: built ${binary} with ${cc}\n`);
