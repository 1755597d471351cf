// @ts-check
// A hosted lab's test-side harness precompiled, for grades: every TypeScript module its test
// files and setup files import (support, observers, probes, the model, the client proxy, the
// fixtures' helpers; never a test file, never the submission) as a plain ES module of its own,
// one output file per source file, so that vitest's workers load them natively instead of
// asking vitest's main process to compile each one and ship the code to every worker (on two
// cores about half a second of CPU per grade went to that, with the client hosts waiting).
//
// A mirror keeps the project's layout under node_modules/.cache/lab-grader/harness/<lab>/<build>/
// (<build>: a hash of its sources' sizes and mtimes; <lab>/current names the newest), each file
// named after its source plus ".mjs" (labs/33-mcp-lite/tests/support.ts.mjs), so
// frame filters that look for "support.ts" or "/labs/33-mcp-lite/host/" still match. Every
// relative import is rewritten to the mirrored module's absolute URL (or to the original file,
// for what is not mirrored: the fixtures' .mjs modules), "#submission/src/mcp-client.ts" to
// the mirrored proxy (a hosted grade's alias), and each module keeps its own import.meta.url.
// Test files stay what vitest compiles and reports. Only labs with a client host get a mirror
// (in any other lab "#submission" is the learner's copy, known only per grade).
//
// Built by `npm ci` (scripts/build-grader.mjs) and again by a grade whenever a source changed
// (each source's size and mtime are recorded); a mirror that is stale and cannot be rebuilt,
// or that someone else could have written, is not used: the grade then compiles the harness
// through vitest as before (grader/vitest-overrides.ts).
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { OUT_DIR, ownedSafely } from "./cli-bundle.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MIRROR_ROOT = join(OUT_DIR, "harness");
const SUBMISSION_ENTRY = "#submission/src/mcp-client.ts";
/** What a mirror records: each source (relative to the project) with its size and mtime. */
export const MIRROR_INPUTS = "mirror.inputs.json";

/** @typedef {{ sources: Record<string, { size: number, mtimeMs: number }> }} Inputs */

/** Lab `labId`'s folder of mirrors: one build per set of sources, and `current`, naming the newest. */
const labFolder = (/** @type {string} */ labId, root = MIRROR_ROOT) => join(root, labId);
const CURRENT = "current";

// Folders 0755, files 0644, all the way down.
function onlyOwnerWrites(/** @type {string} */ dir) {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) onlyOwnerWrites(path);
    else chmodSync(path, 0o644);
  }
}

/** Where the mirror in `dir` keeps the module compiled from `source` (an absolute path). */
export const mirroredPath = (/** @type {string} */ dir, /** @type {string} */ source) => `${join(dir, relative(ROOT, source))}.mjs`;

/**
 * Lab `labId`'s current mirror: its folder and the sources it holds (absolute paths), or
 * undefined when it is missing, stale or not safely owned. A build's folder never changes
 * once made (a rebuild makes another and points `current` at it), so a grade that started
 * with one never loads a module of another.
 * @returns {{ dir: string, sources: string[] } | undefined}
 */
export function freshMirror(/** @type {string} */ labId, root = MIRROR_ROOT) {
  const folder = labFolder(labId, root);
  const pointer = join(folder, CURRENT);
  if (![dirname(root), root, folder, pointer].every(ownedSafely)) return undefined;
  let build;
  try {
    build = readFileSync(pointer, "utf8").trim();
  } catch {
    return undefined;
  }
  if (!/^[0-9a-f]{16}$/.test(build)) return undefined;
  const dir = join(folder, build);
  const inputs = join(dir, MIRROR_INPUTS);
  if (![dir, inputs].every(ownedSafely)) return undefined;
  /** @type {Inputs} */
  let recorded;
  try {
    recorded = JSON.parse(readFileSync(inputs, "utf8"));
  } catch {
    return undefined;
  }
  const sources = Object.keys(recorded.sources ?? {});
  if (sources.length === 0) return undefined;
  for (const [file, seen] of Object.entries(recorded.sources)) {
    try {
      const now = statSync(join(ROOT, file));
      if (now.size !== seen.size || now.mtimeMs !== seen.mtimeMs || !existsSync(mirroredPath(dir, join(ROOT, file)))) return undefined;
    } catch {
      return undefined;
    }
  }
  return { dir, sources: sources.map((file) => join(ROOT, file)) };
}

// The lab's test files and setup files: what vitest itself loads (and keeps compiling).
function testSide(/** @type {string} */ labDir) {
  /** @type {string[]} */
  const files = [];
  for (const folder of ["tests", "probes", "homework"]) {
    const walk = (/** @type {string} */ dir) => {
      if (!existsSync(dir)) return;
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".test.ts")) files.push(path);
      }
    };
    walk(join(labDir, folder));
  }
  return [...files.sort(), join(labDir, "tests", "setup.ts"), join(ROOT, "grader", "child", "setup.ts")].filter((file) => existsSync(file));
}

/**
 * Builds lab `labId`'s mirror (a new folder, then renamed into place); undefined for a lab
 * without a client host. Returns the folder and how many modules it holds.
 * @returns {Promise<{ dir: string, modules: number } | undefined>}
 */
