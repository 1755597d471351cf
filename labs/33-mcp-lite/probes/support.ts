// The rubric probes' harness: like the evidence tests' harness, but cleanup waits for a
// broken close() only as long as the hang detector does (a probe run stays fast on a client
// that never settles), and the seed that drives every random choice comes from LAB_SEED.

import { mkdirSync, symlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { McpClient } from "#submission/src/mcp-client.ts";
import { createFixtureWorkspace, isAlive, type FixtureOptions } from "../../../fixtures/index.ts";
import { abortListeners, check, HANG_MS, liveClientTimers, madeWithCleanup, SPARE_TIMEOUT_MS, timerSnapshot, type ClientLike, type Harness } from "../tests/support.ts";
import { pmsg } from "./messages.ts";

/** The seed of this run (the grader passes --seed as LAB_SEED). */
export const SEED = Number.isInteger(Number(process.env.LAB_SEED)) ? Number(process.env.LAB_SEED) : 1;

// mulberry32: a small seeded generator, so one seed always gives one sequence.
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Creates a client on a fresh fixture workspace; cleanup (close, bounded; then kill what the
// fixture recorded) is registered with the current test.
export function probeHarness<C extends ClientLike>(
  make: (command: { executable: string; args: string[] }) => C,
  fixture: FixtureOptions = {},
  spacedExecutable = false,
): Harness<C> {
  const timersBefore = timerSnapshot();
  const ws = createFixtureWorkspace("lab33-probe-");
  const command = ws.command({ selfDestructMs: 60_000, ...fixture });
  if (spacedExecutable) command.executable = spacedPath(ws.dir, command.executable);
  // A correct close() against these fixtures takes milliseconds; a broken one is already
  // reported by the probe, so cleanup does not wait the full hang deadline for it again.
  const client = madeWithCleanup(ws, () => make(command), HANG_MS / 2);
  return { client, ws, command, timersBefore, pids: () => ws.pids(), log: () => ws.log() };
}

// The server's program reached through a link in a folder of `dir` whose name has a space:
// a client that splits its executable at spaces ("npx server" style) starts another program.
export function spacedPath(dir: string, executable: string): string {
  const folder = join(dir, "server folder");
  mkdirSync(folder, { recursive: true, mode: 0o750 });
  const linked = join(folder, basename(executable));
  symlinkSync(executable, linked);
  return linked;
}

/** Throws unless no timer of the client is alive. */
export function expectNoClientTimers(h: Harness<ClientLike>, when: string): void {
  const timers = liveClientTimers(h.timersBefore);
  if (timers.length > 0) throw new Error(pmsg("timersLeft", { when, count: timers.length, where: timers.slice(0, 2).join("; ") }));
}

/** Pids the fixture recorded that are alive now. */
export function alivePids(h: Harness<ClientLike>): number[] {
  return h.pids().filter(isAlive);
}

// Collects errors that escape as uncaught exceptions or unhandled rejections until stop().
export function escapedErrors(): { errors: unknown[]; stop(): void } {
  const errors: unknown[] = [];
  const onError = (error: unknown) => errors.push(error);
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onError);
  return {
    errors,
    stop() {
      process.off("uncaughtException", onError);
      process.off("unhandledRejection", onError);
    },
  };
}

/** Resolves after `ms` on a timer the client's timer tracker does not attribute to the client. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Fixture options of a probe's server. */
export type Fixture = Parameters<typeof probeHarness>[1];

// The client under test on a fresh fixture, with a 10 s default deadline; `options` adds or
// overrides client options (env, closeTimeoutMs, timeoutMs, ...).
export function start(fixture: Fixture = {}, options: Record<string, unknown> = {}, spacedExecutable = false) {
  return probeHarness((command) => new McpClient({ ...command, timeoutMs: SPARE_TIMEOUT_MS, ...options }), fixture, spacedExecutable);
}

// Nothing pending, no abort listener on the given signals, no timer of the client left.
export function expectClean(h: ReturnType<typeof start>, when: string, signals: AbortSignal[]): void {
  check(h.client.pendingCount === 0, pmsg("pendingLeft", { when, count: h.client.pendingCount }));
  const listeners = signals.reduce((sum, s) => sum + abortListeners(s), 0);
  check(listeners === 0, pmsg("listenersLeft", { when, count: listeners }));
  expectNoClientTimers(h, when);
}
