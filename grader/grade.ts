// One grade, start to finish: copy the submission to a private folder of the OS temp dir,
// preflight it (.only, types, and an import check in the sandbox), run the lab's evidence
// tests, rubric probes and homework against the copy in a sandboxed vitest, then turn the
// records of the signed result channel, the fixture workspaces' records and what was left
// alive into a GradeResult. Everything the run started is dead when this resolves.

import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { t } from "./i18n.ts";
import type { CheckStatus, LabManifest, Lang } from "./manifest.ts";
import { copySubmission, findOnly, importSmoke, readViolations, typecheck, violationMessage, type Preflight } from "./preflight.ts";
import { commandLine, killAndWait, withCwdUnder, withEnvToken } from "./procs.ts";
import { buildChecks, type ProgressRecord, type StrayRecord, type VitestJson, type WorkspaceRecord } from "./results.ts";
import type { CheckResult, GradeResult } from "./result.ts";
import { todoMarkers, todoProgress } from "./report/progress.ts";
import { runVitest } from "./run-vitest.ts";
import { SANDBOX_UID, sandboxSupport, type SandboxKind, type SandboxMode } from "./sandbox/index.ts";

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
  /** OS sandbox: required, auto (default: use it where the machine allows, say so once where not) or off. */
  sandbox?: SandboxMode;
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
  const phases: Record<string, number> = {};
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
    phases: { ...phases, totalMs: Date.now() - started },
  });

  if (!existsSync(submission)) return couldNotGrade(t("missingFolder", lang, { dir: submission }));
  if (!existsSync(join(submission, manifest.entry))) return couldNotGrade(t("missingEntry", lang, { file: manifest.entry }));
  const chosen = chooseSandbox(options.sandbox ?? "auto");
  if ("refused" in chosen) return couldNotGrade(t("sandboxRequired", lang, { why: chosen.refused }));
  const sandbox = chosen.kind;

  // Everything of one grade lives in a private folder of the OS temp dir (never in the
  // project, which may be read-only): `<top>/g` holds the submission's copy (read-only in the
  // sandbox) and two writable scratch folders, one for the import check and one for the tests.
  const privateDir = mkdtempSync(join(tmpdir(), "lab-grade-"));
  const gradeDir = join(privateDir, "g");
  const token = randomBytes(12).toString("hex");
  options.onRun?.({ token, gradeDir, privateDir });
  try {
    mkdirSync(gradeDir, { mode: 0o755 });
    chmodSync(gradeDir, 0o755);
    // The copy is ES modules, as it was inside the project (whose package.json says so).
    writeFileSync(join(gradeDir, "package.json"), `${JSON.stringify({ type: "module", private: true })}\n`);
    const copy = join(gradeDir, "submission");
    try {
      copySubmission(submission, copy);
      readableByAll(copy);
    } catch (error) {
      return couldNotGrade(String((error as Error).message));
    }
    phases.copyMs = Date.now() - started;
    const only = findOnly(copy);
    if (only.length > 0) return couldNotGrade(t("onlyRefused", lang, { where: only.slice(0, 3).join(", ") }));
    const scratch = makeScratch(join(gradeDir, "run"), sandbox);
    const smokeScratch = makeScratch(join(gradeDir, "import"), sandbox);
    for (const dir of ["fixtures", "cache", "cwd", "home", "vitest-tmp"]) makeScratch(join(scratch, dir), sandbox);
    const fixtureRoot = join(scratch, "fixtures");
    const runCwd = join(scratch, "cwd");
    const hide = await hiddenPaths();
    const confine = JSON.stringify({ copy, allow: manifest.allowedPackages ?? [], root: ROOT, hide });

    // The type check and the import check run alongside the tests: on this kind of machine
    // that saves most of a second, and a failed preflight simply kills the run.
    const timed = <T>(name: string, work: Promise<T>): Promise<T> =>
      work.then((value) => {
        phases[name] = Date.now() - started;
        return value;
      });
    const smoke = timed("importCheckEndMs", importSmoke({ root: ROOT, copy, manifest, lang, sandbox, hide, gradeDir, scratch: smokeScratch, confine }));
    const preflight = Promise.all([timed("typecheckEndMs", typecheck(ROOT, gradeDir, copy, manifest, lang)), smoke]).then(([types, s]) => (s.refused || types.ok ? s.verdict : types));
    const stopRun = new AbortController();
    void preflight.then((verdict) => {
      if (!verdict.ok) stopRun.abort();
    });

    const homework = options.homework === false ? [] : homeworkFiles(labDir, manifest);
    const files = [...manifest.evidenceFiles, ...manifest.probeFiles, ...homework];
    const violationLog = join(scratch, "violations.jsonl");
    const run = await runVitest({
      root: ROOT,
      cwd: runCwd,
      configFile: join(ROOT, "grader", "vitest.grade.config.ts"),
      reporters: [join(ROOT, "grader", "child", "progress-reporter.ts")],
      deadlineMs,
      signal: stopRun.signal,
      gate: smoke.then(
        (s) => s.verdict.ok,
        () => false,
      ),
      sandbox,
      hide,
      gradeDir,
      scratch,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: join(scratch, "home"),
        TMPDIR: join(scratch, "vitest-tmp"),
        LAB_WORKER_TMPDIR: sandbox === "none" ? tmpdir() : "/tmp",
        NODE_ENV: "test",
        FORCE_COLOR: "0",
        NO_COLOR: "1",
        CI: "1",
        LAB_SUBMISSION: copy,
        LAB_VITEST_CONFIG: join(labDir, manifest.vitestConfig),
        LAB_CONFINE: confine,
        LAB_VIOLATION_LOG: violationLog,
        LAB_TEST_FILES: files.join(","),
        LAB_LANG: lang,
        LAB_SEED: String(seed),
        LAB_HANG_MS: String(hangMs),
        LAB_HOMEWORK_TIMEOUT_MS: String(3 * hangMs),
        LAB_FIXTURE_ROOT: fixtureRoot,
        LAB_WORKSPACE_LOG: join(scratch, "workspaces.jsonl"),
        LAB_STRAY_LOG: join(scratch, "strays.jsonl"),
        LAB_GRADE_CACHE_DIR: join(scratch, "cache"),
        [TOKEN_ENV]: token,
      },
    });
    phases.testsEndMs = Date.now() - started;

    const verdict = await preflight;
    const smokeOutcome = await smoke;

    // Leftovers: what outlived vitest (in the sandbox: what ns-init saw alive; everything in
    // it is dead now). Without a sandbox also anything carrying the grade's token or running
    // in the grade's directory, and any pid a fixture recorded that is still alive.
    const survivors = new Map<number | string, string>();
    for (const p of run.leftovers) survivors.set(p.pid, p.command ?? commandLine(p.pid));
    if (sandbox === "none") {
      for (const p of withEnvToken(TOKEN_ENV, token)) survivors.set(p.pid, commandLine(p.pid));
      for (const p of withCwdUnder(runCwd)) survivors.set(p.pid, commandLine(p.pid));
      for (const pid of recordedPids(fixtureRoot)) if (isLivePid(pid)) survivors.set(pid, commandLine(pid));
      await killAndWait([...survivors.keys()].filter((k): k is number => typeof k === "number"));
    }

    if (run.sandboxError) return couldNotGrade(t("sandboxFailed", lang, { why: run.sandboxError.split("\n")[0] }));
    if (!verdict.ok) return couldNotGrade(verdict.message);
    if (run.tampered) return couldNotGrade(t("channelTampered", lang, { why: run.tampered }));
    const violations = [
      ...run.records.filter((r) => r.event === "violation").map((r) => ({ where: String(r.where), spec: String(r.spec) })),
      ...readViolations(violationLog),
    ];
    if (violations.length > 0) return couldNotGrade(violationMessage(violations, lang));

    const workspaces = readJsonLines<WorkspaceRecord>(join(scratch, "workspaces.jsonl"));
    const strays = readJsonLines<StrayRecord>(join(scratch, "strays.jsonl"));
    const progress = run.records.filter((r) => r.event === "start" || r.event === "end" || r.event === "unhandled") as unknown as ProgressRecord[];
    const json = resultsFromRecords(run.records);
    const survivorList = [...survivors].map(([pid, command]) => ({ pid: Number(pid), command }));
    const smokeLeft = smokeOutcome.leftovers.map((p) => ({ pid: p.pid, command: `${p.command} [${t("importCheckTag", lang)}]` }));

    const built = buildChecks({
      manifest,
      lang,
      labDir,
      json,
      run,
      progress,
      workspaces,
      strays,
      survivors: [...survivorList, ...smokeLeft],
      deadlineMs,
      homeworkFiles: homework,
      testFiles: files,
    });
    const graded = built.checks.filter((c) => c.kind !== "homework");
    const homeworkChecks = built.checks.filter((c) => c.kind === "homework");
    const status: CheckStatus = built.error ? "error" : graded.every((c) => c.status === "pass") ? "pass" : graded.some((c) => c.status === "error") ? "error" : "fail";
    const result: GradeResult = {
      ...base,
      status,
      // A grade that could not be finished scores nothing: its passes cannot be trusted.
      score: status === "error" ? 0 : graded.reduce((sum, c) => sum + c.score, 0),
      maxScore: maxScoreOf(manifest),
      bonus: {
        score: status === "error" ? 0 : homeworkChecks.reduce((sum, c) => sum + c.score, 0),
        maxScore: homeworkChecks.reduce((sum, c) => sum + c.maxScore, 0),
      },
      checks: built.checks,
      durationMs: Date.now() - started,
      phases: { ...phases, totalMs: Date.now() - started },
    };
    if (status === "error") result.message = built.error ?? graded.find((c) => c.status === "error")?.message ?? "";
    if (manifest.todos) result.todos = todoProgress(manifest.todos, built.checks, lang, todoMarkers(submission));
    return result;
  } finally {
    if (!options.keep) rmSync(privateDir, { recursive: true, force: true });
  }
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
    mkdirSync(gradeDir, { mode: 0o755 });
    chmodSync(gradeDir, 0o755);
    writeFileSync(join(gradeDir, "package.json"), `${JSON.stringify({ type: "module", private: true })}\n`);
    const copy = join(gradeDir, "submission");
    copySubmission(resolve(submission), copy);
    readableByAll(copy);
    const scratch = makeScratch(join(gradeDir, "import"), sandbox);
    const hide = await hiddenPaths();
    const confine = JSON.stringify({ copy, allow: manifest.allowedPackages ?? [], root: ROOT, hide });
    const outcome = await importSmoke({ root: ROOT, copy, manifest, lang, sandbox, hide, gradeDir, scratch, confine });
    return outcome.verdict;
  } finally {
    rmSync(privateDir, { recursive: true, force: true });
  }
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
function makeScratch(dir: string, sandbox: SandboxKind): string {
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

// vitest's results, rebuilt from the channel's "file" records (undefined unless the run
// reached its end: "done").
export function resultsFromRecords(records: Array<Record<string, unknown>>): VitestJson | undefined {
  if (!records.some((r) => r.event === "done")) return undefined;
  const status = (state: unknown) => (state === "passed" ? "passed" : state === "failed" ? "failed" : state === "skipped" ? "skipped" : "pending");
  const testResults = records
    .filter((r) => r.event === "file")
    .map((r) => {
      const tests = (r.tests as Array<{ ancestors: string[]; title: string; state: string; duration: number | null; errors: string[] }>) ?? [];
      const errors = (r.errors as string[]) ?? [];
      return {
        name: String(r.file),
        // "pending" after the run ended: the file's worker died before finishing it.
        status: r.state === "passed" ? "passed" : r.state === "failed" || r.state === "skipped" ? "failed" : "crashed",
        message: errors[0] ?? "",
        assertionResults: tests.map((x) => ({
          ancestorTitles: x.ancestors,
          title: x.title,
          fullName: [...x.ancestors, x.title].join(" "),
          status: status(x.state) as VitestJson["testResults"][number]["assertionResults"][number]["status"],
          duration: x.duration,
          failureMessages: x.errors,
        })),
      };
    });
  return { numTotalTests: testResults.reduce((n, f) => n + f.assertionResults.length, 0), success: testResults.every((f) => f.status === "passed"), testResults };
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
