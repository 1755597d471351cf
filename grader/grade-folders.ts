// Where a grade runs, fixed before anything runs: the options with their defaults, the lab's
// manifest, the sandbox chosen for this machine, the paths no submission may see, and the
// grade's private folders (the submission's copy, readable by the sandbox's user, and the
// writable scratch folders), with the test run's environment.

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { copyRefusal, copySubmission, makeFolder, type CopyOutcome } from "./copy-submission.ts";
import type { ResultHead } from "./grade-result.ts";
import { MANIFESTS_KEY } from "./cli-bundle.mjs";
import { t } from "./i18n.ts";
import { DEFAULT_LAB, type LabManifest, type Lang } from "./manifest.ts";
import { todoMarkers } from "./report/progress.ts";
import { NOKEYS, reachableByOthers, sandboxSupport, type SandboxKind, type SandboxMode } from "./sandbox/index.ts";
import type { GradeGroup } from "./sandbox/cgroup.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Default overall deadline of one grade, in ms. */
export const DEFAULT_DEADLINE_MS = 90_000;
/** Default hang-detector deadline passed to the tests (LAB_HANG_MS), in ms. */
export const DEFAULT_HANG_MS = 2_000;
/** Env var carrying the grade's random token; any process still carrying it at the end is a leftover. */
export const TOKEN_ENV = "LAB33_GRADE_TOKEN";
/** What the test run's scratch folder holds (made before it starts, on the host or in the sandbox's tmpfs). */
export const SCRATCH_FOLDERS = ["fixtures", "cache", "cwd", "home", "vitest-tmp"];
/** The records the test run leaves in its scratch folder, read back after it. */
export const RUN_RECORDS = ["violations.jsonl"];

export interface GradeOptions {
  lab?: string;
  /** Folder to grade; default: the lab's starter. */
  submission?: string;
  seed?: number;
  lang?: Lang;
  deadlineMs?: number;
  hangMs?: number;
  /** Test worker processes of the run (default: vitest-overrides.ts DEFAULT_WORKERS). */
  testWorkers?: number;
  /** Keep the grade's temp folders (for debugging; a sandbox's scratch is a tmpfs, gone with it). */
  keep?: boolean;
  /** Run the homework bonus tests too (default true). */
  homework?: boolean;
  /** OS sandbox: required, auto (default: use it where the machine allows, say so once where not) or off. */
  sandbox?: SandboxMode;
  /** Memory limit of the whole grade in MiB, through a control group of its own where the machine allows one (default sandbox/cgroup.ts DEFAULT_GRADE_MEMORY_MB; 0: none). */
  memoryMb?: number;
  /** Told the grade's private folders and process token before the run (tests check nothing outlives them). */
  onRun?: (info: { token: string; gradeDir: string; privateDir: string }) => void;
}

/** What one grade works with, fixed before anything runs. */
export interface GradePlan {
  manifest: LabManifest;
  labDir: string;
  submission: string;
  lang: Lang;
  seed: number;
  deadlineMs: number;
  hangMs: number;
  testWorkers?: number;
  head: ResultHead;
  started: number;
  /** When each phase ended, in ms since the start. */
  phases: Record<string, number>;
  /** Homework test files run (relative to the lab), and every test file of the run. */
  homework: string[];
  files: string[];
  hide: string[];
}

/** The folders of one grade under its private temp folder, and what the run needs from them. */
export interface GradeFolders {
  privateDir: string;
  gradeDir: string;
  sandbox: SandboxKind;
  token: string;
  /** The submission's copy (read-only in the sandbox). */
  copy: string;
  /** The test run's writable folder, and the import check's. */
  scratch: string;
  smokeScratch: string;
  fixtureRoot: string;
  runCwd: string;
  /** The resolution policy ($LAB_CONFINE). */
  confine: string;
  /** The TODO(...) markers of the copy, read before anything ran. */
  todoMarkers?: Set<string>;
  /** The test run's environment (nothing else of the grader's reaches it). */
  runEnv: Record<string, string>;
  /** The grade's control group (sandbox/cgroup.ts): every payload joins it; none where the machine allows none. */
  group?: GradeGroup;
}

/** A prepared grade, or why it cannot go on; `privateDir`, when made, is the caller's to remove. */
export type Prepared = { plan: GradePlan; privateDir?: string } & ({ folders: GradeFolders } | { refused: string });

export function randomSeed(): number {
  return randomBytes(4).readUInt32BE(0) >>> 1;
}

