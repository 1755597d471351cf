// The package's build, run by `npm pack` (prepack): `node scripts/build.mjs`; `--clean`
// removes what it made (postpack), so the source tree never holds stale JavaScript.
//
// The package builds on the lab's reference client (labs/33-mcp-lite/solution/src, one copy
// of the protocol code), so the tarball carries that client compiled alongside: tsc emits
// JavaScript and declarations for src/index.ts and everything it imports, with the
// repository as rootDir (build/packages/extensions/src, build/labs/33-mcp-lite/solution/src);
// this script then moves the package's files to dist/ and the reference client's to
// dist/reference/, rewrites the one import prefix that joined them, and turns the `.ts`
// specifiers tsc leaves in declarations into `.js`. It fails if anything else was emitted
// or if an import would still reach outside dist/.
//
// The compiler is the `tsc` binary of the repository's typescript (7.x, the native port):
// it has no stable JavaScript API, but its command line emits JavaScript and declarations.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");
const BUILD = join(PACKAGE, "build");
const DIST = join(PACKAGE, "dist");
const OWN = join(BUILD, "packages", "extensions", "src");
const REFERENCE = join(BUILD, "labs", "33-mcp-lite", "solution", "src");
// How the package's sources name the reference client, and what that becomes in dist/.
const REFERENCE_IMPORT = "../../../labs/33-mcp-lite/solution/src/";

rmSync(BUILD, { recursive: true, force: true });
rmSync(DIST, { recursive: true, force: true });
if (process.argv.includes("--clean")) process.exit(0);

const tsc = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
// Diagnostics to stderr: stdout belongs to whoever ran the build (`npm pack --json` prints its result there).
const run = spawnSync(process.execPath, [tsc, "-p", join(PACKAGE, "tsconfig.build.json")], { stdio: ["ignore", 2, 2] });
if (run.status !== 0) fail(`tsc exited with ${run.status ?? run.signal}`);

const emitted = files(BUILD).map((file) => relative(BUILD, file));
const stray = emitted.filter((file) => !file.startsWith(relative(BUILD, OWN)) && !file.startsWith(relative(BUILD, REFERENCE)));
if (stray.length > 0) fail(`tsc emitted files outside the package and the reference client: ${stray.join(", ")}`);

mkdirSync(DIST, { recursive: true });
renameSync(REFERENCE, join(DIST, "reference"));
for (const entry of readdirSync(OWN)) renameSync(join(OWN, entry), join(DIST, entry));
rmSync(BUILD, { recursive: true, force: true });

for (const file of files(DIST)) {
  let text = readFileSync(file, "utf8").replaceAll(REFERENCE_IMPORT, "./reference/");
  if (file.endsWith(".d.ts")) text = text.replace(/(["'])(\.{1,2}\/[^"']+)\.ts\1/g, "$1$2.js$1");
  const outside = [...text.matchAll(/(?:from |import\()(["'])(\.{1,2}\/[^"']+)\1/g)].find(([, , spec]) => {
    const target = join(dirname(file), spec ?? "");
    return relative(DIST, target).startsWith("..") || !existsSync(target);
  });
  if (outside) fail(`${relative(PACKAGE, file)} imports ${outside[2] ?? "?"}, which is not in dist/`);
  writeFileSync(file, text);
}
console.error(`build: ${files(DIST).length} files in ${relative(process.cwd(), DIST) || "."}`);

/** Every file under dir, recursively. @param {string} dir @returns {string[]} */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** @param {string} message @returns {never} */
function fail(message) {
  console.error(`build: ${message}`);
  process.exit(1);
}
