// Shared machinery of the lab's evidence tests: start a client against a scripted fixture
// server with per-test cleanup, detect promises that never settle (instead of hanging),
// and count the timers and abort listeners the client under test leaves behind.

import { createHook } from "node:async_hooks";
import { getEventListeners } from "node:events";
import { readFileSync } from "node:fs";
import { waitsOn, type Settled } from "../../../grader/lab-waits.ts";
import { onTestFinished } from "vitest";
import { msg } from "./messages.ts";
import { liveProcesses, startedCount, type StartedProcess } from "../probes/spawn-recorder.ts";
import { createFixtureWorkspace, isAlive, type FixtureOptions, type FixtureWorkspace, type LogEntry } from "../../../fixtures/index.ts";

/** How long a test waits for a promise the fixture has already answered (ms). */
export const HANG_MS = Number(process.env.LAB_HANG_MS ?? 2_000);

/** Directory of the client under test (set by the vitest config). */
export const SUBMISSION_DIR = process.env.LAB_SUBMISSION_DIR ?? "";

export type { Settled };

export class HungError extends Error {
  /** `still`: called early because nothing could ever settle the promise (see stillness()). */
  constructor(label: string, ms: number, waitedAt?: Error, still = false) {
    super(still ? msg("hungStill", { label }) : msg("hung", { label, ms }));
    this.name = "HungError";
    // Point at the test line that waited (not at this file's timer), so a report shows
    // which call never settled and where the test made it.
    const frames = (waitedAt?.stack ?? "").split("\n").slice(1).filter((line) => !line.includes("support.ts"));
    if (frames.length > 0) this.stack = [`${this.name}: ${this.message}`, ...frames].join("\n");
  }
}

// The hang detectors' clock. It advances in polls of POLL_MS and counts at most
// MAX_STEP_MS per poll: when this process is starved of CPU (a loaded machine), a poll that
// comes late adds little, so the detector measures time the client had to run, not wall
// time in which nothing could run. On an idle machine it is the wall clock.
const POLL_MS = 10;
const MAX_STEP_MS = 50;

class HangClock {
  elapsed = 0;
  private last = Date.now();
  /** Adds the time since the last call (capped) when `counting`, and returns the total. */
  advance(counting = true): number {
    const now = Date.now();
    const step = Math.min(now - this.last, MAX_STEP_MS);
    this.last = now;
    if (counting) this.elapsed += Math.max(step, 0);
    return this.elapsed;
  }
}

// The detectors' own timer is not activity of the client's: it is not tracked at all.
const poll = () =>
  new Promise((resolve) => {
    const t = tracker();
    t.internal = true;
    try {
      realSetTimeout(resolve, POLL_MS);
    } finally {
      t.internal = false;
    }
  });

// Waits for a promise to settle, and fails the test with "hung: …" instead of hanging
// when it does not. The deadline only bites on broken clients: every wait in the
// evidence tests is for an answer the fixture already sent or a deadline the client set.
export async function settleWithin<T>(promise: Promise<T>, label: string, ms = HANG_MS): Promise<Settled<T>> {
  let outcome: Settled<T> | undefined;
  const settled = promise.then(
    (value) => (outcome = { status: "fulfilled", value }),
    (reason) => (outcome = { status: "rejected", reason }),
  );
  const clock = new HangClock();
  const still = new StillWatch();
  const waitedAt = new Error();
  const hung = (async () => {
    while (outcome === undefined) {
      await poll();
      if (outcome === undefined && clock.advance() > ms) throw new HungError(label, ms, waitedAt);
      if (outcome === undefined && still.observe()) throw new HungError(label, ms, waitedAt, true);
    }
  })();
  await Promise.race([settled, hung]);
  return outcome!;
}

// Waits for a promise whose progress depends on a server starting and answering the
// handshake (initialize(), or several at once), with a hang detector that counts only the
// client's own turns: before it starts a process, and after the server answered initialize.
// From the spawn to the answer the server is the one working (node starting up, reading,
// answering); on a loaded machine that can take seconds and is no reason to call the
// client hung. The server's turn is bounded by SERVER_TURN_MS.
export async function startupWithin<T>(h: { pids(): number[]; log(): LogEntry[] }, promise: Promise<T>, label: string, ms = HANG_MS): Promise<T> {
  let outcome: Settled<T> | undefined;
  promise.then(
    (value) => (outcome = { status: "fulfilled", value }),
    (reason) => (outcome = { status: "rejected", reason }),
  );
  const startedBefore = startedCount();
  const answersBefore = initializeAnswers(h.log());
  const client = new HangClock();
  const server = new HangClock();
  const still = new StillWatch();
  const waitedAt = new Error();
  while (outcome === undefined) {
    await poll();
    if (outcome !== undefined) break;
    if (still.observe()) throw new HungError(label, ms, waitedAt, true);
    const serverTurn = startedCount() > startedBefore && initializeAnswers(h.log()) <= answersBefore;
    if (client.advance(!serverTurn) > ms) throw new HungError(label, ms, waitedAt);
    if (server.advance(serverTurn) > SERVER_TURN_MS) throw new HungError(label, ms + SERVER_TURN_MS, waitedAt);
  }
  if (outcome.status === "rejected") throw outcome.reason;
  return outcome.value;
}

