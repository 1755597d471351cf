// One grade, start to finish: copy the submission to a private folder of the OS temp dir,
// preflight it (.only, types, and an import check in the sandbox), run the lab's evidence
// tests, rubric probes and homework against the copy in a sandboxed vitest, then turn the
// records of the signed result channel, the fixture workspaces' records and what was left
// alive into a GradeResult. Everything the run started is dead when this resolves.

import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildChecks, type ProgressRecord, type StrayRecord, type WorkspaceRecord } from "./build-checks.ts";
import { chooseSandbox, copyIntoGradeFolders, hiddenPaths, homeworkFiles, loadManifest, makeCopy, makeScratch, ROOT, type GradeFolders } from "./grade-folders.ts";
import { couldNotGrade, type CheckResult, type GradeResult, type ResultHead } from "./grade-result.ts";
import { t } from "./i18n.ts";
import { DEFAULT_LAB, maxScoreOf, type CheckStatus, type LabManifest, type Lang } from "./manifest.ts";
import { findOnly, importSmoke, readViolations, typecheck, violationMessage, type Preflight } from "./preflight.ts";
import { commandLine, isPidAlive, killAndWait, withCwdUnder, withEnvToken } from "./procs.ts";
import { todoMarkers, todoProgress } from "./report/progress.ts";
import { buildHostBundle } from "./host-bundle.ts";
import { leftoverRecords, recordedPids, resultsFromRecords } from "./run-records.ts";
import { runVitest, type VitestRun } from "./run-vitest.ts";
import type { SandboxKind, SandboxMode } from "./sandbox/index.ts";

export { chooseSandbox, hiddenPaths, loadManifest, ROOT } from "./grade-folders.ts";

/** Default overall deadline of one grade, in ms. */
export const DEFAULT_DEADLINE_MS = 90_000;
/** Default hang-detector deadline passed to the tests (LAB_HANG_MS), in ms. */
export const DEFAULT_HANG_MS = 2_000;
/** Env var carrying the grade's random token; any process still carrying it at the end is a leftover. */
export const TOKEN_ENV = "LAB33_GRADE_TOKEN";

export interface GradeOptions {
  lab?: string;
  /** Folder to grade; default: the lab's starter. */
  submission?: string;
  seed?: number;
  lang?: Lang;
  deadlineMs?: number;
  hangMs?: number;
  /** Keep the grade's temp folders (for debugging). */
  keep?: boolean;
  /** Run the homework bonus tests too (default true). */
  homework?: boolean;
  /** OS sandbox: required, auto (default: use it where the machine allows, say so once where not) or off. */
  sandbox?: SandboxMode;
  /** Told the grade's private folders and process token before the run (tests check nothing outlives them). */
  onRun?: (info: { token: string; gradeDir: string; privateDir: string }) => void;
}

export function randomSeed(): number {
  return randomBytes(4).readUInt32BE(0) >>> 1;
}

/** What one grade works with, fixed before anything runs. */
interface GradeSetup {
  manifest: LabManifest;
  labDir: string;
  submission: string;
  lang: Lang;
  seed: number;
  deadlineMs: number;
  hangMs: number;
  head: ResultHead;
  started: number;
  /** When each phase ended, in ms since the start. */
  phases: Record<string, number>;
}

export async function grade(options: GradeOptions = {}): Promise<GradeResult> {
  const setup = await setUp(options);
  const { lang, manifest, submission } = setup;
  const fail = (message: string) => couldNotGradeNow(setup, message);
  if (!existsSync(submission)) return fail(t("missingFolder", lang, { dir: submission }));
  if (!existsSync(join(submission, manifest.entry))) return fail(t("missingEntry", lang, { file: manifest.entry }));
  const chosen = chooseSandbox(options.sandbox ?? "auto");
  if ("refused" in chosen) return fail(t("sandboxRequired", lang, { why: chosen.refused }));
  // Everything of one grade lives in a private folder of the OS temp dir (never in the
  // project, which may be read-only).
  const privateDir = mkdtempSync(join(tmpdir(), "lab-grade-"));
  const token = randomBytes(12).toString("hex");
  options.onRun?.({ token, gradeDir: join(privateDir, "g"), privateDir });
  try {
    return await gradeCopy(setup, options, chosen.kind, privateDir, token);
  } finally {
    if (!options.keep) rmSync(privateDir, { recursive: true, force: true });
  }
}

