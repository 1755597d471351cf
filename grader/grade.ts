// One grade, start to finish: copy the submission, preflight it (.only, types, import),
// run the lab's evidence tests, rubric probes and homework against the copy in a child
// vitest, then turn the JSON results, the fixture workspaces' records and a final process
// scan into a GradeResult. Everything the run started is dead when this resolves.

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { t } from "./i18n.ts";
import type { CheckStatus, LabManifest, Lang } from "./manifest.ts";
import { copySubmission, findOnly, importSmoke, typecheck } from "./preflight.ts";
import { commandLine, killAndWait, withCwdUnder, withEnvToken } from "./procs.ts";
import { buildChecks, readJson, type ProgressRecord, type StrayRecord, type VitestJson, type WorkspaceRecord } from "./results.ts";
import type { CheckResult, GradeResult } from "./result.ts";
import { todoMarkers, todoProgress } from "./report/progress.ts";
import { runVitest } from "./run-vitest.ts";
import { gradeConfigSource } from "./vitest-overrides.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

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
  /** Told the grade's private folders and process token before the run (tests check nothing outlives them). */
  onRun?: (info: { token: string; gradeDir: string; privateDir: string }) => void;
}

// Loads labs/<lab>/lab.ts.
export async function loadManifest(labId: string): Promise<{ manifest: LabManifest; labDir: string }> {
  const labDir = join(ROOT, "labs", labId);
  const file = join(labDir, "lab.ts");
  if (!existsSync(file)) throw new Error(`no lab manifest at ${relative(ROOT, file)}`);
  const mod = await import(pathToFileURL(file).href);
  return { manifest: (mod.lab ?? mod.default) as LabManifest, labDir };
}

export function randomSeed(): number {
  return randomBytes(4).readUInt32BE(0) >>> 1;
}

