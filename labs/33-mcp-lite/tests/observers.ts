// What the lab's tests count inside the process that runs the client under test: timers and
// other async resources (async_hooks), abort listeners on the caller's signals and on every
// signal derived from them, and whether anything at all could still move (stillness). Loaded
// where the client runs: the test worker itself when the client is imported directly, or the
// client's own host process (../host/) in a grade, where these counts are the host's report
// and are only one observer among several (see grader/README.md, threat model).
// Nothing here imports vitest: the host process has no test runner.

import { createHook } from "node:async_hooks";
import { getEventListeners as eventListeners } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { keptProcReader, PROC_READ_BYTES } from "../../../grader/procs.ts";
import { liveProcesses, type StartedProcess } from "../probes/spawn-recorder.ts";
import type { FixtureState } from "../../../fixtures/index.ts";

/** Directory of the client under test (set by the vitest config or the host). */
export const SUBMISSION_DIR = process.env.LAB_SUBMISSION_DIR ?? "";
// Taken once, when this module loads (before any submission code): a submission that later
// replaces events.getEventListeners or calls syncBuiltinESMExports does not change these.
const getEventListeners = eventListeners;
// ---- timers and abort signals -------------------------------------------------------

// Timers are seen through async_hooks: every Timeout is an async resource, whichever module
// made it (the global setTimeout, `import { setTimeout } from "node:timers"`,
// node:timers/promises, AbortSignal.timeout), so no way of creating one sidesteps the count.
export const realSetTimeout: typeof setTimeout = globalThis.setTimeout;
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

