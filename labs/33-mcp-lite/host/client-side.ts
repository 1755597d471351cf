// The observers' counts from wherever the client under test runs: this process when the
// tests import the client directly (LAB_CLIENT_HOST unset: the project's own suite, the
// mutation runs), or the client's host process in a grade (LAB_CLIENT_HOST=1), where each
// count is a synchronous query to the host. The test worker's own resources (the test's
// timers) are still counted here, for stillness.

import * as local from "../tests/observers.ts";
import * as recorder from "../probes/spawn-recorder.ts";
import type { SpawnCall } from "../probes/spawn-recorder.ts";
import { currentHost, decodeValue, hostChannel, type HostChannel } from "./channel.ts";
import { signalId } from "./signals.ts";
import { realSetTimeout, untracked } from "../tests/observers.ts";

/** True when the client under test runs in a host process of its own. */
export const HOSTED = process.env.LAB_CLIENT_HOST === "1";

function ask<T>(what: string, arg?: unknown, fallback?: T, afterTurn = false): T {
  const host = currentHost();
  if (!host) return fallback as T;
  const reply = host.request(afterTurn ? { t: "query", what, arg, afterTurn } : { t: "query", what, arg });
  if (!reply.ok) throw new Error(String(reply.error?.message ?? "the client's host did not answer"));
  return decodeValue(reply.value) as T;
}

/** True when the client's host process has ended (a crash, memory exhaustion) and no other has started since. */
export function hostEnded(): boolean {
  return HOSTED && currentHost() === undefined;
}

export function installTimerTracker(): void {
  local.installTimerTracker();
}

// A snapshot of the host's timers is taken by the host itself: the worker sends a numbered
// mark, in order with the requests around it (so it is taken after everything the test asked
// before and before anything it asks after), and never waits for it. liveClientTimers() names
// the mark; a host that never saw it (none was running, or it was replaced since) counts
// every timer of the client's as new.
class TimerMark {
  constructor(readonly id: number) {}
}
let marks = 0;

/** The client's timers alive now (opaque; compare with liveClientTimers). */
export function timerSnapshot(): Set<unknown> {
  if (!HOSTED) return local.timerSnapshot();
  const mark = new TimerMark(++marks);
  void currentHost()?.send({ t: "query", what: "timerMark", arg: mark.id });
  return new Set([mark]);
}

export function liveClientTimers(before?: Set<unknown>): string[] {
  if (!HOSTED) return local.liveClientTimers(before);
  const mark = before ? [...before].find((each): each is TimerMark => each instanceof TimerMark) : undefined;
  return ask<string[]>("liveClientTimers", mark ? { mark: mark.id } : undefined, []);
}

/** The delays of the client's live timers made since `before` (the snapshot's mark). */
export function clientTimerDelays(before?: Set<unknown>): number[] {
  if (!HOSTED) return local.clientTimerDelays(before);
  const mark = before ? [...before].find((each): each is TimerMark => each instanceof TimerMark) : undefined;
  const delays = ask<unknown>("clientTimerDelays", mark ? { mark: mark.id } : undefined, []);
  // (The host's report: numbers only.)
  return Array.isArray(delays) ? delays.filter((d): d is number => typeof d === "number" && Number.isFinite(d)) : [];
}

export function abortListeners(signal: AbortSignal): number {
  if (!HOSTED) return local.abortListeners(signal);
  const id = signalId(signal);
  return id === undefined ? 0 : ask<number>("abortListeners", id, 0);
}

export function liveClientTimeoutListeners(): number {
  return HOSTED ? ask<number>("liveClientTimeoutListeners", undefined, 0) : local.liveClientTimeoutListeners();
}

// Still only when both sides are: this worker holds nothing of the test's that could fire,
// the host reports the client's side still, and every message the host posted before it
// answered has arrived here (an outcome on its way is something that will still happen).
//
// Each ask is a round trip to the host, and the hang detectors poll every 10 ms while a test
// waits: after the host said "not still", the next polls answer "not still" without asking,
// one more poll each time, up to MAX_SKIPPED_POLLS (asks at polls 1, 3, 6, 10, 14, …). A
// client that is working (every wait of a correct client) is asked a quarter as often; a
// still world, which stays still (nothing can ever move it), is seen at most
// MAX_SKIPPED_POLLS polls later, and only asked answers count towards the polls in a row
// that call a wait hung.
const MAX_SKIPPED_POLLS = 3;
let skipped = 0;
let toSkip = 0;
export function stillness(): string | undefined {
  const here = local.stillness();
  if (!HOSTED || here === undefined) return here;
  if (skipped < toSkip) {
    skipped += 1;
    return undefined;
  }
  const host = currentHost();
  const there = ask<{ still: string | null; posted: number } | null>("stillness", undefined, null);
  if (!host || !there || there.still === null || host.received < there.posted) {
    skipped = 0;
    toSkip = Math.min(toSkip + 1, MAX_SKIPPED_POLLS);
    return undefined;
  }
  skipped = 0;
  toSkip = 0;
  return `${here}|${there.still}`;
}

