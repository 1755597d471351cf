// npm run dist -- student OUT_DIR     the learner repository (Classroom template / hand-out)
// npm run dist -- gradescope OUT_ZIP  the Gradescope autograder zip
//
// Both are built from this workbook by copying files, never by forking them: the grader, the
// evidence tests, the probes, the fixtures and the homework are the same files. What a
// learner must not get is left out (the reference solution, the corpus of its mutations, the
// project's own tests, the demos that drive the solution), and the Markdown is filtered so
// that no lesson excerpt of the solution and no command that needs it remains.

import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { editionProblems, filterMarkdown, missingNames, STUDENT_SCRIPTS, studentReadme, unlinkMissing } from "./edition-text.ts";
import { writeZip } from "./zip.ts";

export { filterMarkdown, STUDENT_SCRIPTS, unavailableCommand, unlinkMissing } from "./edition-text.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const LAB = "labs/33-mcp-lite";
/** Lesson 13, the prerequisite: its lab ships too (without its solution). */
const LAB13 = "labs/13-process-boundary";

/** Folders copied whole into the learner repository. */
const STUDENT_DIRS = [
  `${LAB}/starter`, `${LAB}/tests`, `${LAB}/probes`, `${LAB}/homework`, `${LAB}/host`,
  `${LAB13}/starter`, `${LAB13}/tests`,
  "grader/child", "grader/report", "grader/platforms", "grader/sandbox", "lessons/tools",
];
/** Single files copied into the learner repository. */
const STUDENT_FILES = [
  `${LAB}/lab.ts`,
  `${LAB}/test-titles.ts`,
  `${LAB}/vitest.config.ts`,
  `${LAB}/README.md`,
  `${LAB}/README.en.md`,
  `${LAB13}/lab.ts`,
  `${LAB13}/vitest.config.ts`,
  "fixtures/index.ts",
  "fixtures/mcp-server.mjs",
  "fixtures/pool.mjs",
  "fixtures/pool-mode.mjs",
  "fixtures/relay/lab-relay.c",
  "fixtures/relay/README.md",
  "fixtures/relay/relay-smoke.mjs",
  "scripts/build-native.mjs",
  "scripts/build-grader.mjs",
  "scripts/lab-test.mjs",
  "scripts/lab-test.ts",
  "scripts/lab-watch.ts",
  "scripts/lab-progress-reporter.ts",
  "scripts/verify-lesson.ts",
  "lessons/33-mcp-lite/README.md",
  "lessons/33-mcp-lite/README.en.md",
  "lessons/13-process-boundary/README.md",
  "lessons/13-process-boundary/README.en.md",
  // The lesson's failing implementations (anti-patterns, no solution code); the demos that
  // run them beside the reference client stay in the workbook.
  "docs/demos/naive-clients.ts",
  "docs/quick-start.md",
  "docs/client-contract.md",
  "tsconfig.json",
];
/** grader/*.ts that only the workbook needs (the corpus runner, the benchmark). */
const GRADER_ONLY_WORKBOOK = new Set(["bench.ts", "corpus.ts", "README.md"]);
/** Dev dependencies only the workbook uses (its own tests, coverage, the MCP SDK comparison,
 *  mutation testing, the real MCP servers the extensions package is tested against): the
 *  learner repository and its lock file do without them. */
