// Helpers for the tests of `npm run dist`: build a learner repository in a temp folder, give
// it packages (a real offline `npm ci`, or a link to the workbook's node_modules when the
// install itself is not what is tested), run commands in it, and measure how much of the
// reference solution's code a file shares.

import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildStudent, ROOT } from "../../scripts/dist.ts";

export { ROOT };
export const SOLUTION_SRC = join(ROOT, "labs", "33-mcp-lite", "solution", "src");
/** Hang deadline for the grades these tests run (the suite runs them on a loaded machine; the
 *  default 2 000 ms could call a correct client hung there). */
export const LOADED_HANG_MS = "8000";
/** Wall-clock budget of one step that grades or installs, in ms (the machine is slow and shared). */
export const STEP_TIMEOUT_MS = 360_000;

// Builds the learner repository under a fresh temp folder; `packages` says how it gets its
// node_modules. Returns the repository folder and a cleanup function.
export function studentRepo(packages: "npm-ci" | "link"): { dir: string; cleanup: () => void } {
  const parent = mkdtempSync(join(tmpdir(), "lab33-student-"));
  const dir = join(parent, "repo");
  buildStudent(dir);
  if (packages === "link") symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  else {
    const ci = run("npm", ["ci", "--offline", "--no-audit", "--no-fund", "--loglevel=error"], dir);
    if (ci.status !== 0) throw new Error(`npm ci --offline failed in the learner repository:\n${ci.stderr}`);
  }
  return { dir, cleanup: () => rmSync(parent, { recursive: true, force: true }) };
}

// The user the platform tests run the student's code as: `nobody` when the tests run as root
// (as CI does) and `nobody` can read the workbook's packages, else the current user (the
// privilege drop is then not exercised; a clone under a private home folder is the usual cause).
export function unprivilegedUser(): string {
  if (process.getuid?.() !== 0) return "";
  const probe = spawnSync("runuser", ["-u", "nobody", "--", "test", "-r", join(ROOT, "node_modules", "tsx", "dist", "cli.mjs")]);
  if (probe.status === 0) return "nobody";
  process.stderr.write("dist tests: nobody cannot read the workbook's node_modules; grading as root\n");
  return "";
}

// Runs a command as a learner or a platform would: without the variables this suite's own
// run sets (LAB33_FIXTURE_COVERAGE_DIR, for one, points the fixtures at a coverage collector
// that the learner repository does not have).
export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(LAB|VITEST|NODE_V8_COVERAGE|NODE_OPTIONS|NODE_ENV|TEST$)/.test(name)));
  return spawnSync(command, args, { cwd, encoding: "utf8", timeout: STEP_TIMEOUT_MS, env: { ...clean, FORCE_COLOR: "0", NO_COLOR: "1", ...env }, maxBuffer: 64 * 1024 * 1024 });
}

export function listFiles(dir: string, skip = new Set(["node_modules", ".git", ".grade"])): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(path, skip));
    else out.push(path);
  }
  return out.sort();
}

/** Shortest run of consecutive code lines that counts as copied code. */
export const SHARED_RUN_LINES = 6;

// The meaningful lines of a source text: trimmed, without blank lines or lines of brackets alone.
function codeLines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^[\s{}()[\];,]*$/.test(line));
}

// The starter's given surface, which it shares with the solution on purpose (STYLE.md rule 7:
// the contract's types): type and interface declarations, and error classes.
export function withoutDeclarations(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (/^(export )?(declare )?(interface|type) \w/.test(lines[i]!) || /^(export )?class \w+ extends Error\b/.test(lines[i]!)) {
      let depth = 0;
      for (; i < lines.length; i++) {
        const line = lines[i]!;
        depth += (line.match(/[{(]/g) ?? []).length - (line.match(/[})]/g) ?? []).length;
        if (depth <= 0 && /[;}]\s*$/.test(line)) break;
      }
      continue;
    }
    out.push(lines[i]!);
  }
  return out.join("\n");
}

// Every run of SHARED_RUN_LINES consecutive code lines of `text` that also appears, in the
// same order, in one of the solution's modules; each with the module it came from.
export function sharedRuns(text: string, solution: Map<string, string>, strip = false): Array<{ module: string; first: string }> {
  const runs = new Map<string, string>();
  for (const [module, source] of solution) {
    const lines = codeLines(strip ? withoutDeclarations(source) : source);
    for (let i = 0; i + SHARED_RUN_LINES <= lines.length; i++) runs.set(lines.slice(i, i + SHARED_RUN_LINES).join("\n"), module);
  }
  const lines = codeLines(strip ? withoutDeclarations(text) : text);
  const found: Array<{ module: string; first: string }> = [];
  for (let i = 0; i + SHARED_RUN_LINES <= lines.length; i++) {
    const module = runs.get(lines.slice(i, i + SHARED_RUN_LINES).join("\n"));
    if (module) found.push({ module, first: lines[i]! });
  }
  return found;
}

export function solutionModules(): Map<string, string> {
  return new Map(listFiles(SOLUTION_SRC).map((file) => [file.slice(SOLUTION_SRC.length + 1), readFileSync(file, "utf8")]));
}