/**
 * How long each thread an answer passes through on its way to a test has spent runnable but
 * waiting for a CPU so far (ms, Linux /proc/.../schedstat), by thread id as this worker sees
 * it: the client's host (its main thread), the processes the host started and has not reaped
 * (the servers or relays the client spawned, whose output the answer is), this worker's
 * bridge thread, which reads the host's output, and this worker's main thread, where the
 * fixture pool serves the relays. Undefined where the client runs in this
 * process or there is no /proc. Read by the hang detectors' clock only: the host cannot write
 * these files.
 */
export function pathDelays(): Map<number, number> | undefined {
  const host = HOSTED ? currentHost() : undefined;
  return host ? pathDelaysOf(host) : undefined;
}

/** pathDelays() for a given host (tests). */
export function pathDelaysOf(host: HostChannel): Map<number, number> | undefined {
  const pid = host.pid;
  if (pid === undefined) return undefined;
  const delays = new Map<number, number>();
  const add = (tid: number, file: string) => {
    const ms = local.runDelayMs(file);
    if (ms !== undefined) delays.set(tid, ms);
  };
  add(pid, `/proc/${pid}/schedstat`);
  if (delays.size === 0) return undefined;
  for (const child of local.childrenOf(pid)) add(child, `/proc/${child}/schedstat`);
  if (host.bridgeTid !== undefined) add(host.bridgeTid, `/proc/self/task/${host.bridgeTid}/schedstat`);
  // And this worker's main thread: the fixture pool runs there (fixtures/pool.mjs), so every
  // server's part of an answer (reading the relay's hello and lines, answering, exiting) waits
  // for it. (Its late polls are capped too: a step counts at most MAX_STEP_MS.)
  add(process.pid, "/proc/self/schedstat");
  return delays;
}

export function startedCount(): number {
  return HOSTED ? ask<number>("startedCount", undefined, 0) : recorder.startedCount();
}

/**
 * The processes started so far, counted once the client has finished with everything asked of
 * it until now: the host's turn that handled it, and the microtasks after (a spawn made
 * "at once", even behind an `await` of something already settled, is in the count; one that
 * waits for a process, a pipe or a timer is not).
 */
export async function startedCountAfterTurn(): Promise<number> {
  if (HOSTED) return ask<number>("startedCount", undefined, 0, true);
  await new Promise((resolve) => untracked(() => setImmediate(resolve)));
  return recorder.startedCount();
}

export function processesStarted(): SpawnCall[] {
  return HOSTED ? ask<SpawnCall[]>("processesStarted", undefined, []) : recorder.processesStarted();
}

export function spawnCalls(): SpawnCall[] {
  return HOSTED ? ask<SpawnCall[]>("spawnCalls", undefined, []) : recorder.spawnCalls();
}

export function resetSpawnCalls(): void {
  if (HOSTED) ask("resetSpawnCalls");
  else recorder.resetSpawnCalls();
}

/** The pid of the process the client under test runs in, as a server it spawns sees it (its parent pid). */
export function clientProcessPid(): number | undefined {
  return HOSTED ? currentHost()?.nsPid : process.pid;
}

// Aborts `controller` after `ms` on a timer in the client's own process, so that it races the
// client's timers of the same duration in the order they were made (timers of one process
// fire in creation order; across processes nothing orders them). The signal must have been
// handed to the client already. Returns a cancel function.
export function abortAfter(controller: AbortController, ms: number): () => void {
  if (!HOSTED) {
    const timer = untracked(() => realSetTimeout(() => controller.abort(), ms));
    return () => clearTimeout(timer);
  }
  const id = signalId(controller.signal);
  if (id === undefined) throw new Error("abortAfter: hand the signal to the client first");
  ask("abortAfter", { id, ms });
  return () => ask("cancelAbortAfter", id);
}

/**
 * The leak check made from outside the client's process (a grade only; `undefined` when the
 * client runs in this process): the host lets go of its own handles and must then exit by
 * itself within `boundMs`. The verdict is the exit, which the host's code cannot stage without
 * exiting; `resources` and `timers` (when it did not) are the host's own words, for the message.
 */
export async function drainHost(boundMs: number): Promise<Awaited<ReturnType<NonNullable<ReturnType<typeof currentHost>>["drain"]>> | undefined> {
  if (!HOSTED) return undefined;
  const host = currentHost();
  if (!host) throw new Error("the client's host is gone: nothing is left to check");
  const outcome = await host.drain(boundMs);
  // The drained host is gone: its successor boots now, while this test ends and the next one
  // starts, instead of inside the next test's first request (a host's start is the longest
  // wait a test has on a loaded machine). It is this worker's host like any other.
  try {
    hostChannel();
  } catch {
    // (no client to host, or the gate closed: the next use says why)
  }
  return outcome;
}
