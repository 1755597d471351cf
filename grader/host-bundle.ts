// The client host's two files, built once per grade on the trusted side before anything of
// the submission runs: the lab's host harness (labs/<lab>/host/host-main.ts with what it
// imports) and the submission's entry module with every file of the copy it imports, each one
// ES module with an inline source map. A host then starts as plain `node` (about 50 ms)
// instead of compiling TypeScript through tsx in every host (about 200 ms of CPU each).
// Bundling runs no submission code. Only files inside the copy are bundled: every other
// import stays a run-time import, with a relative one turned absolute so that it still names
// the place it named, where the host's strict resolution guard refuses it as it always did.
//
// The bundler runs as the grader, outside the sandbox, so the submission's build never lets
// esbuild touch the file system itself: this file resolves every import of the submission
// (no package.json, tsconfig.json or other file of the copy or above it is read: a
// package.json "main" or a tsconfig "extends" could name a file outside the copy, or a device
// or FIFO that never answers) and reads every module itself, a regular file inside the copy
// only, opened without following links and without blocking. Nor does esbuild follow a
// module's `//# sourceMappingURL=` comment to a map on disk (see NO_INPUT_MAP). The compiler
// options are the project's own (its tsconfig.json, trusted). And the build has a time bound
// all the same: at the bound esbuild's service is stopped, whatever read it is stuck in.
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, stop, type Loader, type Plugin } from "esbuild";
import { readRegularFile } from "./safe-fs.mjs";

/** Where the bundles go: inside the copy, so that the strict guard counts them as the copy's. */
export const HOST_BUNDLE_DIR = ".lab-host";

export interface HostBundle {
  harness: string;
  submission: string;
}

// Where the bundles of a grade go, known before they are built (the test run starts while
// they are built: its gate waits for them); undefined when the lab has no host.
export function plannedHostBundle(labDir: string, copy: string): HostBundle | undefined {
  if (!existsSync(join(labDir, "host", "host-main.ts"))) return undefined;
  const out = join(copy, HOST_BUNDLE_DIR);
  return { harness: join(out, "harness.mjs"), submission: join(out, "submission.mjs") };
}

// Bundles the host harness and the submission; undefined when the lab has no host or a
// bundle cannot be built (a syntax error: the type check reports it, and the hosts then
// load the submission through tsx and fail as the import would).
export async function buildHostBundle(labDir: string, copy: string, entry: string, boundMs = HOST_BUNDLE_BOUND_MS): Promise<HostBundle | undefined> {
  const bundle = plannedHostBundle(labDir, copy);
  if (!bundle) return undefined;
  const hostMain = join(labDir, "host", "host-main.ts");
  const out = join(copy, HOST_BUNDLE_DIR);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const service = esbuildService;
  try {
    mkdirSync(out, { recursive: true });
    const common = { bundle: true, format: "esm" as const, platform: "node" as const, target: "node20", sourcemap: "inline" as const, sourcesContent: false, logLevel: "silent" as const, write: true };
    const tsconfigRaw = projectCompilerOptions();
    // (esbuild runs plugins only in its asynchronous API.) Both builds are waited for even
    // when one fails, so that none is still running once this returns.
    const built = Promise.allSettled([
      build({ ...common, entryPoints: [hostMain], outfile: bundle.harness, packages: "external", plugins: [keepGuardExternal()] }),
      build({ ...common, entryPoints: [join(copy, entry)], outfile: bundle.submission, tsconfigRaw, plugins: [onlyInside(copy)] }),
    ]);
    // Nothing here should be able to block, but a build that has not ended by the bound is
    // given up (the hosts then load the submission through tsx, in the sandbox), and esbuild's
    // service stopped: a build in flight keeps its child process referenced, so a read it is
    // stuck in (a device that never answers) would keep the grader from ever exiting.
    const bound = new Promise<"bound">((resolve) => (timer = setTimeout(() => resolve("bound"), boundMs)));
    const ended = await Promise.race([built, bound, service.stopped]);
    if (ended === "bound") stopEsbuildService();
    if (ended === "bound" || ended === "stopped") return undefined;
    return ended.every((result) => result.status === "fulfilled") ? bundle : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

// esbuild runs one service (a child process) for the whole grader, shared by the grades of a
// batch; stop() kills it, and a build still in flight on it then never settles. So a grade
// whose builds were stopped by another grade's bound gives them up at once (`stopped`)
// instead of waiting out its own bound and stopping the next service in turn. The next
// build starts a new service.
let esbuildService = serviceGeneration();

function serviceGeneration(): { stopped: Promise<"stopped">; end: () => void } {
  let end = () => {};
  const stopped = new Promise<"stopped">((resolve) => (end = () => resolve("stopped")));
  return { stopped, end };
}

function stopEsbuildService(): void {
  const ending = esbuildService;
  esbuildService = serviceGeneration();
  void stop();
  ending.end();
}

/** Longest a grade waits for its host bundle, in ms (it takes well under a second). */
export const HOST_BUNDLE_BOUND_MS = 30_000;

/** Largest module of the submission the bundler reads, in bytes (the whole copy is capped at 20 MiB). */
const MAX_MODULE_BYTES = 20 * 1024 * 1024;

// The project's compiler options (its tsconfig.json, trusted), for the submission's build in
// place of any tsconfig.json esbuild would otherwise look for in and above the copy.
function projectCompilerOptions(): { compilerOptions: Record<string, unknown> } {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const options = (JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")) as { compilerOptions?: Record<string, unknown> }).compilerOptions ?? {};
  const kept = ["target", "verbatimModuleSyntax", "useDefineForClassFields", "experimentalDecorators", "alwaysStrict", "jsx", "jsxFactory", "jsxFragmentFactory", "jsxImportSource"];
  return { compilerOptions: Object.fromEntries(kept.filter((key) => key in options).map((key) => [key, options[key]])) };
}

// The harness imports the resolution guard by a path relative to its own file: keep that an
// absolute run-time import of the project's guard.
function keepGuardExternal(): Plugin {
  return {
    name: "lab-host-guard",
    setup(build) {
      build.onResolve({ filter: /sandbox\/guard\.mjs$/ }, (args) => ({ path: resolve(args.resolveDir, args.path), external: true }));
    },
  };
}

// Bundles what resolves inside the copy; leaves everything else to run time. Resolves and
// reads every module itself (see the header), so esbuild reads no file of the submission's.
function onlyInside(copy: string): Plugin {
  const root = `${resolve(copy)}/`;
  return {
    name: "lab-host-confine",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") return { path: resolve(args.path) };
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        if (!/^(\.{1,2}\/|\/)/.test(args.path)) return { path: args.path, external: true };
        const target = resolve(args.resolveDir || dirname(args.importer), args.path);
        const found = target.startsWith(root) ? moduleFile(target) : undefined;
        return found ? { path: found } : { path: target, external: true };
      });
      build.onLoad({ filter: /.*/ }, (args) => {
        const loader = loaderFor(args.path, args.with?.type);
        if (!loader) return { errors: [{ text: `no loader for ${args.path}` }] };
        const contents = readInside(root, args.path);
        if ("refused" in contents) return { errors: [{ text: `${args.path}: ${contents.refused}` }] };
        return { contents: SCANNED.has(loader) ? withoutInputMap(contents) : contents, loader, resolveDir: dirname(args.path) };
      });
    },
  };
}