const WORKBOOK_ONLY_PACKAGES = new Set([
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/server-everything",
  "@modelcontextprotocol/server-memory",
  "@vitest/coverage-v8",
  "saxes",
  "@stryker-mutator/core",
  "@stryker-mutator/vitest-runner",
]);
// Builds the learner repository in `out` (which must not exist or be empty).
export function buildStudent(out: string): void {
  if (existsSync(out) && readdirSync(out).length > 0) throw new Error(`${out} is not empty`);
  mkdirSync(out, { recursive: true });
  for (const dir of STUDENT_DIRS) cpSync(join(ROOT, dir), join(out, dir), { recursive: true, filter: (src) => !src.includes("node_modules") });
  for (const name of readdirSync(join(ROOT, "grader"))) {
    const src = join(ROOT, "grader", name);
    if (statSync(src).isFile() && !GRADER_ONLY_WORKBOOK.has(name)) cpSync(src, join(out, "grader", name));
  }
  const problems: string[] = [];
  for (const file of STUDENT_FILES) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    const text = readFileSync(join(ROOT, file));
    if (file.endsWith(".md")) problems.push(...editionProblems(text.toString("utf8")).map((p) => `${file}: ${p}`));
    writeFileSync(join(out, file), file.endsWith(".md") ? filterMarkdown(text.toString("utf8"), file.endsWith(".en.md") ? "en" : "zh") : text);
  }
  const pkg = studentPackage(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")));
  writeFileSync(join(out, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(join(out, "package-lock.json"), `${JSON.stringify(studentLock(JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")), pkg), null, 2)}\n`);
  mkdirSync(join(out, ".github", "workflows"), { recursive: true });
  cpSync(join(ROOT, "grader/platforms/github-classroom/classroom.yml"), join(out, ".github/workflows/classroom.yml"));
  writeFileSync(join(out, ".gitignore"), "node_modules/\n.grade/\ncoverage/\ngrade.json\ngrade.md\n");
  writeFileSync(join(out, "README.md"), studentReadme());
  for (const file of listFiles(out).filter((f) => f.endsWith(".md"))) {
    const text = readFileSync(file, "utf8");
    problems.push(...missingNames(text, file, out, listFiles(out)).map((name) => `${relative(out, file)}: names ${name}, which the edition does not hold`));
    writeFileSync(file, unlinkMissing(text, dirname(file)));
  }
  // The edition is the truth: a text that would be cut, or that names what is left out,
  // stops the build instead of reaching a learner.
  if (problems.length > 0) throw new Error(`the student edition would not match its text:\n  ${problems.join("\n  ")}`);
}

// Builds the Gradescope autograder zip: setup.sh and run_autograder at its root, next to
// the learner repository's files (Gradescope unpacks the zip to /autograder/source).
export function buildGradescope(outZip: string): void {
  const work = mkdtempSync(join(tmpdir(), "lab33-dist-"));
  try {
    const tree = join(work, "source");
    buildStudent(tree);
    cpSync(join(ROOT, "grader/platforms/gradescope/setup.sh"), join(tree, "setup.sh"));
    cpSync(join(ROOT, "grader/platforms/gradescope/run_autograder"), join(tree, "run_autograder"));
    mkdirSync(dirname(resolve(outZip)), { recursive: true });
    rmSync(outZip, { force: true });
    writeZip(resolve(outZip), listFiles(tree).map((file) => ({ name: relative(tree, file).split("\\").join("/"), file })));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

interface PackageJson {
  name: string;
  version: string;
  engines?: Record<string, string>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
}

// The learner repository's package.json: the workbook's dependencies (the grader and the
// tests need the same ones), its own scripts, and "#submission" pointing at the starter.
export function studentPackage(root: PackageJson): PackageJson {
  return {
    name: "lab33-mcp-lite-student",
    version: root.version,
    private: true,
    type: "module",
    engines: root.engines ?? { node: ">=20" },
    scripts: STUDENT_SCRIPTS,
    ...(root.dependencies ? { dependencies: root.dependencies } : {}),
    ...(root.devDependencies ? { devDependencies: Object.fromEntries(Object.entries(root.devDependencies).filter(([name]) => !WORKBOOK_ONLY_PACKAGES.has(name))) } : {}),
    imports: { "#submission/*": `./${LAB}/starter/*`, "#process-boundary/*": `./${LAB13}/starter/*` },
  };
}

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  link?: boolean;
  [key: string]: unknown;
}

// The workbook's lock file cut down to the packages the learner repository's package.json
// reaches (workspace packages and what only they need are dropped), so `npm ci` installs
// exactly the versions the workbook was tested with.
export function studentLock(lock: { packages: Record<string, LockEntry>; [key: string]: unknown }, pkg: PackageJson): unknown {
  const packages = lock.packages;
  const keep = new Set<string>();
  const visit = (from: string, deps: Record<string, string> | undefined, optional: boolean) => {
    for (const name of Object.keys(deps ?? {})) {
      const at = resolveIn(packages, from, name);
      if (!at) {
        if (optional) continue;
        throw new Error(`package-lock.json has no ${name} for ${from || "the root"}`);
      }
      if (keep.has(at) || packages[at]!.link) continue;
      keep.add(at);
      const entry = packages[at]!;
      visit(at, entry.dependencies, false);
      visit(at, entry.optionalDependencies, true);
      visit(at, entry.peerDependencies, true);
    }
  };
  visit("", pkg.dependencies, false);
  visit("", pkg.devDependencies, false);
  const root: LockEntry = { name: pkg.name, version: pkg.version };
  if (pkg.dependencies) root.dependencies = pkg.dependencies;
  if (pkg.devDependencies) root.devDependencies = pkg.devDependencies;
  if (pkg.engines) root.engines = pkg.engines;
  const kept: Record<string, LockEntry> = { "": root };
  for (const key of Object.keys(packages).sort()) if (keep.has(key)) kept[key] = packages[key]!;
  return { name: pkg.name, version: pkg.version, lockfileVersion: lock.lockfileVersion, requires: true, packages: kept };
}

// Node's lookup of `name` from the package installed at `from` (a lock-file path).
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ""}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut < 0 ? "" : base.slice(0, cut);
  }
}

// Exit status 2 with the usage for anything but a kind and one output path (a flag such as
// `--out` is refused, never taken for a folder to write).
export async function main(argv: string[]): Promise<number> {
  const [kind, out] = argv;
  if ((kind !== "student" && kind !== "gradescope") || !out || out.startsWith("-") || argv.length !== 2) {
    process.stderr.write("usage: npm run dist -- student OUT_DIR | gradescope OUT_ZIP\n");
    return 2;
  }
  if (kind === "student") buildStudent(resolve(out));
  else buildGradescope(resolve(out));
  process.stdout.write(`${resolve(out)}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`dist: ${(error as Error).message}\n`);
    process.exitCode = 2;
  }
}
