// @ts-check
// The grade command prebuilt: grader/cli.ts with everything of the project it imports (the
// grader's modules, every lab's manifest) as one plain ES module, so `npm run grade` starts
// as plain `node` instead of loading TypeScript through tsx first (about a quarter of a
// second before anything is graded, spent on every grade). Packages stay run-time imports.
// Built by `npm ci` (postinstall: scripts/build-grader.mjs) and again by the launcher
// (grader/cli.mjs) whenever a file it was built from changed; a bundle that is stale and
// cannot be rebuilt is never run: the launcher then runs the TypeScript through tsx.
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the bundle (cli.mjs) and what it was built from (cli.inputs.json: each input's size
 *  and mtime, the labs it knows) are kept. */
export const OUT_DIR = join(ROOT, "node_modules", ".cache", "lab-grader");
/** grader/sandbox/lab-nokeys.c, built there by `npm ci` (scripts/build-native.mjs): the sandbox's
 *  ns-init starts under it, so nothing in the sandbox has the kernel's key system calls. */
export const NOKEYS_BINARY = join(OUT_DIR, "lab-nokeys");
/** The bundle in `outDir`. */
export const bundlePath = (outDir = OUT_DIR) => join(outDir, "cli.mjs");
const inputsPath = (/** @type {string} */ outDir) => join(outDir, "cli.inputs.json");
/** Where the bundle leaves each lab's manifest for grade-folders.ts loadManifest. */
export const MANIFESTS_KEY = "lab.prebuiltManifests";
// The generated entry (no file of its own).
const ENTRY_NAME = "<grade-entry>";

/** @typedef {{ labs: string[], inputs: Record<string, { size: number, mtimeMs: number }> }} Inputs */

// The labs with a manifest (labs/<id>/lab.ts), by folder name.
function labIds() {
  const labs = join(ROOT, "labs");
  if (!existsSync(labs)) return [];
  return readdirSync(labs, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(labs, entry.name, "lab.ts")))
    .map((entry) => entry.name)
    .sort();
}

// A file or folder no one but this user (or root) can have written: not a link, owned by this
// user or root, not writable by group or others. A platform may run the grade as a user of
// its own and render the result as root (grader/platforms/run-grade.sh): a bundle the graded
// user could replace must never be what root runs.
/** @param {string} path */
export function ownedSafely(path) {
  try {
    const st = lstatSync(path);
    const uid = process.getuid?.();
    return !st.isSymbolicLink() && (uid === undefined || st.uid === uid || st.uid === 0) && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** True when the bundle exists, is safely owned, and no file it was built from has changed since. */
export function bundleIsFresh(outDir = OUT_DIR) {
  if (![outDir, bundlePath(outDir), inputsPath(outDir)].every(ownedSafely)) return false;
  /** @type {Inputs} */
  let recorded;
  try {
    recorded = JSON.parse(readFileSync(inputsPath(outDir), "utf8"));
  } catch {
    return false;
  }
  if (!existsSync(bundlePath(outDir)) || JSON.stringify(recorded.labs) !== JSON.stringify(labIds())) return false;
  for (const [file, seen] of Object.entries(recorded.inputs ?? {})) {
    try {
      const now = statSync(join(ROOT, file));
      if (now.size !== seen.size || now.mtimeMs !== seen.mtimeMs) return false;
    } catch {
      return false;
    }
  }
  return Object.keys(recorded.inputs ?? {}).length > 0;
}

// Each module's import.meta.url and import.meta.dirname stay its own file's (the grader finds
// the project, ns-init.mjs and the reports' sources from them), not the bundle's.
/** @returns {import("esbuild").Plugin} */
function ownMetaUrl() {
  return {
    name: "lab-grader-meta-url",
    setup(build) {
      build.onLoad({ filter: /\.(?:ts|mjs|js)$/ }, (args) => {
        if (args.path.includes("/node_modules/")) return undefined;
        const source = readFileSync(args.path, "utf8");
        // On the first line, so every line keeps its number.
        const prologue = `var __labMetaUrl = ${JSON.stringify(pathToFileURL(args.path).href)}, __labMetaDirname = ${JSON.stringify(dirname(args.path))};`;
        return { contents: prologue + source, loader: args.path.endsWith(".ts") ? "ts" : "js" };
      });
    },
  };
}

/** Builds the bundle (atomically: a temp name, then renamed) and records its inputs. */
export async function buildBundle(outDir = OUT_DIR) {
  const { build } = await import("esbuild");
  const labs = labIds();
  const registry = labs.map((id) => `${JSON.stringify(id)}: () => import(${JSON.stringify(join(ROOT, "labs", id, "lab.ts"))})`).join(",\n  ");
  const entry = [
    `globalThis[Symbol.for(${JSON.stringify(MANIFESTS_KEY)})] = {\n  ${registry}\n};`,
    `await import(${JSON.stringify(join(ROOT, "grader", "cli.ts"))});`,
  ].join("\n");
  const result = await build({
    stdin: { contents: entry, resolveDir: ROOT, sourcefile: ENTRY_NAME, loader: "js" },
    // The metafile's input paths are relative to it, whatever folder the grade was started in.
    absWorkingDir: ROOT,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    define: { "import.meta.url": "__labMetaUrl", "import.meta.dirname": "__labMetaDirname" },
    plugins: [ownMetaUrl()],
    // Stack traces name the grader's own files and lines (the launcher turns source maps on).
    sourcemap: "inline",
    sourcesContent: false,
    metafile: true,
    // (Named, though not written by esbuild: the map's paths are relative to it.)
    outfile: bundlePath(outDir),
    write: false,
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error("esbuild wrote no bundle");
  const recorded = recordInputs(Object.keys(result.metafile.inputs), labs);
  const bundle = writeBundle(outDir, output.contents, recorded);
  return { bundle, inputs: Object.keys(recorded.inputs).length, labs };
}

// Each file the bundle was built from (the project's own, not packages) with its size and mtime.
function recordInputs(/** @type {string[]} */ inputs, /** @type {string[]} */ labs) {
  /** @type {Inputs} */
  const recorded = { labs, inputs: {} };
  for (const input of inputs) {
    if (input === ENTRY_NAME || input.includes("node_modules/")) continue;
    const st = statSync(join(ROOT, input));
    recorded.inputs[input] = { size: st.size, mtimeMs: st.mtimeMs };
  }
  return recorded;
}

// Writes the bundle and its inputs under temp names, then renames them into place.
function writeBundle(/** @type {string} */ outDir, /** @type {Uint8Array} */ contents, /** @type {Inputs} */ recorded) {
  mkdirSync(outDir, { recursive: true, mode: 0o755 });
  // (Whatever the umask or an older build left: see ownedSafely.)
  chmodSync(outDir, 0o755);
  const bundle = bundlePath(outDir);
  const inputs = inputsPath(outDir);
  const temp = `${bundle}.${process.pid}.tmp`;
  const tempInputs = `${inputs}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, contents, { mode: 0o644 });
    writeFileSync(tempInputs, JSON.stringify(recorded), { mode: 0o644 });
    // The inputs last: a reader that sees them finds the bundle they describe.
    rmSync(inputs, { force: true });
    renameSync(temp, bundle);
    renameSync(tempInputs, inputs);
  } finally {
    rmSync(temp, { force: true });
    rmSync(tempInputs, { force: true });
  }
  return bundle;
}
