// Shared machinery of the lab's evidence tests: start a client against a scripted fixture
// server with per-test cleanup, detect promises that never settle (instead of hanging),
// and count the timers and abort listeners the client under test leaves behind.

import { getEventListeners } from "node:events";
import { onTestFinished } from "vitest";
import { msg } from "./messages.ts";
import { createFixtureWorkspace, isAlive, type FixtureOptions, type FixtureWorkspace, type LogEntry } from "../../../fixtures/index.ts";

/** How long a test waits for a promise the fixture has already answered (ms). */
export const HANG_MS = Number(process.env.LAB_HANG_MS ?? 2_000);

/** Directory of the client under test (set by the vitest config). */
export const SUBMISSION_DIR = process.env.LAB_SUBMISSION_DIR ?? "";

export type Settled<T> = { status: "fulfilled"; value: T } | { status: "rejected"; reason: any };

export class HungError extends Error {
  constructor(label: string, ms: number, waitedAt?: Error) {
    super(msg("hung", { label, ms }));
    this.name = "HungError";
    // Point at the test line that waited (not at this file's timer), so a report shows
    // which call never settled and where the test made it.
    const frames = (waitedAt?.stack ?? "").split("\n").slice(1).filter((line) => !line.includes("support.ts"));
    if (frames.length > 0) this.stack = [`${this.name}: ${this.message}`, ...frames].join("\n");
  }
}

// Waits for a promise to settle, and fails the test with "hung: …" instead of hanging
// when it does not. The deadline only bites on broken clients: every wait in the
// evidence tests is for an answer the fixture already sent or a deadline the client set.
export async function settleWithin<T>(promise: Promise<T>, label: string, ms = HANG_MS): Promise<Settled<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waitedAt = new Error();
  const hung = new Promise<never>((_, reject) => {
    timer = realSetTimeout(() => reject(new HungError(label, ms, waitedAt)), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ status: "fulfilled" as const, value }),
        (reason) => ({ status: "rejected" as const, reason }),
      ),
      hung,
    ]);
  } finally {
    realClearTimeout(timer);
  }
}

/** Resolves with the value or throws "hung: …". */
export async function within<T>(promise: Promise<T>, label: string, ms = HANG_MS): Promise<T> {
  const outcome = await settleWithin(promise, label, ms);
  if (outcome.status === "rejected") throw outcome.reason;
  return outcome.value;
}

/** Resolves with the rejection reason; fails when the promise resolves or hangs. */
export async function rejection(promise: Promise<unknown>, label: string, ms = HANG_MS): Promise<any> {
  const outcome = await settleWithin(promise, label, ms);
  if (outcome.status === "fulfilled") {
    throw new Error(msg("shouldReject", { label, value: outcome.value }));
  }
  return outcome.reason;
}

// Polls a condition about the fixture's log (which the server writes before acting),
// for orderings that depend on what the server has received.
export async function waitFor(condition: () => boolean, label: string, ms = HANG_MS): Promise<void> {
  const deadline = Date.now() + ms;
  const waitedAt = new Error();
  while (!condition()) {
    if (Date.now() > deadline) throw new HungError(label, ms, waitedAt);
    await new Promise((resolve) => realSetTimeout(resolve, 5));
  }
}

/** Messages the server received with this method, in order. */
export function received(log: LogEntry[], method: string): any[] {
  return log.filter((entry) => entry.dir === "in" && entry.msg?.method === method).map((entry) => entry.msg);
}

/** Responses the server sent, in order. */
export function sent(log: LogEntry[]): any[] {
  return log.filter((entry) => entry.dir === "out").map((entry) => entry.msg);
}

export function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, "abort").length;
}

// ---- timers -------------------------------------------------------------------------

const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const TRACKER = Symbol.for("lab33.timerTracker");

interface TrackedTimer {
  kind: "timeout" | "interval";
  origin: string;
}

interface Tracker {
  live: Map<object, TrackedTimer>;
}

function tracker(): Tracker {
  const holder = globalThis as unknown as Record<symbol, Tracker | undefined>;
  holder[TRACKER] ??= { live: new Map() };
  return holder[TRACKER]!;
}

