// One grade, start to finish, as a straight line of stages, each in a module of its own and
// each entered once: the plan, folders and copy (grade-folders.ts), the checks before running
// (preflight.ts, alongside the tests), the sandboxed test run (run-vitest.ts), what it left
// behind read back without trusting it (run-records.ts), the checks (build-checks.ts) and the
// result (grade-result.ts). Everything the run started is dead, and its folders are gone,
// when this resolves; it never throws for anything a submission did.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildChecks } from "./build-checks.ts";
import { copyRefusal } from "./copy-submission.ts";
import { chooseSandbox, hiddenPaths, makeCopy, makeScratch, prepareGrade, ROOT, RUN_RECORDS, SCRATCH_FOLDERS, type GradeFolders, type GradeOptions, type GradePlan } from "./grade-folders.ts";
import { couldNotGrade, gradeResult, type GradeResult } from "./grade-result.ts";
import { t } from "./i18n.ts";
import type { LabManifest, Lang } from "./manifest.ts";
import { importSmoke, startPreflight, type Preflight, type PreflightRun } from "./preflight.ts";
import { collectRunRecords } from "./run-records.ts";
import { runVitest } from "./run-vitest.ts";
import { buildHostBundle, plannedHostBundle, type HostBundle } from "./host-bundle.ts";
import { readyMirror } from "./harness-mirror.mjs";
import { removeTree } from "./safe-fs.mjs";
import type { SandboxKind, SandboxMode } from "./sandbox/index.ts";
import { DEFAULT_GRADE_MEMORY_MB, makeGradeGroup, type GradeGroup } from "./sandbox/cgroup.ts";

export { chooseSandbox, DEFAULT_DEADLINE_MS, DEFAULT_HANG_MS, hiddenPaths, loadManifest, randomSeed, ROOT, TOKEN_ENV, type GradeOptions } from "./grade-folders.ts";

// Grades a submission. With `--sandbox auto`, a sandbox that could not be set up counts as
// no sandbox: said once on stderr, and the grade runs again without it.
export async function grade(options: GradeOptions = {}): Promise<GradeResult> {
  const started = Date.now();
  const first = await attempt(options, started);
  if (!first.setupError || (options.sandbox ?? "auto") !== "auto") return first.result;
  return (await attempt(options, started, first.setupError)).result;
}

// One attempt, stage by stage.
async function attempt(options: GradeOptions, started: number, sandboxFailed?: string): Promise<{ result: GradeResult; setupError?: string }> {
  const prepared = await prepareGrade(options, started, sandboxFailed);
  const { plan } = prepared;
  // Every process of the grade in a control group of its own, bounded as a whole (sandbox/cgroup.ts).
  const group = "refused" in prepared ? undefined : gradeGroup(options.memoryMb ?? memoryMbFromEnv() ?? DEFAULT_GRADE_MEMORY_MB);
  try {
    if ("refused" in prepared) return { result: notGraded(plan, prepared.refused) };
    const outcome = await stages(plan, { ...prepared.folders, ...(group ? { group } : {}) });
    // The kernel ended a process of the grade for memory: whatever the checks say, the grade
    // did not run as the tests meant it to, and the learner is told which limit it met.
    const kills = group?.oomKills() ?? 0;
    if (kills > 0) return { result: notGraded(plan, t("memoryLimit", plan.lang, { mb: Math.round(group!.memoryBytes / 1024 / 1024), kills })) };
    return outcome;
  } catch (error) {
    // A grader fault, never the submission's doing: still a result, never a throw out of a batch.
    return { result: notGraded(plan, t("graderFailed", plan.lang, { why: String((error as Error)?.stack ?? error).split("\n").slice(0, 2).join(" ") })) };
  } finally {
    const left = await group?.remove();
    if (left) process.stderr.write(`grade: could not remove the grade's control group ${left}\n`);
    if (prepared.privateDir && !options.keep) {
      const left = removeTree(prepared.privateDir);
      if (left) process.stderr.write(`grade: could not remove ${prepared.privateDir}: ${left}\n`);
    }
  }
}

// The stages that run something: checks before running and the tests, what they left, the checks.
async function stages(plan: GradePlan, folders: GradeFolders): Promise<{ result: GradeResult; setupError?: string }> {
  // The client host's files (the harness and the bundled submission), built while vitest
  // starts: the import check loads the same bundle, and no host starts before the gate opens.
  const hostBundle = buildHostBundle(plan.labDir, folders.copy, plan.manifest.entry);
  const preflight = startPreflight(plan, folders, hostBundle);
  // The test side's harness precompiled (harness-mirror.mjs), where the lab hosts its client;
  // not with LAB_GRADER_TYPESCRIPT=1 (every stack then names the TypeScript files themselves).
  const mirror = plannedHostBundle(plan.labDir, folders.copy) && process.env.LAB_GRADER_TYPESCRIPT !== "1" ? await readyMirror(plan.manifest.id) : undefined;
  const run = await runVitest(runOptions(plan, folders, preflight, hostBundle, mirror));
  await hostBundle;
  plan.phases.testsEndMs = Date.now() - plan.started;
  const records = await collectRunRecords(plan, folders, run, await preflight.done);
  if ("refusal" in records) return { result: notGraded(plan, records.refusal), ...(records.setupError ? { setupError: records.setupError } : {}) };
  const built = buildChecks(records.input);
  return { result: gradeResult({ ...plan, ...built, todoMarkers: folders.todoMarkers }) };
}