// Loads labs/<lab>/lab.ts (from the prebuilt grade command's own copy where it runs as one:
// grader/cli-bundle.mjs; it has no TypeScript loader).
export async function loadManifest(labId: string): Promise<{ manifest: LabManifest; labDir: string }> {
  const labDir = join(ROOT, "labs", labId);
  const file = join(labDir, "lab.ts");
  if (!existsSync(file)) throw new Error(`no lab manifest at ${relative(ROOT, file)}`);
  const prebuilt = (globalThis as Record<symbol, unknown>)[Symbol.for(MANIFESTS_KEY)] as Record<string, () => Promise<Record<string, unknown>>> | undefined;
  const load = prebuilt && Object.hasOwn(prebuilt, labId) ? prebuilt[labId] : undefined;
  const mod = load ? await load() : await import(pathToFileURL(file).href);
  return { manifest: (mod.lab ?? mod.default) as LabManifest, labDir };
}

// Stage 1 and 2 of a grade: the plan, the sandbox, the private folders and the copy.
// `sandboxFailed`: the sandbox could not be set up in an earlier attempt (auto falls back).
export async function prepareGrade(options: GradeOptions, started: number, sandboxFailed?: string): Promise<Prepared> {
  const plan = await planOf(options, started);
  const { lang, manifest, submission } = plan;
  if (!existsSync(submission)) return { plan, refused: t("missingFolder", lang, { dir: submission }) };
  if (!existsSync(join(submission, manifest.entry))) return { plan, refused: t("missingEntry", lang, { file: manifest.entry }) };
  if (sandboxFailed) noteSandboxFailed(sandboxFailed);
  const chosen = chooseSandbox(options.sandbox ?? "auto");
  if ("refused" in chosen) return { plan, refused: t("sandboxRequired", lang, { why: chosen.refused }) };
  // Everything of one grade lives in a private folder of the OS temp dir (never in the
  // project, which may be read-only).
  const privateDir = mkdtempSync(join(tmpdir(), "lab-grade-"));
  const token = randomBytes(12).toString("hex");
  const gradeDir = join(privateDir, "g");
  options.onRun?.({ token, gradeDir, privateDir });
  let copied: CopyOutcome;
  try {
    copied = makeCopy(submission, gradeDir);
  } catch (error) {
    return { plan, privateDir, refused: t("copyFailed", lang, { why: String((error as Error).message ?? error) }) };
  }
  if (!copied.ok) return { plan, privateDir, refused: copyRefusal(copied, lang) };
  plan.phases.copyMs = Date.now() - started;
  const folders = gradeFolders(plan, chosen.kind, privateDir, token);
  return { plan, privateDir, folders: { ...folders, todoMarkers: todoMarkers(folders.copy), runEnv: testRunEnv(plan, folders) } };
}

// Options, defaults and the lab's manifest.
async function planOf(options: GradeOptions, started: number): Promise<GradePlan> {
  const lang: Lang = options.lang ?? "zh";
  const seed = options.seed ?? randomSeed();
  const { manifest, labDir } = await loadManifest(options.lab ?? DEFAULT_LAB);
  const submission = resolve(options.submission ?? join(labDir, manifest.starter));
  const head: ResultHead = { lab: manifest.id, seed, lang, submission, startedAt: new Date(started).toISOString() };
  const homework = options.homework === false ? [] : homeworkFiles(labDir, manifest);
  const files = [...manifest.evidenceFiles, ...manifest.probeFiles, ...homework];
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const hangMs = options.hangMs ?? DEFAULT_HANG_MS;
  return { manifest, labDir, submission, lang, seed, deadlineMs, hangMs, testWorkers: options.testWorkers, head, started, phases: {}, homework, files, hide: await hiddenPaths() };
}

// `<private>/g` holds the submission's copy (read-only in the sandbox) and two writable
// scratch folders, one for the import check and one for the tests.
function gradeFolders(plan: GradePlan, sandbox: SandboxKind, privateDir: string, token: string): Omit<GradeFolders, "runEnv"> {
  const gradeDir = join(privateDir, "g");
  const copy = join(gradeDir, "submission");
  const scratch = makeScratch(join(gradeDir, "run"));
  const smokeScratch = makeScratch(join(gradeDir, "import"));
  for (const dir of SCRATCH_FOLDERS) makeScratch(join(scratch, dir));
  const confine = JSON.stringify({ copy, allow: plan.manifest.allowedPackages ?? [], root: ROOT, hide: plan.hide });
  return { privateDir, gradeDir, sandbox, token, copy, scratch, smokeScratch, fixtureRoot: join(scratch, "fixtures"), runCwd: join(scratch, "cwd"), confine };
}

// The grade folder with the submission's copy in it, readable by the sandbox's user.
export function makeCopy(submission: string, gradeDir: string): CopyOutcome {
  makeFolder(gradeDir);
  // The copy is ES modules, as it was inside the project (whose package.json says so).
  writeFileSync(join(gradeDir, "package.json"), `${JSON.stringify({ type: "module", private: true })}\n`, { mode: 0o644, flag: "wx" });
  return copySubmission(realpathSync(submission), join(gradeDir, "submission"));
}