export async function buildMirror(/** @type {string} */ labId, root = MIRROR_ROOT) {
  const labDir = join(ROOT, "labs", labId);
  const proxy = join(labDir, "host", "proxy.ts");
  if (!existsSync(proxy)) return undefined;
  const { build } = await import("esbuild");
  const sources = await importedSources(build, testSide(labDir), proxy, root);
  /** @type {Inputs} */
  const recorded = { sources: {} };
  for (const source of sources) {
    const st = statSync(source);
    recorded.sources[relative(ROOT, source)] = { size: st.size, mtimeMs: st.mtimeMs };
  }
  const folder = labFolder(labId, root);
  const name = createHash("sha256").update(JSON.stringify(recorded)).digest("hex").slice(0, 16);
  const dir = join(folder, name);
  for (const made of [root, folder]) {
    mkdirSync(made, { recursive: true, mode: 0o755 });
    chmodSync(made, 0o755);
  }
  const temp = `${dir}.${process.pid}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp, { mode: 0o755 });
  try {
    await compile(build, sources, { dir, temp, proxy });
    writeFileSync(join(temp, MIRROR_INPUTS), JSON.stringify(recorded), { mode: 0o644 });
    // Nobody but its owner may change what a worker then loads, whatever the umask.
    onlyOwnerWrites(temp);
    // The same sources make the same build: one already there (another grade's, or a damaged
    // one) is swapped for this one, whose files are the same.
    const aside = `${dir}.${process.pid}.old`;
    if (existsSync(dir)) renameSync(dir, aside);
    renameSync(temp, dir);
    rmSync(aside, { recursive: true, force: true });
    const pointer = join(folder, `${CURRENT}.${process.pid}.tmp`);
    writeFileSync(pointer, `${name}\n`, { mode: 0o644 });
    chmodSync(pointer, 0o644);
    renameSync(pointer, join(folder, CURRENT));
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  dropOldBuilds(folder, name);
  return { dir, modules: sources.length };
}

// Builds other than the current one, once no grade can still be loading from them (a grade
// takes seconds; an hour is ample).
function dropOldBuilds(/** @type {string} */ folder, /** @type {string} */ keep) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === keep) continue;
    const path = join(folder, entry.name);
    try {
      if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true });
    } catch {
      // gone already
    }
  }
}

// What the test side imports (absolute paths of TypeScript files of the project), found the
// way esbuild resolves it; nothing is written. The submission's entry is left out.
/** @param {typeof import("esbuild").build} build @param {string[]} loaded @param {string} proxy @param {string} root */
async function importedSources(build, loaded, proxy, root) {
  const graph = await build({
    entryPoints: [...loaded, proxy],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "node",
    packages: "external",
    outdir: join(root, ".probe"),
    logLevel: "silent",
    plugins: [{ name: "lab-mirror-submission", setup: (b) => b.onResolve({ filter: /^#submission\// }, (args) => ({ path: args.path, external: true })) }],
  });
  const own = new Set(loaded);
  return Object.keys(graph.metafile.inputs)
    .map((file) => resolve(ROOT, file))
    .filter((file) => file.endsWith(".ts") && !file.includes("/node_modules/") && !own.has(file) && !file.endsWith(".test.ts"));
}

// Compiles each source into `temp`, one module per source, its imports rewritten (the mirror's
// final folder is `dir`, where they will point).
/** @param {typeof import("esbuild").build} build @param {string[]} sources @param {{ dir: string, temp: string, proxy: string }} where */
async function compile(build, sources, { dir, temp, proxy }) {
  const mirrored = new Set(sources);
  await build({
    entryPoints: sources,
    absWorkingDir: ROOT,
    outbase: ROOT,
    outdir: temp,
    entryNames: "[dir]/[name].ts",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "inline",
    sourcesContent: false,
    define: { "import.meta.url": "__labMetaUrl", "import.meta.dirname": "__labMetaDirname", "import.meta.filename": "__labMetaFilename" },
    logLevel: "silent",
    plugins: [
      {
        name: "lab-mirror",
        setup(b) {
          // Every import stays an import of its own module: mirrored, or the original file.
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === "entry-point") return undefined;
            if (args.path === SUBMISSION_ENTRY) return { path: pathToFileURL(mirroredPath(dir, proxy)).href, external: true };
            if (args.path.startsWith("#submission/")) return { errors: [{ text: `the harness imports ${args.path}: only ${SUBMISSION_ENTRY} has a mirror (the hosted proxy)` }] };
            if (!/^(\.{1,2}\/|\/)/.test(args.path)) return { path: args.path, external: true };
            const target = resolve(args.resolveDir, args.path);
            return { path: pathToFileURL(mirrored.has(target) ? mirroredPath(dir, target) : target).href, external: true };
          });
          // Each module's import.meta stays its source file's (on the first line: lines keep their numbers).
          b.onLoad({ filter: /\.ts$/ }, (args) => {
            const prologue = `var __labMetaUrl = ${JSON.stringify(pathToFileURL(args.path).href)}, __labMetaDirname = ${JSON.stringify(dirname(args.path))}, __labMetaFilename = ${JSON.stringify(args.path)};`;
            return { contents: prologue + readFileSync(args.path, "utf8"), loader: "ts" };
          });
        },
      },
    ],
  });
}

/** Builds under way in this process (a --batch grades several submissions at once). */
const building = new Map();

/** Lab `labId`'s mirror folder, built first when missing or stale; undefined where there is none to use. */
export async function readyMirror(/** @type {string} */ labId, root = MIRROR_ROOT) {
  const fresh = freshMirror(labId, root);
  if (fresh) return fresh.dir;
  const key = `${root}\0${labId}`;
  if (!building.has(key)) building.set(key, buildMirror(labId, root).catch(() => undefined).finally(() => building.delete(key)));
  await building.get(key);
  return freshMirror(labId, root)?.dir;
}