// Wraps the global timer functions so every timer created through them is recorded with
// the file that created it, until it fires or is cleared. Installed once per worker.
export function installTimerTracker(): void {
  const g = globalThis as any;
  if (g.setTimeout.__lab33Tracked) return;
  const { live } = tracker();
  const origSetTimeout = g.setTimeout;
  const origSetInterval = g.setInterval;
  const origClearTimeout = g.clearTimeout;
  const origClearInterval = g.clearInterval;
  const find = (handle: unknown): object | undefined => {
    if (handle && typeof handle === "object") return handle;
    if (typeof handle === "number" || typeof handle === "string") {
      for (const timer of live.keys()) if (Number(timer) === Number(handle)) return timer;
    }
    return undefined;
  };
  const wrappedSetTimeout = function (this: unknown, callback: any, ms?: number, ...args: unknown[]) {
    if (typeof callback !== "function") return origSetTimeout.call(this, callback, ms, ...args);
    const handle = origSetTimeout.call(
      this,
      function (this: unknown, ...inner: unknown[]) {
        live.delete(handle);
        return callback.apply(this, inner);
      },
      ms,
      ...args,
    );
    live.set(handle, { kind: "timeout", origin: creator() });
    return handle;
  };
  const wrappedSetInterval = function (this: unknown, callback: any, ms?: number, ...args: unknown[]) {
    const handle = origSetInterval.call(this, callback, ms, ...args);
    live.set(handle, { kind: "interval", origin: creator() });
    return handle;
  };
  const clear = (orig: (handle: unknown) => void) =>
    function (this: unknown, handle: unknown) {
      const key = find(handle);
      if (key) live.delete(key);
      return orig.call(this, handle);
    };
  Object.assign(wrappedSetTimeout, origSetTimeout, { __lab33Tracked: true });
  Object.assign(wrappedSetInterval, origSetInterval);
  g.setTimeout = wrappedSetTimeout;
  g.setInterval = wrappedSetInterval;
  g.clearTimeout = clear(origClearTimeout);
  g.clearInterval = clear(origClearInterval);
}

// The first stack frame outside this file and node's internals: who made the timer.
function creator(): string {
  const frames = (new Error().stack ?? "").split("\n").slice(2);
  const frame = frames.find((line) => !line.includes("support.ts") && !line.includes("node:"));
  return frame?.trim() ?? "unknown";
}

/** The timers alive right now, to compare against later. */
export function timerSnapshot(): Set<object> {
  return new Set(tracker().live.keys());
}

// Timers created by files of the client under test (since `before`, when given) that
// have neither fired nor been cleared.
export function liveClientTimers(before?: Set<object>): string[] {
  const mine: string[] = [];
  for (const [handle, timer] of tracker().live) {
    if (before?.has(handle)) continue;
    if (SUBMISSION_DIR && timer.origin.includes(SUBMISSION_DIR)) mine.push(`${timer.kind} ${timer.origin}`);
  }
  return mine;
}

// ---- clients --------------------------------------------------------------------------

export interface ClientLike {
  readonly pendingCount: number;
  readonly pid: number | undefined;
  readonly initialized: boolean;
  close(): Promise<void>;
}

export interface Harness<C extends ClientLike> {
  client: C;
  ws: FixtureWorkspace;
  /** Timers alive when the harness was made; leaks are counted against it. */
  timersBefore: Set<object>;
  /** Every pid the fixture servers (and their children) recorded. */
  pids(): number[];
  log(): LogEntry[];
}

// Creates a client for a fresh fixture workspace and registers its cleanup with the
// current test: close (bounded, so a broken close cannot hang the run), then kill
// whatever the fixture recorded and remove the workspace, pass or fail.
export function harness<C extends ClientLike>(
  make: (command: { executable: string; args: string[] }) => C,
  fixture: FixtureOptions = {},
): Harness<C> {
  const timersBefore = timerSnapshot();
  const ws = createFixtureWorkspace();
  const client = make(ws.command({ selfDestructMs: 60_000, ...fixture }));
  onTestFinished(async () => {
    // A correct close() against these fixtures takes milliseconds; waiting the hang deadline
    // (not more) keeps a client whose close() never settles from costing seconds per test.
    await settleWithin(Promise.resolve().then(() => client.close()), "close() during cleanup", HANG_MS).catch(() => {});
    await ws.cleanup();
  });
  return { client, ws, timersBefore, pids: () => ws.pids(), log: () => ws.log() };
}

// The end-of-test proof every evidence test shares: nothing pending, close() resolves,
// every process the fixture recorded is gone by then, and no timer of the client is left.
export async function expectCleanShutdown(h: Harness<ClientLike>, when: string): Promise<void> {
  const problems: string[] = [];
  if (h.client.pendingCount !== 0) problems.push(msg("pendingLeft", { when, count: h.client.pendingCount }));
  await within(h.client.close(), "close()", 10_000);
  const alive = h.pids().filter(isAlive);
  if (alive.length > 0) problems.push(msg("aliveAfterClose", { pids: alive.join(", ") }));
  const timers = liveClientTimers(h.timersBefore);
  if (timers.length > 0) {
    problems.push(msg("timersLeft", { when: "close()", count: timers.length, where: timers.slice(0, 2).join("; ") }));
  }
  if (problems.length > 0) throw new Error(problems.join("\n"));
}

/** Throws the message unless the condition holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

// Asserts a rejection carries the expected McpError code.
export function expectCode(error: any, code: string, label: string): void {
  check(error?.code === code, msg("wrongCode", { label, expected: code, actual: error?.code ?? String(error) }));
}