let noticed = false;
let sharedRootNoticed = false;
let keysNoticed = false;
let setupFailed: string | undefined;
// A sandbox without lab-nokeys (no C compiler at install) leaves kernel keys shared between
// grades: said once per process, on stderr.
function noticeKeys<T>(chosen: T): T {
  if (!keysNoticed && !existsSync(NOKEYS)) {
    keysNoticed = true;
    process.stderr.write(`${t("sandboxKeysShared", "en", { binary: NOKEYS })}\n`);
  }
  return chosen;
}
// The sandbox to use for `mode`, or (required but unavailable) why there is none.
// `auto` without one says so once per process, on stderr.
export function chooseSandbox(mode: SandboxMode): { kind: SandboxKind } | { refused: string } {
  if (mode === "off") return { kind: "none" };
  const support = sandboxSupport();
  if (setupFailed && mode === "auto") return { kind: "none" };
  // As root the sandbox drops to an unprivileged uid, which must be able to reach the
  // project (a checkout under /root or a 0700 temp folder is not): there, keep the
  // namespaces and drop the capabilities instead (the user-namespace sandbox).
  // (There the payload is uid 0 outside, which the kernel exempts from RLIMIT_NPROC: said once.)
  if (support.kind === "root" && !reachableByOthers(ROOT)) {
    if (!sharedRootNoticed) {
      sharedRootNoticed = true;
      process.stderr.write(`${t("sandboxSharedRoot", "en", { root: ROOT })}\n`);
    }
    return noticeKeys({ kind: "user" });
  }
  if (support.kind !== "none") return noticeKeys({ kind: support.kind });
  if (mode === "required") return { refused: support.why };
  if (!noticed) {
    noticed = true;
    process.stderr.write(`${t("sandboxUnavailable", "en", { why: support.why })}\n`);
  }
  return { kind: "none" };
}

// The sandbox could not be set up (ns-init's report): `auto` grades without it from now on,
// said once on stderr.
function noteSandboxFailed(why: string): void {
  if (setupFailed) return;
  setupFailed = why;
  process.stderr.write(`${t("sandboxFallback", "en", { why })}\n`);
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

// A folder the payload may write. In the sandbox it is only the mount point of the scratch
// tmpfs, which is the payload's users' (each payload has users of its own: sandbox/ids.ts).
export function makeScratch(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  return dir;
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

// The environment of the test run (nothing else of the grader's environment reaches it).
function testRunEnv(plan: GradePlan, folders: Omit<GradeFolders, "runEnv">): Record<string, string> {
  const { lang, seed, hangMs, labDir, manifest } = plan;
  const { scratch, copy, fixtureRoot, sandbox } = folders;
  return {
    PATH: process.env.PATH ?? "",
    HOME: join(scratch, "home"),
    TMPDIR: join(scratch, "vitest-tmp"),
    // Where vitest's main process writes the gate's verdict for the client hosts (child/gate.ts).
    LAB_GATE_FILE: join(scratch, "vitest-tmp", "lab-gate"),
    LAB_WORKER_TMPDIR: sandbox === "none" ? tmpdir() : "/tmp",
    NODE_ENV: "test",
    FORCE_COLOR: "0",
    NO_COLOR: "1",
    CI: "1",
    LAB_SUBMISSION: copy,
    // The client under test runs in a host process of its own, never in a test worker.
    LAB_CLIENT_HOST: "1",
    LAB_RUN_FIRST: (manifest.runFirst ?? []).join(","),
    LAB_HOST_HEAP_MB: "512",
    LAB_VITEST_CONFIG: join(labDir, manifest.vitestConfig),
    LAB_CONFINE: folders.confine,
    LAB_VIOLATION_LOG: join(scratch, "violations.jsonl"),
    LAB_TEST_FILES: plan.files.join(","),
    LAB_LANG: lang,
    LAB_SEED: String(seed),
    LAB_HANG_MS: String(hangMs),
    // A diagnostic of the hang detectors for `npm run corpus:stress` (tests/support.ts): passed on only when set.
    ...(process.env.LAB_HANG_TRACE === "1" ? { LAB_HANG_TRACE: "1" } : {}),
    // (Read by vitest-overrides.ts; without it, its default.)
    ...(plan.testWorkers === undefined ? {} : { LAB_MAX_WORKERS: String(plan.testWorkers) }),
    LAB_HOMEWORK_TIMEOUT_MS: String(3 * hangMs),
    LAB_FIXTURE_ROOT: fixtureRoot,
    // Fixture servers as sessions of the test workers, behind a relay the client spawns
    // (fixtures/pool.mjs), wherever the relay was built: ~1 ms to start instead of a Node process.
    LAB_FIXTURE_POOL: "1",
    LAB_GRADE_CACHE_DIR: join(scratch, "cache"),
    [TOKEN_ENV]: folders.token,
  };
}