/** Longest time a server's start-up or handshake answer may take before a wait gives up (ms). */
export const SERVER_TURN_MS = 10_000;

// How many initialize requests the fixture servers have answered so far.
function initializeAnswers(log: LogEntry[]): number {
  const asked = new Set<unknown>();
  let answered = 0;
  for (const entry of log) {
    if (entry.dir === "in" && entry.msg?.method === "initialize" && entry.msg.id !== undefined) asked.add(entry.msg.id);
    else if (entry.dir === "out" && entry.msg && asked.has(entry.msg.id)) {
      asked.delete(entry.msg.id);
      answered += 1;
    }
  }
  return answered;
}

/** Calls initialize(), expecting it to reject; waits with startupWithin. */
export async function startupRejection(h: { client: { initialize(): Promise<unknown> }; pids(): number[]; log(): LogEntry[] }, label: string): Promise<any> {
  const outcome = await startupWithin(h, Promise.resolve().then(() => h.client.initialize()).then(
    (value) => ({ ok: true as const, value }),
    (reason) => ({ ok: false as const, reason }),
  ), label);
  if (outcome.ok) throw new Error(msg("shouldReject", { label, value: outcome.value }));
  return outcome.reason;
}

/** Calls initialize() and waits for it with startupWithin. */
export function initialize<T>(h: { client: { initialize(): Promise<T> }; pids(): number[]; log(): LogEntry[] }, label = "initialize()"): Promise<T> {
  return startupWithin(h, Promise.resolve().then(() => h.client.initialize()), label);
}

/** within(): the value or the rejection; rejection(): the reason, failing when it resolves (both "hung: …" when it hangs). */
export const { within, rejection } = waitsOn(settleWithin, (label, value) => msg("shouldReject", { label, value }));