// $LAB_GRADE_MEMORY_MB, the default of --memory-mb where it is a whole number (the bench sets 0
// on cgroup v2, where the grade's group would take its processes out of the bench's CPU group).
function memoryMbFromEnv(): number | undefined {
  const value = Number(process.env.LAB_GRADE_MEMORY_MB ?? "");
  return process.env.LAB_GRADE_MEMORY_MB && Number.isInteger(value) && value >= 0 ? value : undefined;
}

// The grade's control group, or none (said once on stderr where the grader runs as root, the
// one place a group is expected: an instructor's or a CI machine).
let saidNoGroup = false;
function gradeGroup(memoryMb: number): GradeGroup | undefined {
  if (memoryMb === 0) return undefined;
  const made = makeGradeGroup(memoryMb);
  if ("group" in made) return made.group;
  if (!saidNoGroup && process.getuid?.() === 0) process.stderr.write(`grade: no memory limit for the grade as a whole (${made.why}); each process keeps its own\n`);
  saidNoGroup = true;
  return undefined;
}

function notGraded(plan: GradePlan, message: string): GradeResult {
  const durationMs = Date.now() - plan.started;
  return couldNotGrade(plan.head, plan.manifest, message, { durationMs, phases: { ...plan.phases, totalMs: durationMs } });
}

// The test run's options: vitest with the fixed config in the sandbox chosen, gated by the
// import check (and the host bundles: built, or failed, when the hosts then load the
// submission through tsx) and stopped by a failed check.
function runOptions(plan: GradePlan, folders: GradeFolders, preflight: PreflightRun, built: Promise<HostBundle | undefined>, mirror: string | undefined) {
  const hostBundle = plannedHostBundle(plan.labDir, folders.copy);
  const gate = Promise.all([preflight.gate, built]).then(([go, bundle]) => (go && hostBundle && !bundle ? "unbundled" : go));
  return {
    root: ROOT,
    cwd: folders.runCwd,
    configFile: join(ROOT, "grader", "vitest.grade.config.ts"),
    reporters: [join(ROOT, "grader", "child", "progress-reporter.ts")],
    deadlineMs: plan.deadlineMs,
    // Stopped by a failed check, or at once when the kernel ended a process of the grade for memory.
    signal: folders.group ? AbortSignal.any([preflight.stop, folders.group.overLimit]) : preflight.stop,
    gate,
    sandbox: folders.sandbox,
    hide: plan.hide,
    gradeDir: folders.gradeDir,
    scratch: folders.scratch,
    scratchFolders: SCRATCH_FOLDERS,
    records: RUN_RECORDS,
    ...(folders.group ? { group: folders.group } : {}),
    env: { ...folders.runEnv, ...(hostBundle ? { LAB_HOST_HARNESS: hostBundle.harness, LAB_HOST_SUBMISSION: hostBundle.submission } : {}), ...(mirror ? { LAB_HARNESS_MIRROR: mirror } : {}) },
  };
}

// The grader's import check alone, for the learner's loop and tests: copies `submission`
// into a private temp folder, imports its entry in the sandbox (where there is one) under
// the same resolution confinement as a grade, and removes everything again.
export async function importCheck(submission: string, manifest: LabManifest, lang: Lang, mode: SandboxMode = "auto"): Promise<Preflight> {
  const chosen = chooseSandbox(mode);
  if ("refused" in chosen) return { ok: false, message: t("sandboxRequired", lang, { why: chosen.refused }) };
  const sandbox: SandboxKind = chosen.kind;
  const privateDir = mkdtempSync(join(tmpdir(), "lab-import-"));
  try {
    const gradeDir = join(privateDir, "g");
    const copied = makeCopy(resolve(submission), gradeDir);
    if (!copied.ok) return { ok: false, message: copyRefusal(copied, lang) };
    const copy = join(gradeDir, "submission");
    const scratch = makeScratch(join(gradeDir, "import"));
    const hide = await hiddenPaths();
    const confine = JSON.stringify({ copy, allow: manifest.allowedPackages ?? [], root: ROOT, hide });
    const outcome = await importSmoke({ root: ROOT, copy, manifest, lang, sandbox, hide, gradeDir, scratch, confine });
    return outcome.verdict;
  } finally {
    removeTree(privateDir);
  }
}
