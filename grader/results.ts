// Turns what a grading run left behind into checks: vitest's JSON results (mapped to check
// ids through the describe blocks the manifest names), the fixture workspaces' records
// (orphans after close(), message traces), the strays the setup file killed, and the
// processes still alive after the run.

import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { t } from "./i18n.ts";
import { describesOf, type CheckDef, type CheckStatus, type LabManifest, type Lang } from "./manifest.ts";
import type { CheckResult, TestOutcome, TraceEntry } from "./result.ts";
import type { VitestRun } from "./run-vitest.ts";

export interface VitestAssertion {
  ancestorTitles: string[];
  title: string;
  fullName: string;
  status: "passed" | "failed" | "skipped" | "pending" | "todo" | "disabled";
  duration?: number | null;
  failureMessages: string[];
}

export interface VitestFileResult {
  name: string;
  status: "passed" | "failed" | string;
  message: string;
  assertionResults: VitestAssertion[];
}

export interface VitestJson {
  numTotalTests: number;
  success: boolean;
  testResults: VitestFileResult[];
}

export interface WorkspaceRecord {
  dir: string;
  test: string | null;
  pids: number[];
  alive: number[];
  messages?: TraceEntry[];
}

export interface StrayRecord {
  test: string;
  pid: number;
  command: string;
}

export interface ProgressRecord {
  event: "start" | "end" | "unhandled";
  file: string;
  ancestors: string[];
  title: string;
  state?: string;
  errors?: string[];
}

export interface BuildInput {
  manifest: LabManifest;
  lang: Lang;
  labDir: string;
  json: VitestJson | undefined;
  run: VitestRun;
  progress: ProgressRecord[];
  workspaces: WorkspaceRecord[];
  strays: StrayRecord[];
  survivors: Array<{ pid: number; command: string }>;
  deadlineMs: number;
  homeworkFiles: string[];
  /** Every test file of the run (relative to the lab), to name the unfinished ones at the deadline. */
  testFiles?: string[];
}

/** Longest failure message kept per test, in characters. */
export const MAX_MESSAGE_CHARS = 600;

export function readJson<T>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

interface FoundTest {
  file: string;
  describe: string;
  outcome: TestOutcome;
  fullName: string;
  /** Started but never finished (the run was stopped while it ran). */
  unfinished?: boolean;
}