export async function grade(options: GradeOptions = {}): Promise<GradeResult> {
  const started = Date.now();
  const lang: Lang = options.lang ?? "zh";
  const seed = options.seed ?? randomSeed();
  const { manifest, labDir } = await loadManifest(options.lab ?? "33-mcp-lite");
  const submission = resolve(options.submission ?? join(labDir, manifest.starter));
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const hangMs = options.hangMs ?? DEFAULT_HANG_MS;

  const base: Omit<GradeResult, "status" | "score" | "maxScore" | "bonus" | "checks" | "durationMs"> = {
    version: 1,
    lab: manifest.id,
    seed,
    lang,
    submission,
    startedAt: new Date(started).toISOString(),
  };
  const couldNotGrade = (message: string, checks?: CheckResult[]): GradeResult => ({
    ...base,
    status: "error",
    score: 0,
    maxScore: maxScoreOf(manifest),
    bonus: { score: 0, maxScore: 0 },
    message,
    checks: checks ?? notRunChecks(manifest, lang, message),
    durationMs: Date.now() - started,
  });

  if (!existsSync(submission)) return couldNotGrade(t("missingFolder", lang, { dir: submission }));
  if (!existsSync(join(submission, manifest.entry))) return couldNotGrade(t("missingEntry", lang, { file: manifest.entry }));

  // The copy lives inside the project (so it resolves the project's node_modules and
  // package type); the results and logs live in a private temp dir of their own.
  mkdirSync(join(ROOT, ".grade"), { recursive: true });
  const gradeDir = mkdtempSync(join(ROOT, ".grade", "g-"));
  const privateDir = mkdtempSync(join(tmpdir(), "lab33-grade-"));
  const token = randomBytes(12).toString("hex");
  options.onRun?.({ token, gradeDir, privateDir });
  try {
    const copy = join(gradeDir, "submission");
    try {
      copySubmission(submission, copy);
    } catch (error) {
      return couldNotGrade(String((error as Error).message));
    }
    const only = findOnly(copy);
    if (only.length > 0) return couldNotGrade(t("onlyRefused", lang, { where: only.slice(0, 3).join(", ") }));
    const fixtureRoot = join(privateDir, "fixtures");
    mkdirSync(fixtureRoot);
    const resultsDir = mkdtempSync(join(privateDir, `${randomBytes(8).toString("hex")}-`));
    const outputFile = join(resultsDir, `${randomBytes(8).toString("hex")}.json`);
    const workspaceLog = join(privateDir, "workspaces.jsonl");
    const strayLog = join(privateDir, "strays.jsonl");
    const progressFile = join(privateDir, "progress.jsonl");
    const configFile = join(gradeDir, "vitest.grade.config.ts");
    writeFileSync(configFile, gradeConfigSource(join(labDir, manifest.vitestConfig)));

    // The type check and the import smoke test run alongside the tests: on this kind of
    // machine that saves most of a second, and a failed preflight simply kills the run.
    const preflight = Promise.all([
      typecheck(ROOT, gradeDir, copy, manifest, lang),
      importSmoke(ROOT, gradeDir, copy, manifest, lang),
    ]).then(([types, smoke]) => (!types.ok ? types : smoke));
    const stopRun = new AbortController();
    void preflight.then((verdict) => {
      if (!verdict.ok) stopRun.abort();
    });

    const homework = options.homework === false ? [] : homeworkFiles(labDir, manifest);
    const files = [...manifest.evidenceFiles, ...manifest.probeFiles, ...homework];
    // The tests run from a private, empty directory: every process the submission starts
    // inherits it, which is how a daemon that escaped the process tree is still found.
    const runCwd = mkdtempSync(join(privateDir, "cwd-"));
    const run = await runVitest({
      root: ROOT,
      cwd: runCwd,
      configFile,
      reporters: ["json", join(ROOT, "grader", "child", "progress-reporter.ts")],
      outputFile,
      deadlineMs,
      signal: stopRun.signal,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? privateDir,
        NODE_ENV: "test",
        FORCE_COLOR: "0",
        NO_COLOR: "1",
        CI: "1",
        LAB_SUBMISSION: copy,
        LAB_TEST_FILES: files.join(","),
        LAB_LANG: lang,
        LAB_SEED: String(seed),
        LAB_HANG_MS: String(hangMs),
        LAB_HOMEWORK_TIMEOUT_MS: String(3 * hangMs),
        // One worker per file: the tests mostly wait on timers and pipes, not on the CPU.
        LAB_MAX_WORKERS: String(Math.min(files.length, 12)),
        LAB_FIXTURE_ROOT: fixtureRoot,
        LAB_WORKSPACE_LOG: workspaceLog,
        LAB_STRAY_LOG: strayLog,
        LAB_PROGRESS_FILE: progressFile,
        LAB_GRADE_CACHE_DIR: join(gradeDir, "cache"),
        [TOKEN_ENV]: token,
      },
    });

    const verdict = await preflight;

    // Leftovers: what outlived vitest in its tree, anything carrying the grade's token or
    // running in the grade's directory, and any pid a fixture recorded that is still alive.
    const survivors = new Map<number, string>();
    for (const p of run.leftovers) survivors.set(p.pid, commandLine(p.pid));
    for (const p of withEnvToken(TOKEN_ENV, token)) survivors.set(p.pid, commandLine(p.pid));
    for (const p of withCwdUnder(runCwd)) survivors.set(p.pid, commandLine(p.pid));
    for (const pid of recordedPids(fixtureRoot)) if (isLivePid(pid)) survivors.set(pid, commandLine(pid));
    await killAndWait(survivors.keys());

    if (!verdict.ok) return couldNotGrade(verdict.message);

    const workspaces = readJsonLines<WorkspaceRecord>(workspaceLog);
    const strays = readJsonLines<StrayRecord>(strayLog);
    const progress = readJsonLines<ProgressRecord>(progressFile);
    const json = readJson<VitestJson>(outputFile);

    const built = buildChecks({
      manifest,
      lang,
      labDir,
      json,
      run,
      progress,
      workspaces,
      strays,
      survivors: [...survivors].map(([pid, command]) => ({ pid, command })),
      deadlineMs,
      homeworkFiles: homework,
    });
    const graded = built.checks.filter((c) => c.kind !== "homework");
    const homeworkChecks = built.checks.filter((c) => c.kind === "homework");
    const status: CheckStatus = built.error ? "error" : graded.every((c) => c.status === "pass") ? "pass" : graded.some((c) => c.status === "error") ? "error" : "fail";
    const result: GradeResult = {
      ...base,
      status,
      score: graded.reduce((sum, c) => sum + c.score, 0),
      maxScore: maxScoreOf(manifest),
      bonus: {
        score: homeworkChecks.reduce((sum, c) => sum + c.score, 0),
        maxScore: homeworkChecks.reduce((sum, c) => sum + c.maxScore, 0),
      },
      checks: built.checks,
      durationMs: Date.now() - started,
    };
    if (status === "error") result.message = built.error ?? graded.find((c) => c.status === "error")?.message ?? "";
    if (manifest.todos) result.todos = todoProgress(manifest.todos, built.checks, lang, todoMarkers(submission));
    return result;
  } finally {
    if (!options.keep) {
      rmSync(gradeDir, { recursive: true, force: true });
      rmSync(privateDir, { recursive: true, force: true });
    }
  }
}

export function maxScoreOf(manifest: LabManifest): number {
  return manifest.checks.reduce((sum, c) => sum + c.weight, 0);
}

// Every graded check of the lab, each as an error with this message (nothing could run).
export function notRunChecks(manifest: LabManifest, lang: Lang, message: string): CheckResult[] {
  return manifest.checks.map((c) => ({
    id: c.id,
    kind: c.kind,
    status: "error" as const,
    score: 0,
    maxScore: c.weight,
    message,
    title: c.title[lang],
    standard: c.standard[lang],
    deduction: c.deduction[lang],
    tests: [],
  }));
}

// The homework test files present right now (relative to the lab folder).
function homeworkFiles(labDir: string, manifest: LabManifest): string[] {
  const dir = join(labDir, manifest.homeworkDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".test.ts"))
    .sort()
    .map((name) => `${manifest.homeworkDir}/${name}`);
}

function readJsonLines<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  const out: T[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A torn line from a killed writer.
    }
  }
  return out;
}

// Pids in every pid file left under the fixture root (workspaces whose cleanup never ran).
function recordedPids(fixtureRoot: string): number[] {
  const pids: number[] = [];
  if (!existsSync(fixtureRoot)) return pids;
  for (const dir of readdirSync(fixtureRoot)) {
    const file = join(fixtureRoot, dir, "pids.txt");
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const pid = Number(line.trim());
      if (Number.isInteger(pid) && pid > 0) pids.push(pid);
    }
  }
  return pids;
}

function isLivePid(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}