export interface Tracker {
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

export function tracker(): Tracker {
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

// A test worker whose client is in a host (a grade) reads its resources' origins only by file
// path (stillness): V8's own frames serve there, not vitest's source-mapping formatter (28 µs a
// resource, not 140). Elsewhere origins name lines in messages; the host's formatter is guarded.
const RAW_FRAMES = process.env.LAB_CLIENT_HOST === "1" && process.env.LAB_IN_HOST !== "1";

/** The bundled harness of the client's host, and every frame of the tracking itself. */
const HARNESS_BUNDLE = /\.lab-host[\\/]harness\.mjs/;
const OWN_FRAME = /(?:support|observers)\.ts|\.lab-host[\\/]harness\.mjs/;

/** How deep a resource's stack is read for its maker, at most. */
const FULL_STACK = 40;

// The first stack frame outside the harness and node's internals: who made the resource.
function creator(): string {
  if (RAW_FRAMES) return rawCreator();
  capturing = true;
  const limit = Error.stackTraceLimit;
  const formatter = Error.prepareStackTrace;
  try {
    Error.stackTraceLimit = FULL_STACK;
    if (RAW_FRAMES) (Error as { prepareStackTrace?: unknown }).prepareStackTrace = undefined;
    const stack = String(new Error().stack ?? "");
    const frames = stack.split("\n").slice(1);
    // (In the host the harness is one bundle, .lab-host/harness.mjs, the tracker included: its
    // frames are skipped too, and a resource nothing but the harness made reads "unknown".)
    const frame = frames.find((line) => /^\s+at /.test(line) && !OWN_FRAME.test(line) && !line.includes("node:") && !line.includes("spawn-recorder.ts"));
    if (frame) return frame.trim();
    // Nothing but the bundled harness (and node) made it: the harness's own, not the client's.
    const harness = frames.find((line) => HARNESS_BUNDLE.test(line));
    return harness?.trim() ?? "unknown";
  } catch {
    return "unknown";
  } finally {
    if (RAW_FRAMES) Error.prepareStackTrace = formatter;
    Error.stackTraceLimit = limit;
    capturing = false;
  }
}

// The same frame from V8's call sites, formatting only the one it returns: a worker makes a
// resource per socket read, file write and timer of its pooled servers, and formatting forty
// frames of each cost it more than the rest of the tracking together. The stack is taken
// SHORT_STACK frames deep first (V8 collects it frame by frame, and the maker is among the
// first few for nineteen resources in twenty), forty deep only when those held no maker.
const SHORT_STACK = 12;
function rawCreator(): string {
  return rawCreatorOf(SHORT_STACK) ?? rawCreatorOf(FULL_STACK) ?? "unknown";
}
// The maker among the first `depth` frames; undefined when they hold none and there may be more.
function rawCreatorOf(depth: number): string | undefined {
  const limit = Error.stackTraceLimit;
  const formatter = Error.prepareStackTrace;
  try {
    Error.stackTraceLimit = depth;
    Error.prepareStackTrace = (_error, sites) => sites;
    const holder: { stack?: unknown } = {};
    Error.captureStackTrace(holder, rawCreator);
    const sites = holder.stack;
    if (!Array.isArray(sites)) return "unknown";
    let harness: NodeJS.CallSite | undefined;
    for (const site of sites as NodeJS.CallSite[]) {
      const file = site.getFileName() ?? "";
      if (file.startsWith("node:") || file.includes("spawn-recorder.ts")) continue;
      if (OWN_FRAME.test(file)) {
        if (!harness && HARNESS_BUNDLE.test(file)) harness = site;
        continue;
      }
      return `at ${String(site)}`;
    }
    if (sites.length >= depth && depth < FULL_STACK) return undefined;
    return harness ? `at ${String(harness)}` : "unknown";
  } catch {
    return "unknown";
  } finally {
    Error.prepareStackTrace = formatter;
    Error.stackTraceLimit = limit;
  }
}

let capturing = false;

// In the client's host process, before the submission loads: Error.prepareStackTrace becomes
// an accessor this module owns (and nobody can redefine), so a submission that installs its
// own formatter, or a sticky one, cannot hide or fake the frames that say who made a timer.
// Its formatter still works for its own errors, just never while the tracker looks.
export function guardStackTraces(): void {
  let installed: unknown = Error.prepareStackTrace;
  Object.defineProperty(Error, "prepareStackTrace", {
    configurable: false,
    enumerable: false,
    get: () => (capturing ? undefined : installed),
    set: (value: unknown) => {
      installed = value;
    },
  });
}

function madeBySubmission(origin: string): boolean {
  // In the host, everything that is not the harness is the submission's: a frame it hid
  // (no stack at all) counts against it, not for it.
  if (IN_HOST) return !HARNESS.test(origin) && !TOOLING.test(origin);
  return SUBMISSION_DIR !== "" && origin.includes(SUBMISSION_DIR);
}

/** True in the client's host process (../host/host-main.ts). */
const IN_HOST = process.env.LAB_IN_HOST === "1";
/** The TypeScript loader, present only in the host. */
const TOOLING = /[\\/]node_modules[\\/]tsx[\\/]/;

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
 * terminals (the worker's own stdio, created lazily by whoever first prints), and open file
 * handles: a handle schedules nothing by itself (each read, write and close of it is a request
 * of its own, FSREQPROMISE or FILEHANDLECLOSEREQ, and counted), and Node's module loader keeps
 * the handle of every file it read until it is collected (a worker that imports the
 * precompiled harness natively, grader/harness-mirror.mjs, reads dozens). */
const UNTRACKED = new Set(["PROMISE", "TickObject", "Microtask", "PIPEWRAP", "PROCESSWRAP", "TTYWRAP", "FILEHANDLE"]);
/** Frames of code that is not the client's nor the test's: vitest and the grader's harness, and
 *  the fixture pool (a pooled server's timers and sockets are this worker's; whether the server
 *  may still act is its stillness report's to say, as for a real one). */
const HARNESS = /[\\/]node_modules[\\/](?:vitest|@vitest|tinypool|birpc)[\\/]|[\\/]grader[\\/]child[\\/]|[\\/]fixtures[\\/](?:index\.ts|pool\.mjs)|[\\/]labs[\\/]33-mcp-lite[\\/]host[\\/]|[\\/]\.lab-host[\\/]harness\.mjs|[\\/]grader[\\/]sandbox[\\/]|[\\/]node_modules[\\/]tsx[\\/]/;
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


// A fixture server that exited while children of its own still hold its stdout and stderr
// (the grandchild scenarios): nothing more comes through those pipes while every child it
// recorded is gone or asleep with no signal pending, the way a live server is judged (its
// self-destruct timer aside). Any other exited process with open pipes may still write.
function exitedStill(p: StartedProcess): string | undefined {
  if (!p.stateFile || !p.pidFile) return undefined;
  let pids: number[];
  try {
    pids = readFileSync(p.pidFile, "utf8").split("\n").map(Number).filter((pid) => Number.isSafeInteger(pid) && pid > 0);
  } catch {
    return undefined;
  }
  if (pids[0] !== p.child.pid) return undefined;
  const children = pids.slice(1);
  for (const pid of children) if (existsSync(`/proc/${pid}`) && !sleepingQuietly(pid)) return undefined;
  return `${p.child.pid}:exited:${children.join(",")}`;
}

// One unfinished process's part of the fingerprint, or undefined when it may still act.
function stillProcess(p: StartedProcess): string | undefined {
  const { child } = p;
  if (child.pid !== undefined && (child.exitCode !== null || child.signalCode !== null)) return exitedStill(p);
  if (child.pid === undefined || !p.stateFile) return undefined;
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

/**
 * How long the thread behind `file` (/proc/<pid>/schedstat: a process's main thread) has been
 * runnable but waiting for a CPU so far, in ms (the second field, in ns); undefined where there
 * is no such file (not Linux, a process gone).
 */
export function runDelayMs(file = "/proc/self/schedstat"): number | undefined {
  const text = readSmall(file);
  if (text === undefined) return undefined;
  const ns = Number(text.split(" ")[1]);
  return Number.isFinite(ns) && ns >= 0 ? ns / 1e6 : undefined;
}

/**
 * The processes a process's main thread started and that have not been reaped (Linux
 * /proc/<pid>/task/<pid>/children), as many as its first 4 KiB name (about 600).
 */
export function childrenOf(pid: number): number[] {
  const text = readSmall(`/proc/${pid}/task/${pid}/children`) ?? "";
  const children = text.split(" ").map(Number).filter((child) => Number.isSafeInteger(child) && child > 0);
  // (A list cut short at the buffer's end may end in part of a pid.)
  if (text.length === PROC_READ_BYTES) children.pop();
  return children;
}

// The hang clock reads these every 10 ms: one read into one buffer, not readFileSync's
// size probe and growing reads for a /proc file that says it has none; and in a test worker
// through descriptors kept open (grader/procs.ts). Not in a client's host, where the
// submission could close or replace a kept descriptor.
const readKept = keptProcReader(process.env.LAB_IN_HOST === "1" ? 0 : 160);
/** A small /proc file's first 4 KiB (latin1), undefined where it cannot be read. */
export function readSmall(file: string): string | undefined {
  return readKept(file);
}

// The kernel's view of a live process: asleep (waiting for input), with no signal pending.
// A process that is running, stopped, dying or dead, or that has a signal on its way (sent by
// someone this worker cannot see, a `kill` command say), may still do something. Where
// there is no /proc to ask, nothing is still.
function sleepingQuietly(pid: number): boolean {
  // (The fields read here come long before the status file's first 4 KiB end; a field cut off
  // there would read as "may still act", never as still.)
  const status = readSmall(`/proc/${pid}/status`);
  if (status === undefined) return false;
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
  return [...newClientTimers(before)].map((timer) => `${timer.kind} ${timer.origin}`);
}

// The delays (ms) the client's timers made since `before` were set for, one number a timer
// that is still live (a Timeout's _idleTimeout: what setTimeout, setInterval or
// AbortSignal.timeout was given). Which deadline a call got, seen without waiting for it.
export function clientTimerDelays(before?: Set<unknown>): number[] {
  return [...newClientTimers(before)].map((timer) => Number((timer.resource as { _idleTimeout?: unknown })._idleTimeout)).filter(Number.isFinite);
}

// The live timers the client made since `before` (the table forgets those destroyed meanwhile).
function* newClientTimers(before?: Set<unknown>) {
  const { live } = tracker();
  for (const [asyncId, timer] of live) {
    if (timer.resource._destroyed) {
      live.delete(asyncId);
      continue;
    }
    if (!before?.has(asyncId) && madeBySubmission(timer.origin)) yield timer;
  }
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


/** Runs fn with the tracker ignoring what it creates (the harness's own poll timers). */
export function untracked<T>(fn: () => T): T {
  const t = tracker();
  t.internal = true;
  try {
    return fn();
  } finally {
    t.internal = false;
  }
}