// Builds every check; `error` is set when the run as a whole could not be graded.
export function buildChecks(input: BuildInput): { checks: CheckResult[]; error?: string } {
  const { manifest, lang, json, run } = input;
  let runError: string | undefined;
  let tests: FoundTest[] = [];
  const fileErrors = new Map<string, string>();

  const complete = json !== undefined && Array.isArray(json.testResults);
  if (complete) {
    for (const file of json.testResults) {
      const rel = relative(input.labDir, file.name);
      if (file.assertionResults.length === 0 && file.status !== "passed") {
        fileErrors.set(rel, t("fileFailed", lang, { file: rel, text: firstLines(file.message) }));
      }
      // A file whose worker died (vitest leaves it pending): memory exhaustion or a crash,
      // charged to the checks of that file, naming the test that was running.
      if (file.status === "crashed") {
        const running = file.assertionResults.find((a) => a.status !== "passed" && a.status !== "failed");
        const test = running ? [...running.ancestorTitles, running.title].join(" > ") : rel;
        fileErrors.set(rel, t(outOfMemory(run.output) ? "memoryExhausted" : "workerCrashed", lang, { test }));
      }
      for (const a of file.assertionResults) tests.push(fromAssertion(rel, a, lang, input));
    }
    if (json.numTotalTests === 0 || tests.length === 0) runError = t("noTests", lang);
  } else {
    tests = fromProgress(input);
    if (run.timedOut) {
      let running = runningTests(input.progress);
      // A test stuck in synchronous code never reports its start: name its file instead.
      if (running.length === 0) running = unfinishedFiles(input);
      runError = t("runDeadline", lang, {
        ms: input.deadlineMs,
        running: running.length > 0 ? t("runDeadlineRunning", lang, { tests: running.join("; ") }) : "",
      });
    } else if (run.code !== 0 && run.code !== 1) {
      const detail = firstLines(run.output.split("\n").filter((l) => /error/i.test(l)).slice(-3).join(" "), 300);
      runError = t("runCrashed", lang, { code: run.code, signal: run.signal, detail: detail ? `: ${detail}` : "" });
    } else {
      runError = t("resultsMissing", lang);
    }
  }
  runError ??= failOnUnhandled(tests, input);
  attachTraces(tests, input.workspaces);

  const checks: CheckResult[] = [];
  for (const def of manifest.checks) {
    // A probe with no tests of its own is the orphan probe, whatever the lab calls it.
    if (def.kind === "probe" && describesOf(def).length === 0) {
      checks.push(orphanCheck(def, input, runError));
      continue;
    }
    const describes = describesOf(def);
    const mine = tests.filter((x) => describes.includes(x.describe));
    const ownFiles = new Set(mine.map((x) => x.file));
    if (!complete) mine.push(...neverStarted(def, input));
    checks.push(testCheck(def, mine, lang, runError ?? fileErrorFor(def, manifest, fileErrors, ownFiles)));
  }
  // Homework: every homework/... describe found, as bonus checks.
  const homeworkDescribes = [...new Set(tests.filter((x) => x.describe.startsWith("homework/")).map((x) => x.describe))];
  for (const id of homeworkDescribes.sort()) {
    const mine = tests.filter((x) => x.describe === id);
    const def: CheckDef = {
      id,
      kind: "homework",
      weight: manifest.homeworkWeight,
      title: { zh: id, en: id },
      standard: { zh: "课后作业（加分项）", en: "homework (bonus)" },
      deduction: { zh: "", en: "" },
      hint: { zh: `见 labs/${manifest.id}/${manifest.homeworkDir}/README.md`, en: `see labs/${manifest.id}/${manifest.homeworkDir}/README.md` },
      lesson: `labs/${manifest.id}/${manifest.homeworkDir}/README.md`,
    };
    checks.push(testCheck(def, mine, lang, undefined));
  }
  for (const [file, message] of fileErrors) {
    if (input.homeworkFiles.includes(file) && !tests.some((x) => x.file === file)) {
      checks.push({
        id: `homework/${file.replace(/^.*\//, "").replace(/\.test\.ts$/, "")}`,
        kind: "homework",
        status: "error",
        score: 0,
        maxScore: manifest.homeworkWeight,
        message,
        title: file,
        standard: "",
        deduction: "",
        tests: [],
      });
    }
  }
  return runError ? { checks, error: runError } : { checks };
}

function fromAssertion(file: string, a: VitestAssertion, lang: Lang, input: BuildInput): FoundTest {
  const status = a.status === "passed" ? "pass" : a.status === "failed" ? "fail" : "skip";
  const outcome: TestOutcome = { title: a.title, status };
  if (typeof a.duration === "number") outcome.durationMs = Math.round(a.duration);
  if (status === "fail") outcome.message = failureText(a.failureMessages, a.title, lang, input, a.duration ?? undefined);
  return { file, describe: a.ancestorTitles[0] ?? "", outcome, fullName: [...a.ancestorTitles, a.title].join(" > ") };
}

// Rebuilds what it can from the progress lines when vitest never wrote its results. A test
// that started and never ended is kept as unfinished: its check can then never read "pass".
function fromProgress(input: BuildInput): FoundTest[] {
  const out: FoundTest[] = [];
  const open = new Map<string, ProgressRecord>();
  const keyOf = (p: ProgressRecord) => `${p.file}\0${[...p.ancestors, p.title].join(" > ")}`;
  for (const p of input.progress) {
    if (p.event === "start") open.set(keyOf(p), p);
    else if (p.event === "end") open.delete(keyOf(p));
  }
  for (const p of open.values()) {
    const outcome: TestOutcome = { title: p.title, status: "fail", message: t("testUnfinished", input.lang) };
    out.push({ file: relative(input.labDir, p.file), describe: p.ancestors[0] ?? "", outcome, fullName: [...p.ancestors, p.title].join(" > "), unfinished: true });
  }
  for (const p of input.progress) {
    if (p.event !== "end") continue;
    const status = p.state === "passed" ? "pass" : p.state === "failed" ? "fail" : "skip";
    const outcome: TestOutcome = { title: p.title, status };
    if (status === "fail") outcome.message = failureText(p.errors ?? [], p.title, input.lang, input);
    out.push({ file: relative(input.labDir, p.file), describe: p.ancestors[0] ?? "", outcome, fullName: [...p.ancestors, p.title].join(" > ") });
  }
  return out;
}