// Options, defaults and the lab's manifest: what the grade works with.
async function setUp(options: GradeOptions): Promise<GradeSetup> {
  const started = Date.now();
  const lang: Lang = options.lang ?? "zh";
  const seed = options.seed ?? randomSeed();
  const { manifest, labDir } = await loadManifest(options.lab ?? DEFAULT_LAB);
  const submission = resolve(options.submission ?? join(labDir, manifest.starter));
  const head: ResultHead = { lab: manifest.id, seed, lang, submission, startedAt: new Date(started).toISOString() };
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  return { manifest, labDir, submission, lang, seed, deadlineMs, hangMs: options.hangMs ?? DEFAULT_HANG_MS, head, started, phases: {} };
}

function couldNotGradeNow(setup: GradeSetup, message: string): GradeResult {
  const durationMs = Date.now() - setup.started;
  return couldNotGrade(setup.head, setup.manifest, message, { durationMs, phases: { ...setup.phases, totalMs: durationMs } });
}

// Copies the submission, preflights it alongside the test run, and grades what the run left.
async function gradeCopy(setup: GradeSetup, options: GradeOptions, sandbox: SandboxKind, privateDir: string, token: string): Promise<GradeResult> {
  const { lang, manifest, labDir, started, phases } = setup;
  const fail = (message: string) => couldNotGradeNow(setup, message);
  let folders: GradeFolders;
  try {
    folders = copyIntoGradeFolders(setup.submission, join(privateDir, "g"), sandbox);
  } catch (error) {
    return fail(String((error as Error).message));
  }
  phases.copyMs = Date.now() - started;
  const only = findOnly(folders.copy);
  if (only.length > 0) return fail(t("onlyRefused", lang, { where: only.slice(0, 3).join(", ") }));
  const hostBundle = await buildHostBundle(labDir, folders.copy, manifest.entry);
  const hide = await hiddenPaths();
  const confine = JSON.stringify({ copy: folders.copy, allow: manifest.allowedPackages ?? [], root: ROOT, hide });
  const checks = startPreflight(setup, folders, sandbox, hide, confine);
  const homework = options.homework === false ? [] : homeworkFiles(labDir, manifest);
  const files = [...manifest.evidenceFiles, ...manifest.probeFiles, ...homework];
  const run = await runVitest({
    root: ROOT,
    cwd: folders.runCwd,
    configFile: join(ROOT, "grader", "vitest.grade.config.ts"),
    reporters: [join(ROOT, "grader", "child", "progress-reporter.ts")],
    deadlineMs: setup.deadlineMs,
    signal: checks.stopRun.signal,
    gate: checks.smoke.then(
      (s) => s.verdict.ok,
      () => false,
    ),
    sandbox,
    hide,
    gradeDir: folders.gradeDir,
    scratch: folders.scratch,
    env: { ...testRunEnv(setup, folders, sandbox, confine, files, token), ...(hostBundle ? { LAB_HOST_HARNESS: hostBundle.harness, LAB_HOST_SUBMISSION: hostBundle.submission } : {}) },
  });
  phases.testsEndMs = Date.now() - started;
  const verdict = await checks.preflight;
  const smokeOutcome = await checks.smoke;
  const survivors = await leftoverProcesses(run, sandbox, token, folders);
  const refusal = refusalOf(run, verdict, folders.violationLog, lang);
  if (refusal) return fail(refusal);
  const smokeLeft = smokeOutcome.leftovers.map((p) => ({ pid: p.pid, command: `${p.command} [${t("importCheckTag", lang)}]` }));
  return resultOf(setup, checksOfRun(setup, folders, run, { survivors: [...survivors, ...smokeLeft], homework, files }));
}