/** What an import may name besides the file itself, in esbuild's order of trying. */
const EXTENSIONS = [".tsx", ".ts", ".jsx", ".js", ".mjs", ".cjs", ".mts", ".cts", ".json"];
const TS_FOR_JS: Record<string, string[]> = { ".js": [".ts", ".tsx"], ".mjs": [".mts"], ".cjs": [".cts"], ".jsx": [".tsx"] };

// The regular file an import of `target` (inside the copy) means: the file itself, its
// TypeScript source for a .js name, the name with an extension, or a folder's index file.
// No package.json is read (its "main" could lead anywhere): a folder without an index file
// is left to run time, where the host's guard decides.
export function moduleFile(target: string): string | undefined {
  const ext = extname(target);
  const candidates = [target, ...(TS_FOR_JS[ext] ?? []).map((alt) => target.slice(0, -ext.length) + alt), ...EXTENSIONS.map((e) => target + e), ...EXTENSIONS.map((e) => join(target, `index${e}`))];
  return candidates.find((file) => lstatSync(file, { throwIfNoEntry: false })?.isFile());
}

const LOADERS: Record<string, Loader> = { ".ts": "ts", ".mts": "ts", ".cts": "ts", ".tsx": "tsx", ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "jsx", ".json": "json", ".txt": "text" };
const ATTRIBUTE_LOADERS: Record<string, Loader> = { text: "text", json: "json", bytes: "binary" };

// esbuild follows a module's `//# sourceMappingURL=` comment (also `//@`, `/*# ... */`) and
// reads the map it names, relative to the module or as a file: URL, from disk: a device that
// never answers blocked the build, and a map outside the copy was read, its "sources" put in
// the bundle. Only the module's last such comment counts (esbuild's lexer keeps the last it
// scans, and a module's map is looked for only once its parse reached the end), so one more
// line at the end names a map of a scheme esbuild never fetches: no map is read, and the
// bundle's own map points at the module's lines (nothing moves: the line comes last). Where
// it can only be a comment: a line comment ends at the newline before it, and a module that
// ends inside a string, template, regular expression or block comment does not parse anyway.
// Modules read as JS or TypeScript only (a JSON or text module has no such comment, and a
// line more would change it).
const NO_INPUT_MAP = "\n//# sourceMappingURL=lab-host:none\n";
const SCANNED = new Set<Loader>(["ts", "tsx", "js", "jsx"]);

function withoutInputMap(contents: Uint8Array): Uint8Array {
  return Buffer.concat([contents, Buffer.from(NO_INPUT_MAP)]);
}

// How esbuild reads a module: by its import attribute where it has one, else by its extension.
function loaderFor(path: string, type: string | undefined): Loader | undefined {
  return type !== undefined ? ATTRIBUTE_LOADERS[type] : LOADERS[extname(path)];
}

// A module's bytes: a regular file inside the copy, reached without a link, read as the
// grader reads a record (safe-fs.mjs: no link, no blocking, at most MAX_MODULE_BYTES); else why not.
export function readInside(root: string, path: string): Uint8Array | { refused: string } {
  if (!path.startsWith(root)) return { refused: "outside the submission" };
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return { refused: "not found" };
  }
  if (real !== path) return { refused: "reached through a link" };
  const read = readRegularFile(path, MAX_MODULE_BYTES);
  if (!read.ok) return { refused: read.refusal === "too-big" ? `larger than ${MAX_MODULE_BYTES} bytes` : read.refusal === "unreadable" ? String(read.detail) : "not a regular file" };
  return read.missing ? { refused: "not found" } : read.bytes;
}