// An error that escaped as unhandled fails the test it happened in (vitest tags it with the
// file and test name but leaves the test passed); one tagged with a file only fails every
// check of that file; one with neither makes the run ungradable, never a pass.
function failOnUnhandled(tests: FoundTest[], input: BuildInput): string | undefined {
  const crashed = (input.json?.testResults ?? []).some((f) => f.status === "crashed");
  for (const u of input.progress) {
    if (u.event !== "unhandled") continue;
    const message = t("unhandledError", input.lang, { error: firstLines(u.errors?.[0] ?? "", 300) });
    // A worker that died is reported with the file it was running (see buildChecks).
    if (!u.file && crashed && /Worker \w+ emitted error/.test(u.errors?.[0] ?? "")) continue;
    if (!u.file) return message;
    const file = relative(input.labDir, u.file);
    const inFile = tests.filter((x) => x.file === file);
    const named = inFile.filter((x) => x.outcome.title === u.title);
    for (const test of named) Object.assign(test.outcome, { status: "fail", message });
    if (named.length > 0) continue;
    for (const describe of new Set(inFile.map((x) => x.describe))) {
      tests.push({ file, describe, outcome: { title: t("unhandledAfterTest", input.lang), status: "fail", message }, fullName: describe });
    }
  }
  return undefined;
}

/** Did a worker run out of memory (V8's fatal error on its stderr)? */
export function outOfMemory(output: string): boolean {
  return /JavaScript heap out of memory|Reached heap limit|ERR_WORKER_OUT_OF_MEMORY/.test(output);
}

function unfinishedFiles(input: BuildInput): string[] {
  const ended = new Set(input.progress.filter((p) => p.event === "end").map((p) => relative(input.labDir, p.file)));
  return (input.testFiles ?? []).filter((file) => !ended.has(file));
}

// In a run stopped before vitest wrote its results: a test file backing this check that no
// progress line mentions never started, so the check cannot know all its tests. Each such
// file counts as one unfinished test.
function neverStarted(def: CheckDef, input: BuildInput): FoundTest[] {
  const files = def.kind === "evidence" ? input.manifest.evidenceFiles : def.kind === "rubric" ? input.manifest.probeFiles : [];
  const out: FoundTest[] = [];
  for (const file of files) {
    let source = "";
    try {
      source = readFileSync(join(input.labDir, file), "utf8");
    } catch {
      continue;
    }
    if (!describesOf(def).some((d) => source.includes(`describe(${JSON.stringify(d)}`))) continue;
    if (input.progress.some((p) => p.file !== "" && relative(input.labDir, p.file) === file)) continue;
    out.push({ file, describe: def.id, outcome: { title: file, status: "fail", message: t("testUnfinished", input.lang) }, fullName: `${def.id} > ${file}`, unfinished: true });
  }
  return out;
}

function runningTests(progress: ProgressRecord[]): string[] {
  const open = new Map<string, string>();
  for (const p of progress) {
    const key = `${p.file}\0${[...p.ancestors, p.title].join(" > ")}`;
    if (p.event === "start") open.set(key, [...p.ancestors, p.title].join(" > "));
    else open.delete(key);
  }
  return [...open.values()];
}

// The first meaningful lines of a failure: the message without the stack, vitest's timeout
// turned into the harness's own "hung" wording.
function failureText(messages: string[], title: string, lang: Lang, input: BuildInput, durationMs?: number): string {
  const raw = messages[0] ?? "";
  const timedOut = /(?:Test|Hook) timed out in (\d+)ms/.exec(raw);
  if (timedOut) return t("testTimedOut", lang, { title, ms: timedOut[1] });
  // vitest's placeholder when a hook (the test's cleanup) ran out of time.
  if (/^(?:Error: )?STACK_TRACE_ERROR/.test(raw)) {
    return t("testTimedOut", lang, { title, ms: typeof durationMs === "number" ? String(Math.round(durationMs)) : "?" });
  }
  const lines: string[] = [];
  for (const line of raw.split("\n")) {
    if (/^\s+at /.test(line)) break;
    if (line.trim()) lines.push(line.trim());
  }
  let text = lines.join(" ").replace(/^(AssertionError|HungError|Error|TypeError|McpError): /, "");
  // Paths of the private copy mean nothing to the learner.
  text = text.split(input.labDir).join("<lab>");
  return firstLines(text, MAX_MESSAGE_CHARS);
}

function firstLines(text: string, max = MAX_MESSAGE_CHARS): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function attachTraces(tests: FoundTest[], workspaces: WorkspaceRecord[]): void {
  for (const test of tests) {
    if (test.outcome.status !== "fail") continue;
    const record = workspaces.find((w) => w.test === test.fullName && (w.messages?.length ?? 0) > 0);
    if (record?.messages) test.outcome.trace = record.messages;
  }
}