// The checks, from the run's channel records and the logs it left in the scratch folder.
function checksOfRun(setup: GradeSetup, folders: GradeFolders, run: VitestRun, more: { survivors: Array<{ pid: number; command: string }>; homework: string[]; files: string[] }) {
  return buildChecks({
    manifest: setup.manifest,
    lang: setup.lang,
    labDir: setup.labDir,
    json: resultsFromRecords(run.records),
    run,
    progress: run.records.filter((r) => r.event === "start" || r.event === "end" || r.event === "unhandled") as unknown as ProgressRecord[],
    workspaces: leftoverRecords<WorkspaceRecord>(run.records, "workspaces"),
    strays: leftoverRecords<StrayRecord>(run.records, "strays"),
    survivors: more.survivors,
    deadlineMs: setup.deadlineMs,
    homeworkFiles: more.homework,
    testFiles: more.files,
  });
}

// The type check and the import check run alongside the tests: on this kind of machine that
// saves most of a second, and a failed preflight simply kills the run (stopRun).
function startPreflight(setup: GradeSetup, folders: GradeFolders, sandbox: SandboxKind, hide: string[], confine: string) {
  const { lang, manifest, started, phases } = setup;
  const timed = <T>(name: string, work: Promise<T>): Promise<T> =>
    work.then((value) => {
      phases[name] = Date.now() - started;
      return value;
    });
  const { copy, gradeDir } = folders;
  const smoke = timed("importCheckEndMs", importSmoke({ root: ROOT, copy, manifest, lang, sandbox, hide, gradeDir, scratch: folders.smokeScratch, confine }));
  const types = timed("typecheckEndMs", typecheck(ROOT, gradeDir, copy, manifest, lang));
  const preflight = Promise.all([types, smoke]).then(([typed, s]) => (s.refused || typed.ok ? s.verdict : typed));
  const stopRun = new AbortController();
  void preflight.then((verdict) => {
    if (!verdict.ok) stopRun.abort();
  });
  return { smoke, preflight, stopRun };
}

// The environment of the test run (nothing else of the grader's environment reaches it).
function testRunEnv(setup: GradeSetup, folders: GradeFolders, sandbox: SandboxKind, confine: string, files: string[], token: string): Record<string, string> {
  const { lang, seed, hangMs, labDir, manifest } = setup;
  const { scratch, copy, violationLog, fixtureRoot } = folders;
  return {
    PATH: process.env.PATH ?? "",
    HOME: join(scratch, "home"),
    TMPDIR: join(scratch, "vitest-tmp"),
    LAB_WORKER_TMPDIR: sandbox === "none" ? tmpdir() : "/tmp",
    NODE_ENV: "test",
    FORCE_COLOR: "0",
    NO_COLOR: "1",
    CI: "1",
    LAB_SUBMISSION: copy,
    // The client under test runs in a host process of its own, never in a test worker.
    LAB_CLIENT_HOST: "1",
    LAB_HOST_HEAP_MB: "512",
    LAB_VITEST_CONFIG: join(labDir, manifest.vitestConfig),
    LAB_CONFINE: confine,
    LAB_VIOLATION_LOG: violationLog,
    LAB_TEST_FILES: files.join(","),
    LAB_LANG: lang,
    LAB_SEED: String(seed),
    LAB_HANG_MS: String(hangMs),
    LAB_HOMEWORK_TIMEOUT_MS: String(3 * hangMs),
    LAB_FIXTURE_ROOT: fixtureRoot,
    LAB_GRADE_CACHE_DIR: join(scratch, "cache"),
    [TOKEN_ENV]: token,
  };
}

// Leftovers: what outlived vitest (in the sandbox: what ns-init saw alive; the kernel kills the
// rest of the namespace with it, and when the run was stopped at the deadline it may still be
// doing so: what carries the grade's token is waited for, not counted). Without a sandbox also
// anything carrying the grade's token or running in the grade's directory, and any pid a
// fixture recorded that is still alive; those are killed.
async function leftoverProcesses(run: VitestRun, sandbox: SandboxKind, token: string, folders: GradeFolders): Promise<Array<{ pid: number; command: string }>> {
  const survivors = new Map<number, string>();
  for (const p of run.leftovers) survivors.set(p.pid, p.command ?? commandLine(p.pid));
  if (sandbox === "none") {
    for (const p of withEnvToken(TOKEN_ENV, token)) survivors.set(p.pid, commandLine(p.pid));
    for (const p of withCwdUnder(folders.runCwd)) survivors.set(p.pid, commandLine(p.pid));
    for (const pid of recordedPids(folders.fixtureRoot)) if (isPidAlive(pid)) survivors.set(pid, commandLine(pid));
    await killAndWait([...survivors.keys()]);
  } else {
    await killAndWait(withEnvToken(TOKEN_ENV, token).map((p) => p.pid));
  }
  return [...survivors].map(([pid, command]) => ({ pid: Number(pid), command }));
}

