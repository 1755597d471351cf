// What a grading run left behind, read back as tests: vitest's results (or, when the run was
// stopped before it wrote them, its progress lines), the fixture workspaces' records and the
// strays the setup file killed. grader/build-checks.ts turns these tests into checks.

import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { t } from "./i18n.ts";
import { describesOf, type CheckDef, type LabManifest, type Lang } from "./manifest.ts";
import type { TestOutcome, TraceEntry } from "./result-types.ts";
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

/** Everything a run left behind, and what the grade asked for. */
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

export interface FoundTest {
  file: string;
  describe: string;
  outcome: TestOutcome;
  fullName: string;
  /** Started but never finished (the run was stopped while it ran). */
  unfinished?: boolean;
}

/** The run's tests, the files that could not run, and why the run as a whole cannot be graded. */
export interface RunTests {
  tests: FoundTest[];
  fileErrors: Map<string, string>;
  /** vitest wrote its results (else the tests are rebuilt from progress lines). */
  complete: boolean;
  runError?: string;
}

// Reads the run back as tests, from vitest's results when it wrote them, else from progress.
export function testsOfRun(input: BuildInput): RunTests {
  const found = input.json !== undefined && Array.isArray(input.json.testResults) ? fromResults(input, input.json) : fromStoppedRun(input);
  const runError = found.runError ?? failOnUnhandled(found.tests, input);
  attachTraces(found.tests, input.workspaces);
  return runError ? { ...found, runError } : found;
}

// A run that reached its end: every assertion, and the files that could not run or crashed.
function fromResults(input: BuildInput, json: VitestJson): RunTests {
  const { lang, run } = input;
  const tests: FoundTest[] = [];
  const fileErrors = new Map<string, string>();
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
  const runError = json.numTotalTests === 0 || tests.length === 0 ? t("noTests", lang) : undefined;
  return { tests, fileErrors, complete: true, ...(runError ? { runError } : {}) };
}

// A run stopped before vitest wrote its results: what the progress lines show, and why.
function fromStoppedRun(input: BuildInput): RunTests {
  const { lang, run } = input;
  let runError: string;
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
    runError = t("runCrashed", lang, { code: run.code ?? "", signal: run.signal ?? "", detail: detail ? `: ${detail}` : "" });
  } else {
    runError = t("resultsMissing", lang);
  }
  return { tests: fromProgress(input), fileErrors: new Map(), complete: false, runError };
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
export function failOnUnhandled(tests: FoundTest[], input: BuildInput): string | undefined {
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
export function neverStarted(def: CheckDef, input: BuildInput): FoundTest[] {
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

export function firstLines(text: string, max = MAX_MESSAGE_CHARS): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

export function attachTraces(tests: FoundTest[], workspaces: WorkspaceRecord[]): void {
  for (const test of tests) {
    if (test.outcome.status !== "fail") continue;
    const record = workspaces.find((w) => w.test === test.fullName && (w.messages?.length ?? 0) > 0);
    if (record?.messages) test.outcome.trace = record.messages;
  }
}