// Polls a condition about the fixture's log (which the server writes before acting),
// for orderings that depend on what the server has received.
export async function waitFor(condition: () => boolean, label: string, ms = HANG_MS): Promise<void> {
  const clock = new HangClock();
  const still = new StillWatch();
  const waitedAt = new Error();
  while (!condition()) {
    if (clock.advance() > ms) throw new HungError(label, ms, waitedAt);
    await poll();
    if (!condition() && still.observe()) throw new HungError(label, ms, waitedAt, true);
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

// ---- timers and abort signals -------------------------------------------------------

// Timers are seen through async_hooks: every Timeout is an async resource, whichever module
// made it (the global setTimeout, `import { setTimeout } from "node:timers"`,
// node:timers/promises, AbortSignal.timeout), so no way of creating one sidesteps the count.
const realSetTimeout: typeof setTimeout = globalThis.setTimeout;
const TRACKER = Symbol.for("lab33.leakTracker");

interface TrackedTimer {
  kind: "timeout" | "interval";
  origin: string;
  resource: { _destroyed?: boolean; _repeat?: unknown };
}

interface TrackedSignal {
  signal: WeakRef<AbortSignal>;
  origin: string;
}

interface Tracker {
  /** Timers by async id, until they fire or are cleared. */
  live: Map<number, TrackedTimer>;
  /** Every other async resource (handles, requests, immediates) by async id, until destroyed. */
  others: Map<number, { type: string; origin: string }>;
  /** Set while the hang detectors make their own poll timer, which is not tracked. */
  internal: boolean;
  /** Signals made by AbortSignal.any from a source signal (dependent signals). */
  dependents: WeakMap<AbortSignal, Array<WeakRef<AbortSignal>>>;
  /** Signals made by AbortSignal.timeout. */
  timeoutSignals: TrackedSignal[];
  installed: boolean;
}

function tracker(): Tracker {
  const holder = globalThis as unknown as Record<symbol, Tracker | undefined>;
  holder[TRACKER] ??= { live: new Map(), others: new Map(), internal: false, dependents: new WeakMap(), timeoutSignals: [], installed: false };
  return holder[TRACKER]!;
}

// Installs, once per worker, the async_hooks timer tracker and the AbortSignal.any /
// AbortSignal.timeout recorders (so listeners on signals derived from a caller's signal are
// counted against it). The name is kept for the callers that install it explicitly.
export function installTimerTracker(): void {
  const t = tracker();
  if (t.installed) return;
  t.installed = true;
  createHook({
    init(asyncId, type, _trigger, resource) {
      if (t.internal || UNTRACKED.has(type)) return;
      if (type !== "Timeout") {
        t.others.set(asyncId, { type, origin: creator() });
        return;
      }
      const timer = resource as TrackedTimer["resource"];
      t.live.set(asyncId, { kind: timer._repeat ? "interval" : "timeout", origin: creator(), resource: timer });
    },
    destroy(asyncId) {
      t.live.delete(asyncId);
      t.others.delete(asyncId);
    },
  }).enable();

  const anyOriginal = AbortSignal.any as ((signals: AbortSignal[]) => AbortSignal) | undefined;
  if (typeof anyOriginal === "function") {
    AbortSignal.any = function any(this: unknown, signals: Iterable<AbortSignal>) {
      const list = [...signals];
      const dependent = anyOriginal.call(this, list);
      for (const source of list) {
        if (!(source instanceof AbortSignal)) continue;
        const refs = t.dependents.get(source) ?? [];
        refs.push(new WeakRef(dependent));
        t.dependents.set(source, refs);
      }
      return dependent;
    } as typeof AbortSignal.any;
  }
  const timeoutOriginal = AbortSignal.timeout;
  AbortSignal.timeout = function timeout(this: unknown, ms: number) {
    const signal = timeoutOriginal.call(this, ms);
    t.timeoutSignals = t.timeoutSignals.filter((s) => s.signal.deref() && !s.signal.deref()!.aborted);
    t.timeoutSignals.push({ signal: new WeakRef(signal), origin: creator() });
    return signal;
  } as typeof AbortSignal.timeout;
}

// The first stack frame outside the harness and node's internals: who made the resource.
function creator(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  const frames = stack.split("\n").slice(1);
  const frame = frames.find((line) => /^\s+at /.test(line) && !line.includes("support.ts") && !line.includes("node:") && !line.includes("spawn-recorder.ts"));
  return frame?.trim() ?? "unknown";
}

function madeBySubmission(origin: string): boolean {
  return SUBMISSION_DIR !== "" && origin.includes(SUBMISSION_DIR);
}

// ---- stillness: a wait that nothing can ever end -------------------------------------------
//
// A broken client often waits for something that can no longer happen: an answer the server
// already gave to somebody else, the exit of a process that is gone. Waiting the whole hang
// deadline for it costs seconds per test, so the detectors also ask whether anything at all
// could still move: the world is "still" when
//   - this worker holds no timer, immediate, socket, request or other async resource made by
//     the client or the test (the harness's own and vitest's are not counted), and
//   - every process the client started is either finished (exited, its pipes closed or ended) or a
//     fixture server that reports (--state) nothing scheduled of its own, has read every byte
//     the client wrote, whose every byte written reached the client, and that handled every
//     signal sent to it.
// Then no event can ever run in this worker again, so no promise of the client's can settle.
// A child that is not the fixture, or anything unknown, is never still: the wait then ends
// only at the deadline, as before. Still for STILL_POLLS polls in a row, unchanged, is hung.

/** Resource types not counted as the client's activity: promises and microtasks, and the
 * pipes and process handles of the children (judged through the fixture's report instead),
 * and terminals (the worker's own stdio, created lazily by whoever first prints). */
const UNTRACKED = new Set(["PROMISE", "TickObject", "Microtask", "PIPEWRAP", "PROCESSWRAP", "TTYWRAP"]);
/** Frames of code that is not the client's nor the test's: vitest and the grader's harness. */
const HARNESS = /[\\/]node_modules[\\/](?:vitest|@vitest|tinypool|birpc)[\\/]|[\\/]grader[\\/]child[\\/]|[\\/]fixtures[\\/]index\.ts/;
const STILL_POLLS = 5;

class StillWatch {
  private last: string | undefined;
  private count = 0;
  /** True once the world has been still, unchanged, for STILL_POLLS polls in a row. */
  observe(): boolean {
    const now = stillness();
    if (now === undefined || now !== this.last) this.count = 0;
    this.last = now;
    if (now !== undefined) this.count += 1;
    return this.count >= STILL_POLLS;
  }
}

// A fingerprint of a still world, or undefined while anything could still happen.
export function stillness(): string | undefined {
  const t = tracker();
  if (!t.installed) return undefined; // nothing is counted: anything could still happen
  for (const timer of t.live.values()) if (!timer.resource._destroyed && !HARNESS.test(timer.origin)) return undefined;
  for (const other of t.others.values()) if (!HARNESS.test(other.origin)) return undefined;
  const parts: string[] = [];
  for (const p of liveProcesses()) {
    const part = stillProcess(p);
    if (part === undefined) return undefined;
    parts.push(part);
  }
  return parts.join(";");
}

interface FixtureState {
  busy: number;
  in: number;
  out: number;
  err: number;
  eof: boolean;
  signals: number;
}

// One unfinished process's part of the fingerprint, or undefined when it may still act.
function stillProcess(p: StartedProcess): string | undefined {
  const { child } = p;
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null || !p.stateFile) return undefined;
  let state: FixtureState;
  try {
    state = JSON.parse(readFileSync(p.stateFile, "utf8")) as FixtureState;
  } catch {
    return undefined;
  }
  if (state.busy !== 0 || state.signals !== p.signals || !sleepingQuietly(child.pid)) return undefined;
  if (child.stdout && state.out !== p.out) return undefined;
  if (child.stderr && state.err !== p.err) return undefined;
  const stdin = child.stdin as (NodeJS.WritableStream & { bytesWritten?: number; destroyed?: boolean; writableEnded?: boolean }) | null;
  if (stdin && !state.eof && (stdin.writableEnded || stdin.destroyed || stdin.bytesWritten !== state.in)) return undefined;
  return `${child.pid}:${state.in}:${state.out}:${state.err}:${state.eof}`;
}

// The kernel's view of a live process: asleep (waiting for input), with no signal pending.
// A process that is running, stopped, dying or dead, or that has a signal on its way (sent by
// someone this worker cannot see, a `kill` command say), may still do something. Where
// there is no /proc to ask, nothing is still.
function sleepingQuietly(pid: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return false;
  }
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(status)?.[1];
  return field("State") === "S" && /^0+$/.test(field("SigPnd") ?? "") && /^0+$/.test(field("ShdPnd") ?? "");
}

