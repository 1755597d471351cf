// Shared machinery of the lesson 13 evidence tests: a per-test workspace whose program
// records every pid it starts (killed at the test's end, pass or fail), a hang detector
// (a broken runner fails with "hung: …" instead of hanging the run), and counters for the
// timers and abort listeners the runner under test leaves behind.

import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { getEventListeners } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";
import { waitsOn, type Settled } from "../../../grader/lab-waits.ts";
import { isPidAlive } from "../../../grader/procs.ts";
import { msg } from "./messages.ts";

/** How long a test waits for a run that should already have ended (ms). */
export const HANG_MS = Number(process.env.LAB_HANG_MS ?? 2_000);
/** Directory of the runner under test (set by the vitest config). */
export const SUBMISSION_DIR = process.env.LAB_SUBMISSION_DIR ?? "";
/** The program the tests run. */
export const PROGRAM = fileURLToPath(new URL("./program.mjs", import.meta.url));

export class HungError extends Error {
  constructor(label: string, ms: number, waitedAt: Error) {
    super(msg("hung", { label, ms }));
    this.name = "HungError";
    const frames = (waitedAt.stack ?? "").split("\n").slice(1).filter((line) => !line.includes("support.ts") && !line.includes("lab-waits.ts"));
    if (frames.length > 0) this.stack = [`${this.name}: ${this.message}`, ...frames].join("\n");
  }
}

const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;

export type { Settled };

// Waits for a promise to settle, failing with "hung: …" after `ms` instead of hanging.
export async function settleWithin<T>(promise: Promise<T>, label: string, ms = HANG_MS): Promise<Settled<T>> {
  const waitedAt = new Error();
  let timer: ReturnType<typeof setTimeout> | undefined;
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

export const { within, rejection } = waitsOn(settleWithin, (label, value) => msg("shouldReject", { label, value }));

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

export function expectCode(error: any, code: string, label: string): void {
  check(error?.code === code, msg("wrongCode", { label, expected: code, actual: error?.code ?? String(error) }));
}

export function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, "abort").length;
}

/** A process counts as gone once it no longer exists or is a zombie waiting to be reaped. */
export const isAlive = isPidAlive;

export interface Workspace {
  dir: string;
  /** Arguments that start the program in one mode, recording its pids here. */
  programArgs(mode: string, ...rest: string[]): string[];
  pids(): number[];
  alive(): number[];
}

// A temp folder with a pid file; at the test's end every recorded pid is SIGKILLed and the
// folder removed, so a failing runner leaks nothing into the next test.
export function workspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), "lab13-"));
  const pidFile = join(dir, "pids.txt");
  const pids = () => {
    try {
      return readFileSync(pidFile, "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  onTestFinished(async () => {
    // Under the grader, say which recorded processes outlived the test (its orphan probe
    // reads these records), then kill them.
    const record = { dir, test: process.env.LAB_CURRENT_TEST ?? null, pids: pids(), alive: pids().filter(isAlive) };
    // In a grade the record goes into the test's result (grader/child/setup.ts), else to the file.
    const take = (globalThis as Record<symbol, unknown>)[Symbol.for("lab.record")] as ((kind: string, r: object) => void) | undefined;
    const log = process.env.LAB_WORKSPACE_LOG;
    if (take) take("workspaces", record);
    else if (log) appendFileSync(log, `${JSON.stringify(record)}\n`);
    for (const pid of pids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    const deadline = Date.now() + 2_000;
    while (pids().some(isAlive) && Date.now() < deadline) await new Promise((r) => realSetTimeout(r, 10));
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    programArgs: (mode, ...rest) => [PROGRAM, "--pid-file", pidFile, mode, ...rest],
    pids,
    alive: () => pids().filter(isAlive),
  };
}

// ---- timers made by the runner under test -------------------------------------------

const live = new Map<object, string>();

// Wraps setTimeout/clearTimeout so every timer made from a file of the runner under test is
// recorded until it fires or is cleared. Installed once per worker by setup.ts.
export function installTimerTracker(): void {
  const g = globalThis as any;
  if (g.setTimeout.__lab13Tracked) return;
  const origSet = g.setTimeout;
  const origClear = g.clearTimeout;
  const wrapped = function (this: unknown, callback: any, ms?: number, ...args: unknown[]) {
    if (typeof callback !== "function") return origSet.call(this, callback, ms, ...args);
    const frame = (new Error().stack ?? "").split("\n").slice(2).find((l) => !l.includes("support.ts") && !l.includes("node:")) ?? "";
    const handle = origSet.call(this, function (this: unknown, ...inner: unknown[]) {
      live.delete(handle);
      return callback.apply(this, inner);
    }, ms, ...args);
    if (SUBMISSION_DIR && frame.includes(SUBMISSION_DIR)) live.set(handle, frame.trim());
    return handle;
  };
  Object.assign(wrapped, origSet, { __lab13Tracked: true });
  g.setTimeout = wrapped;
  g.clearTimeout = function (this: unknown, handle: unknown) {
    if (handle && typeof handle === "object") live.delete(handle);
    return origClear.call(this, handle);
  };
}

/** Where the runner's live timers were made. */
export function liveTimers(): string[] {
  return [...live.values()];
}

// The end of every evidence test: no timer of the runner and no recorded process left.
export function expectNothingLeft(ws: Workspace, label: string): void {
  const timers = liveTimers();
  check(timers.length === 0, msg("timersLeft", { when: label, count: timers.length, where: timers.slice(0, 2).join("; ") }));
  const alive = ws.alive();
  check(alive.length === 0, msg("aliveAfterSettle", { label, pids: alive.join(", ") }));
}
