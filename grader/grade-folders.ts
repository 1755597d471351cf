// Where a grade runs: the project root, the lab's manifest, the sandbox chosen for this
// machine, the paths no submission may see, and the grade's private folders (the
// submission's copy, readable by the sandbox's user, and the writable scratch folders).

import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { t } from "./i18n.ts";
import type { LabManifest } from "./manifest.ts";
import { copySubmission } from "./preflight.ts";
import { SANDBOX_UID, sandboxSupport, type SandboxKind, type SandboxMode } from "./sandbox/index.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

// Loads labs/<lab>/lab.ts.
export async function loadManifest(labId: string): Promise<{ manifest: LabManifest; labDir: string }> {
  const labDir = join(ROOT, "labs", labId);
  const file = join(labDir, "lab.ts");
  if (!existsSync(file)) throw new Error(`no lab manifest at ${relative(ROOT, file)}`);
  const mod = await import(pathToFileURL(file).href);
  return { manifest: (mod.lab ?? mod.default) as LabManifest, labDir };
}

/** The folders of one grade under its private temp folder. */
export interface GradeFolders {
  gradeDir: string;
  /** The submission's copy (read-only in the sandbox). */
  copy: string;
  /** The test run's writable folder, and the import check's. */
  scratch: string;
  smokeScratch: string;
  fixtureRoot: string;
  runCwd: string;
  violationLog: string;
}

// `<top>/g` holds the submission's copy (read-only in the sandbox) and two writable scratch
// folders, one for the import check and one for the tests.
export function copyIntoGradeFolders(submission: string, gradeDir: string, sandbox: SandboxKind): GradeFolders {
  const copy = makeCopy(submission, gradeDir);
  const scratch = makeScratch(join(gradeDir, "run"), sandbox);
  const smokeScratch = makeScratch(join(gradeDir, "import"), sandbox);
  for (const dir of ["fixtures", "cache", "cwd", "home", "vitest-tmp"]) makeScratch(join(scratch, dir), sandbox);
  return { gradeDir, copy, scratch, smokeScratch, fixtureRoot: join(scratch, "fixtures"), runCwd: join(scratch, "cwd"), violationLog: join(scratch, "violations.jsonl") };
}

// The grade folder with the submission's copy in it, readable by the sandbox's user.
export function makeCopy(submission: string, gradeDir: string): string {
  mkdirSync(gradeDir, { mode: 0o755 });
  chmodSync(gradeDir, 0o755);
  // The copy is ES modules, as it was inside the project (whose package.json says so).
  writeFileSync(join(gradeDir, "package.json"), `${JSON.stringify({ type: "module", private: true })}\n`);
  const copy = join(gradeDir, "submission");
  copySubmission(submission, copy);
  readableByAll(copy);
  return copy;
}

let noticed = false;
// The sandbox to use for `mode`, or (required but unavailable) why there is none.
// `auto` without one says so once per process, on stderr.
export function chooseSandbox(mode: SandboxMode): { kind: SandboxKind } | { refused: string } {
  if (mode === "off") return { kind: "none" };
  const support = sandboxSupport();
  // As root the sandbox drops to an unprivileged uid, which must be able to reach the
  // project (a checkout under /root or a 0700 temp folder is not): there, keep the
  // namespaces and drop the capabilities instead (the user-namespace sandbox).
  if (support.kind === "root" && !reachableByOthers(ROOT)) return { kind: "user" };
  if (support.kind !== "none") return { kind: support.kind };
  if (mode === "required") return { refused: support.why };
  if (!noticed) {
    noticed = true;
    process.stderr.write(`${t("sandboxUnavailable", "en", { why: support.why })}\n`);
  }
  return { kind: "none" };
}

// Can a user who is neither owner nor group member traverse to `dir` and its packages?
function reachableByOthers(dir: string): boolean {
  const targets = [dir];
  try {
    targets.push(realpathSync(join(dir, "node_modules")));
  } catch {
    // no packages to reach
  }
  for (const target of targets) {
    for (let d = target; ; d = dirname(d)) {
      try {
        if ((statSync(d).mode & 0o005) !== 0o005) return false;
      } catch {
        return false;
      }
      if (dirname(d) === d) break;
    }
  }
  return true;
}

// Folders no submission may see: every lab's reference solution and corpus (from the lab
// manifests, so a new lab needs no grader change), the course package built on the
// solutions, the project's git data and leftovers of older graders.
export async function hiddenPaths(): Promise<string[]> {
  const out = [join(ROOT, ".git"), join(ROOT, ".grade"), join(ROOT, "packages", "extensions"), join(ROOT, "coverage")];
  const labs = join(ROOT, "labs");
  for (const id of existsSync(labs) ? readdirSync(labs).sort() : []) {
    if (!existsSync(join(labs, id, "lab.ts"))) continue;
    try {
      const { manifest, labDir } = await loadManifest(id);
      out.push(join(labDir, manifest.solution), join(labDir, "corpus"));
    } catch {
      // A lab whose manifest does not load cannot be graded either; hide its folder whole.
      out.push(join(labs, id));
    }
  }
  return out.filter((p) => existsSync(p));
}

// A folder the payload may write: owned by the sandbox's user when the grader is root.
export function makeScratch(dir: string, sandbox: SandboxKind): string {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  if (sandbox === "root") chownSync(dir, SANDBOX_UID, SANDBOX_UID);
  return dir;
}

// Files readable and folders traversable by everyone (the sandbox's user reads the copy).
function readableByAll(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) readableByAll(full);
    else chmodSync(full, (statSync(full).mode & 0o777) | 0o444 | (statSync(full).mode & 0o100 ? 0o111 : 0));
  }
}

// The homework test files present right now (relative to the lab folder).
export function homeworkFiles(labDir: string, manifest: LabManifest): string[] {
  const dir = join(labDir, manifest.homeworkDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".test.ts"))
    .sort()
    .map((name) => `${manifest.homeworkDir}/${name}`);
}