/** The timers alive right now, to compare against later. */
export function timerSnapshot(): Set<unknown> {
  return new Set(tracker().live.keys());
}

// Timers created by files of the client under test (since `before`, when given) that have
// neither fired nor been cleared.
export function liveClientTimers(before?: Set<unknown>): string[] {
  const mine: string[] = [];
  const { live } = tracker();
  for (const [asyncId, timer] of live) {
    if (timer.resource._destroyed) {
      live.delete(asyncId);
      continue;
    }
    if (before?.has(asyncId)) continue;
    if (madeBySubmission(timer.origin)) mine.push(`${timer.kind} ${timer.origin}`);
  }
  return mine;
}

// Abort listeners on a signal, counting those on the signals derived from it with
// AbortSignal.any (and on theirs): a listener on `AbortSignal.any([signal])` keeps its
// closure alive for as long as `signal` lives, exactly like one on `signal` itself.
export function abortListeners(signal: AbortSignal): number {
  const seen = new Set<AbortSignal>();
  const count = (s: AbortSignal): number => {
    if (seen.has(s)) return 0;
    seen.add(s);
    let n = getEventListeners(s, "abort").length;
    for (const ref of tracker().dependents.get(s) ?? []) {
      const dependent = ref.deref();
      if (dependent && !dependent.aborted) n += count(dependent);
    }
    return n;
  };
  return count(signal);
}

// Abort listeners on AbortSignal.timeout signals the client under test made that have not
// fired yet: a settled request must not leave one behind (it holds the request's closure
// until the timeout fires).
export function liveClientTimeoutListeners(): number {
  let n = 0;
  for (const tracked of tracker().timeoutSignals) {
    const signal = tracked.signal.deref();
    if (signal && !signal.aborted && madeBySubmission(tracked.origin)) n += getEventListeners(signal, "abort").length;
  }
  return n;
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
  /** The fixture command the client was given. */
  command: { executable: string; args: string[] };
  /** Timers alive when the harness was made; leaks are counted against it. */
  timersBefore: Set<unknown>;
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
  const command = ws.command({ selfDestructMs: 60_000, ...fixture });
  const client = make(command);
  onTestFinished(async () => {
    // A correct close() against these fixtures takes milliseconds; waiting the hang deadline
    // (not more) keeps a client whose close() never settles from costing seconds per test.
    const closed = await settleWithin(Promise.resolve().then(() => client.close()), "close() during cleanup", HANG_MS).catch(() => undefined);
    await ws.cleanup({ closeResolved: closed?.status === "fulfilled" });
  });
  return { client, ws, command, timersBefore, pids: () => ws.pids(), log: () => ws.log() };
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

/** The starter's name for the id → pending-request map TODO. */
export const PENDING_MAP_TODO = "实现 MCP pending request map";

// Runs a step of a test that leans on another part of the client than the one the test
// grades (a probe of id matching that needs a timeout to fire, say). When the step fails,
// the failure says which TODO it needs first, instead of blaming the test's own dimension.
export async function needs<T>(todo: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(msg("needsTodo", { todo, detail }));
  }
}

/** Throws the message unless the condition holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

// Asserts a rejection carries the expected McpError code.
export function expectCode(error: any, code: string, label: string): void {
  check(error?.code === code, msg("wrongCode", { label, expected: code, actual: error?.code ?? String(error) }));
}
