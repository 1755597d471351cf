// Setup file the grader adds to every grading run (it runs in each vitest worker, next to
// the lab's own setup). Per test it names the running test for the fixture workspaces'
// records, and after the test's own cleanup it catches processes the submission started
// itself: any live descendant of this worker that did not exist when the test began.
// Those are SIGKILLed and recorded, with the test's name, in the test's result (below).

import { beforeEach, expect, vi } from "vitest";
import { commandLine, descendants, killAndWait, listProcs } from "../procs.ts";

// The client hosts this worker started (labs/<lab>/host/channel.ts): the submission's code runs
// in them, so they are not strays; what they start is.
const hostPids = ((globalThis as Record<symbol, unknown>)[Symbol.for("lab.hostPids")] ??= new Set<number>()) as Set<number>;
// Hosts whose pid has not come back from their bridge yet (the lab's host/channel.ts).
const hostsStarting = ((globalThis as Record<symbol, unknown>)[Symbol.for("lab.hostsStarting")] ??= new Set<Promise<void>>()) as Set<Promise<void>>;
const HOST_PID_WAIT_MS = 10_000;

// Homework tests are bonus: they get a tighter safety net than the graded tests, so a
// hanging bonus test cannot dominate the time a learner waits for the verdict.
const homeworkTimeoutMs = Number(process.env.LAB_HOMEWORK_TIMEOUT_MS ?? 0);
// vitest makes process.exit throw only for the first file a worker runs, and puts the real
// one back after each file; with workers shared between files (isolate: false) a client that
// calls process.exit would end the worker and lose every later file. Each file gets the
// throwing one again, so such a client fails the tests that call it, as in a worker of its own.
process.exit = ((code?: number | string | null) => {
  throw new Error(`process.exit unexpectedly called with "${code ?? process.exitCode ?? 0}"`);
}) as typeof process.exit;

// (vitest resets this config after every file, so with workers shared between files a graded
// file that follows a homework file still gets the configured timeouts.)
if (homeworkTimeoutMs > 0 && /[\\/]homework[\\/]/.test(expect.getState().testPath ?? "")) {
  vi.setConfig({ testTimeout: homeworkTimeoutMs, hookTimeout: homeworkTimeoutMs });
}

// What a test left behind (fixture workspaces' leftovers, strays) goes into that test's meta,
// which reaches vitest's main process with the test's result and is signed onto the result
// channel there: no file in the scratch folder, where the client's process could rewrite it.
const MAX_RECORDS_PER_TEST = 50;
let currentMeta: { labRecords?: Array<{ kind: string; record: object }> } | undefined;
(globalThis as Record<symbol, unknown>)[Symbol.for("lab.record")] = (kind: string, record: object) => {
  if (!currentMeta) return;
  const list = (currentMeta.labRecords ??= []);
  if (list.length < MAX_RECORDS_PER_TEST) list.push({ kind, record: compactTrace(record) });
};

// A fixture workspace's record carries the wire log, for the report's trace of a failing test
// (which shows the start of each message). Strings in it are cut at MAX_TRACE_CHARS: a test
// that sends 1 MiB lines would otherwise make a 4 MB record, carried and signed through
// vitest's main process, whose writes to the result channel wait while the grader reads it.
const MAX_TRACE_CHARS = 2_000;
function compactTrace(record: object): object {
  const messages = (record as { messages?: unknown }).messages;
  return Array.isArray(messages) ? { ...record, messages: messages.map(cutStrings) } : record;
}
function cutStrings(value: unknown): unknown {
  if (typeof value === "string") return value.length > MAX_TRACE_CHARS ? `${value.slice(0, MAX_TRACE_CHARS)}… (${value.length - MAX_TRACE_CHARS} more characters)` : value;
  if (Array.isArray(value)) return value.map(cutStrings);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v)]));
  return value;
}

beforeEach((ctx) => {
  const name = [...ancestorNames(ctx.task), ctx.task.name].join(" > ");
  currentMeta = ctx.task.meta as typeof currentMeta;
  process.env.LAB_CURRENT_TEST = name;
  // The client's hosts may run apart from this worker (the sandbox's launcher): what they
  // start is counted too. One read of the process table serves every root.
  const tree = () => {
    const procs = listProcs();
    return [...new Map([process.pid, ...hostPids].flatMap((root) => descendants(root, procs)).map((p) => [p.pid, p])).values()];
  };
  const before = new Set(tree().map((p) => p.pid));
  // Registered before the test body registers its own cleanup, so (hooks run as a stack)
  // this runs last: after the harness closed the client and killed what the fixture recorded.
  ctx.onTestFinished(async () => {
    // A host started in this test is known by its pid once the bridge has said it (bounded).
    if (hostsStarting.size > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.all(hostsStarting), new Promise((resolve) => (timer = setTimeout(resolve, HOST_PID_WAIT_MS)))]);
      clearTimeout(timer);
    }
    const strays = tree().filter((p) => !before.has(p.pid) && !hostPids.has(p.pid));
    if (strays.length > 0) {
      const records = strays.map((p) => ({ test: name, pid: p.pid, command: commandLine(p.pid) }));
      await killAndWait(strays.map((p) => p.pid));
      const take = (globalThis as Record<symbol, unknown>)[Symbol.for("lab.record")] as (kind: string, record: object) => void;
      for (const record of records) take("strays", record);
    }
    delete process.env.LAB_CURRENT_TEST;
  });
});

function ancestorNames(task: { suite?: { name: string; suite?: unknown } }): string[] {
  const names: string[] = [];
  let suite = task.suite as { name: string; suite?: unknown } | undefined;
  while (suite && suite.name) {
    names.unshift(suite.name);
    suite = suite.suite as typeof suite;
  }
  return names;
}