// Why the run's results cannot be used at all, if they cannot: the sandbox failed, the
// preflight refused the submission, the channel was tampered with, an import was refused.
function refusalOf(run: VitestRun, verdict: Preflight, violationLog: string, lang: Lang): string | undefined {
  if (run.sandboxError) return t("sandboxFailed", lang, { why: run.sandboxError.split("\n")[0] });
  if (!verdict.ok) return verdict.message;
  if (run.tampered) return t("channelTampered", lang, { why: run.tampered });
  const violations = [
    ...run.records.filter((r) => r.event === "violation").map((r) => ({ where: String(r.where), spec: String(r.spec) })),
    ...readViolations(violationLog),
  ];
  return violations.length > 0 ? violationMessage(violations, lang) : undefined;
}

// The grade from its checks: pass only when every graded check passes; an error scores nothing.
function resultOf(setup: GradeSetup, built: { checks: CheckResult[]; error?: string }): GradeResult {
  const graded = built.checks.filter((c) => c.kind !== "homework");
  const homeworkChecks = built.checks.filter((c) => c.kind === "homework");
  const status: CheckStatus = built.error ? "error" : graded.every((c) => c.status === "pass") ? "pass" : graded.some((c) => c.status === "error") ? "error" : "fail";
  const durationMs = Date.now() - setup.started;
  const result: GradeResult = {
    version: 1,
    ...setup.head,
    status,
    // A grade that could not be finished scores nothing: its passes cannot be trusted.
    score: status === "error" ? 0 : graded.reduce((sum, c) => sum + c.score, 0),
    maxScore: maxScoreOf(setup.manifest),
    bonus: {
      score: status === "error" ? 0 : homeworkChecks.reduce((sum, c) => sum + c.score, 0),
      maxScore: homeworkChecks.reduce((sum, c) => sum + c.maxScore, 0),
    },
    checks: built.checks,
    durationMs,
    phases: { ...setup.phases, totalMs: durationMs },
  };
  if (status === "error") result.message = built.error ?? graded.find((c) => c.status === "error")?.message ?? "";
  if (setup.manifest.todos) result.todos = todoProgress(setup.manifest.todos, built.checks, setup.lang, todoMarkers(setup.submission));
  return result;
}

// The grader's import check alone, for the learner's loop and tests: copies `submission`
// into a private temp folder, imports its entry in the sandbox (where there is one) under
// the same resolution confinement as a grade, and removes everything again.
export async function importCheck(submission: string, manifest: LabManifest, lang: Lang, mode: SandboxMode = "auto"): Promise<Preflight> {
  const chosen = chooseSandbox(mode);
  if ("refused" in chosen) return { ok: false, message: t("sandboxRequired", lang, { why: chosen.refused }) };
  const sandbox = chosen.kind;
  const privateDir = mkdtempSync(join(tmpdir(), "lab-import-"));
  try {
    const gradeDir = join(privateDir, "g");
    const copy = makeCopy(resolve(submission), gradeDir);
    const scratch = makeScratch(join(gradeDir, "import"), sandbox);
    const hide = await hiddenPaths();
    const confine = JSON.stringify({ copy, allow: manifest.allowedPackages ?? [], root: ROOT, hide });
    const outcome = await importSmoke({ root: ROOT, copy, manifest, lang, sandbox, hide, gradeDir, scratch, confine });
    return outcome.verdict;
  } finally {
    rmSync(privateDir, { recursive: true, force: true });
  }
}