function fileErrorFor(def: CheckDef, manifest: LabManifest, fileErrors: Map<string, string>, ownFiles: Set<string>): string | undefined {
  const files = def.kind === "evidence" ? manifest.evidenceFiles : def.kind === "rubric" ? manifest.probeFiles : [];
  // The check's own files first (those holding its tests), then any file of its kind.
  for (const file of [...files.filter((f) => ownFiles.has(f)), ...files]) {
    const error = fileErrors.get(file);
    if (error) return error;
  }
  return undefined;
}

function testCheck(def: CheckDef, tests: FoundTest[], lang: Lang, missingWhy: string | undefined): CheckResult {
  const ran = tests.filter((x) => x.outcome.status !== "skip");
  const unfinished = ran.filter((x) => x.unfinished);
  const failed = ran.filter((x) => x.outcome.status === "fail" && !x.unfinished);
  const passed = ran.filter((x) => x.outcome.status === "pass");
  // Partial progress stays visible inside a check that did not pass.
  const passedNote = passed.length > 0 ? ` · ${t("passedAlongside", lang, { titles: passed.map((x) => x.outcome.title).join("; ") })}` : "";
  let status: CheckStatus;
  let message: string;
  if (ran.length === 0) {
    status = "error";
    message = t("noTestsForCheck", lang, { why: missingWhy ?? t("notRun", lang) });
  } else if (unfinished.length > 0) {
    // A test that never finished proves nothing either way: never ✔, never a plain fail.
    status = "error";
    message = t("unfinishedTests", lang, { count: unfinished.length, total: ran.length, titles: unfinished.map((x) => x.outcome.title).join("; ") });
    if (failed.length > 0) {
      message += ` | ${t("failedTests", lang, { failed: failed.length, total: ran.length })}: ${failed.map((x) => `${x.outcome.title} — ${x.outcome.message ?? ""}`).join(" | ")}`;
    }
    message += passedNote;
  } else if (failed.length > 0) {
    status = "fail";
    message = `${t("failedTests", lang, { failed: failed.length, total: ran.length })}: ${failed
      .map((x) => `${x.outcome.title} — ${x.outcome.message ?? ""}`)
      .join(" | ")}${passedNote}`;
  } else {
    status = "pass";
    message = t("allPassed", lang, { total: ran.length });
  }
  return checkResult(def, lang, status, message, tests.map((x) => x.outcome));
}

function orphanCheck(def: CheckDef, input: BuildInput, runError: string | undefined): CheckResult {
  const { lang } = input;
  const problems: string[] = [];
  for (const w of input.workspaces) {
    if (w.alive.length > 0) problems.push(t("orphanAfterClose", lang, { test: w.test ?? t("unknownTest", lang), pids: w.alive.join(", ") }));
  }
  for (const s of input.strays) problems.push(t("strayProcess", lang, { test: s.test, pid: s.pid, command: s.command }));
  for (const s of input.survivors) {
    const owner = input.workspaces.find((w) => w.pids.includes(s.pid));
    const test = owner?.test ? t("survivorTest", lang, { test: owner.test }) : "";
    problems.push(t("survivorAfterRun", lang, { pid: s.pid, command: s.command, test }));
  }
  const pids = new Set(input.workspaces.flatMap((w) => w.pids));
  let status: CheckStatus = problems.length > 0 ? "fail" : "pass";
  let message = problems.length > 0 ? problems.slice(0, 6).join(" | ") : t("noOrphans", lang, { count: pids.size });
  if (status === "pass" && runError) {
    status = "error";
    message = t("noTestsForCheck", lang, { why: runError });
  }
  return checkResult(def, lang, status, message, []);
}

// One check's result: full score only on pass; a hint and the lesson section otherwise.
function checkResult(def: CheckDef, lang: Lang, status: CheckStatus, message: string, tests: TestOutcome[]): CheckResult {
  const result: CheckResult = {
    id: def.id,
    kind: def.kind,
    status,
    score: status === "pass" ? def.weight : 0,
    maxScore: def.weight,
    message,
    title: def.title[lang],
    standard: def.standard[lang],
    deduction: def.deduction[lang],
    tests,
  };
  if (status !== "pass") {
    result.hint = def.hint[lang];
    result.lesson = def.lesson;
  }
  return result;
}
