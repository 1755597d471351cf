// @ts-check
// node scripts/build-native.mjs (run by `npm ci`): compiles the project's two small C programs.
// - fixtures/relay/lab-relay.c into fixtures/relay/build/lab-relay, the relay that stands for a
//   fixture server (see fixtures/relay/README.md); without it the tests start real Node servers.
// - grader/sandbox/lab-nokeys.c into node_modules/.cache/lab-grader/lab-nokeys, which starts the
//   grading sandbox with the kernel's key system calls refused (see the file); without it a
//   sandboxed grade says once on stderr that grades there can reach one another's kernel keys.
// $CC overrides `cc`. Rebuilds a program only when its binary is missing or older than its
// source, and writes it atomically (a temp name in its build folder, then rename). Never fails
// the caller: off Linux, without a compiler, or when compilation fails it says why on stderr,
// removes any stale binary and exits 0.
import { spawnSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { NOKEYS_BINARY } from "../grader/cli-bundle.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-D_GNU_SOURCE"];
const programs = [
  { source: join(root, "fixtures", "relay", "lab-relay.c"), binary: join(root, "fixtures", "relay", "build", "lab-relay"), without: "the tests will start Node servers instead" },
  { source: join(root, "grader", "sandbox", "lab-nokeys.c"), binary: NOKEYS_BINARY, without: "sandboxed grades will not have kernel keys refused" },
];
// $CC may carry words of its own ("ccache gcc", "gcc -m32"), as in make.
const [cc = "cc", ...ccArgs] = (process.env.CC?.trim() || "cc").split(/\s+/);

/** @param {string} file */
function mtimeMs(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** @param {{ source: string, binary: string }} program @returns {string | undefined} why it was not built */
function build({ source, binary }) {
  if (process.platform !== "linux") return `not on Linux (${process.platform})`;
  const sourceTime = mtimeMs(source);
  if (sourceTime === undefined) return `${source} is missing`;
  const binaryTime = mtimeMs(binary);
  if (binaryTime !== undefined && binaryTime >= sourceTime) return undefined;
  mkdirSync(dirname(binary), { recursive: true });
  const temp = join(dirname(binary), `.${binary.split("/").pop()}.${process.pid}.tmp`);
  const result = spawnSync(cc, [...ccArgs, ...flags, "-o", temp, source], { encoding: "utf8" });
  if (result.error || result.status !== 0) {
    rmSync(temp, { force: true });
    if (result.error) {
      const code = /** @type {NodeJS.ErrnoException} */ (result.error).code;
      return code === "ENOENT" ? `no C compiler found (${cc})` : `cannot run ${cc}: ${result.error.message}`;
    }
    process.stderr.write(result.stderr);
    return `${cc} failed to compile ${source} (${result.signal ?? `exit ${result.status}`})`;
  }
  if (result.stderr) process.stderr.write(result.stderr); // warnings: shown, but the build stands
  renameSync(temp, binary);
  process.stderr.write(`build-native: built ${binary} with ${cc}\n`);
  return undefined;
}

for (const program of programs) {
  const why = build(program);
  if (why === undefined) continue;
  rmSync(program.binary, { force: true }); // a stale binary must not stand in for the source that failed
  process.stderr.write(`build-native: ${program.binary.split("/").pop()} not built: ${why}; ${program.without}\n`);
}
