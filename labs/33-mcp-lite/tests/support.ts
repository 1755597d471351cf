// Shared machinery of the lab's evidence tests: start a client against a scripted fixture
// server with per-test cleanup, detect promises that never settle (instead of hanging),
// and count the timers and abort listeners the client under test leaves behind.

import { waitsOn, type Settled } from "../../../grader/lab-waits.ts";
import { onTestFinished } from "vitest";
import { msg } from "./messages.ts";
import { abortListeners, clientTimerDelays, installTimerTracker, liveClientTimeoutListeners, liveClientTimers, pathDelays, processesStarted, resetSpawnCalls, spawnCalls, startedCount, stillness, timerSnapshot } from "../host/client-side.ts";
import { readSmall, realSetTimeout, runDelayMs, SUBMISSION_DIR, untracked } from "./observers.ts";
import { createFixtureWorkspace, isAlive, poolOn, type FixtureOptions, type FixtureWorkspace, type LogEntry } from "../../../fixtures/index.ts";

/** How long a test waits for a promise the fixture has already answered (ms). */
export const HANG_MS = Number(process.env.LAB_HANG_MS ?? 2_000);

export { SUBMISSION_DIR };
export { abortListeners, clientTimerDelays, installTimerTracker, liveClientTimeoutListeners, liveClientTimers, processesStarted, resetSpawnCalls, spawnCalls, stillness, timerSnapshot };

export type { Settled };

export class HungError extends Error {
  /** `still`: called early because nothing could ever settle the promise (see stillness()). */
  constructor(label: string, ms: number, waitedAt?: Error, still = false) {
    super(still ? msg("hungStill", { label }) : msg("hung", { label, ms }));
    this.name = "HungError";
    // Point at the test line that waited (not at this file's timer), so a report shows
    // which call never settled and where the test made it.
    const frames = (waitedAt?.stack ?? "").split("\n").slice(1).filter((line) => !line.includes("support.ts") && !line.includes("lab-waits.ts"));
    if (frames.length > 0) this.stack = [`${this.name}: ${this.message}`, ...frames].join("\n");
  }
}

// The hang detectors' clock: it measures time the client had to run, not wall time in which
// nothing could run. It advances in polls of POLL_MS and counts at most MAX_STEP_MS per poll
// (a poll that comes late, this process starved of CPU, adds little), and from each step it
// takes away the longest time any thread on the answer's path spent runnable but waiting for
// a CPU meanwhile, as the kernel counts it (/proc/.../schedstat, read here: the host cannot
// write it): the client's host, the servers or relays it started, the bridge that carries the
// host's messages to this worker, and this worker's main thread, where the fixture pool runs
// (client-side.ts, pathDelays). On a machine loaded far past
// its cores any of them can wait seconds of wall time for a turn while this worker's polls
// come on time; a client that waits on nothing, or loops, is not waiting for a CPU, and its
// time counts. On an idle machine, and where there is no /proc, it is the wall clock.
const POLL_MS = 10;
const MAX_STEP_MS = 50;

/** What the clock reads: the time, and how long each thread on the answer's path has waited for a CPU so far (ms, by thread id). */
export interface ClockSources {
  now(): number;
  pathDelays(): Map<number, number> | undefined;
}
const KERNEL: ClockSources = { now: () => Date.now(), pathDelays };

const TRACING = process.env.LAB_HANG_TRACE === "1";

export class HangClock {
  elapsed = 0;
  private last: number;
  private delays: Map<number, number> | undefined;
  /** Where the time went, kept only when LAB_HANG_TRACE is set (a diagnostic for `npm run corpus:stress`). */
  readonly trace = TRACING ? { start: 0, polls: 0, biggest: 0, takenOff: 0, first: new Map<number, number>(), ownWait: runDelayMs() ?? 0 } : undefined;
  /** `delays`: the path's reading at this moment, where the caller already took one. */
  constructor(private readonly sources: ClockSources = KERNEL, delays = sources.pathDelays()) {
    this.last = sources.now();
    this.delays = delays;
    if (this.trace) this.trace.start = this.last;
  }
  private remember(delays: Map<number, number> | undefined): void {
    for (const [tid, ms] of delays ?? []) if (!this.trace!.first.has(tid)) this.trace!.first.set(tid, ms);
  }
  /** Adds the time since the last call (capped, less the longest wait for a CPU on the answer's path) when `counting`, and returns the total. */
  advance(counting = true, delays = this.sources.pathDelays()): number {
    const now = this.sources.now();
    // Only a thread read both times is compared (one that ended or began meanwhile has no
    // step to give); the waits overlap in time, so the longest, not their sum, is taken off.
    let starved = 0;
    for (const [tid, ms] of delays ?? []) {
      const before = this.delays?.get(tid);
      if (before !== undefined) starved = Math.max(starved, ms - before);
    }
    const step = Math.min(now - this.last, MAX_STEP_MS) - starved;
    if (this.trace) {
      this.remember(this.delays);
      if (counting) {
        this.trace.polls += 1;
        this.trace.biggest = Math.max(this.trace.biggest, step);
        this.trace.takenOff += Math.min(starved, Math.min(now - this.last, MAX_STEP_MS));
      }
    }
    this.last = now;
    this.delays = delays;
    if (counting) this.elapsed += Math.max(step, 0);
    return this.elapsed;
  }
  /** The trace, as one short line (empty when not tracing): wall, counted, polls, biggest step, taken off, this thread's own wait, then each thread of the path: id/name:state:its wait. */
  describe(extra = ""): string {
    const t = this.trace;
    if (!t) return "";
    const now = this.sources.pathDelays();
    const read = (tid: number, file: string) => readSmall(`/proc/${tid}/${file}`) ?? "";
    const threads = [...t.first]
      .map(([tid, ms]) => [tid, (now?.get(tid) ?? ms) - ms] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([tid, ms]) => `${tid}/${read(tid, "comm").trim().slice(0, 9) || "gone"}:${read(tid, "stat").replace(/^.*\) /s, "").slice(0, 1) || "-"}:${Math.round(ms)}`)
      .join(" ");
    return `[trace w${this.sources.now() - t.start} c${Math.round(this.elapsed)} p${t.polls} big${Math.round(t.biggest)} off${Math.round(t.takenOff)} own${Math.round((runDelayMs() ?? 0) - t.ownWait)}${extra} | ${threads}] `;
  }
}

// The detectors' own timer is not activity of the client's: it is not tracked at all.
const poll = () =>
  new Promise((resolve) => {
    untracked(() => realSetTimeout(resolve, POLL_MS));
  });

// Waits for a promise to settle, and fails the test with "hung: …" instead of hanging
// when it does not. The deadline only bites on broken clients: every wait in the
// evidence tests is for an answer the fixture already sent or a deadline the client set.
// `stillness: false` for a wait that only the clock may end: the host's report that nothing
// could settle the promise is not taken (a wait whose verdict must not rest on the host's word).
// `until`: a wait whose outcome no longer matters (the model's side steps once its run has
// already failed) ends as hung as soon as it says so.
export async function settleWithin<T>(promise: Promise<T>, label: string, ms = HANG_MS, { stillness = true, until }: { stillness?: boolean; until?: () => boolean } = {}): Promise<Settled<T>> {
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
      if (outcome === undefined && stillness && still.observe()) throw new HungError(label, ms, waitedAt, true);
      if (outcome === undefined && until?.()) throw new HungError(label, ms, waitedAt, true);
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
  const settled = promise.then(
    (value) => (outcome = { status: "fulfilled", value }),
    (reason) => (outcome = { status: "rejected", reason }),
  );
  // Where the servers are pooled, a server's pid is in its workspace's pid file from the
  // moment its relay connects (a C program: a millisecond after the spawn), written by this
  // process: the pid file says "started" at no cost. A real server writes its pid only once
  // Node has booted, so there the client's host is asked how many processes it started.
  const pooled = poolOn();
  const pidsBefore = h.pids().length;
  const startedBefore = pooled ? 0 : startedCount();
  const answersBefore = initializeAnswers(h.log());
  // (Both clocks start from one reading of the path: each costs a few /proc reads. A clock
  // never changes the map it is given: each later reading is a new one.)
  const startDelays = KERNEL.pathDelays();
  const client = new HangClock(KERNEL, startDelays);
  const server = new HangClock(KERNEL, startDelays);
  const still = new StillWatch();
  const waitedAt = new Error();
  // The count of started processes never falls: once it has grown it need not be asked again
  // (in a grade each ask is a round trip to the client's host).
  let started = false;
  const t0 = Date.now();
  let startedAt: number | undefined;
  let answeredAt: number | undefined;
  while (outcome === undefined) {
    // (Done as soon as it settles, not at the next poll: a test makes a hundred handshakes.)
    await Promise.race([settled, poll()]);
    if (outcome !== undefined) break;
    if (still.observe()) throw new HungError(label, ms, waitedAt, true);
    const answered = initializeAnswers(h.log()) > answersBefore;
    started ||= !answered && (h.pids().length > pidsBefore || (!pooled && startedCount() > startedBefore));
    if (TRACING) {
      startedAt ??= started ? Date.now() : undefined;
      answeredAt ??= answered ? Date.now() : undefined;
    }
    const serverTurn = started && !answered;
    // (One reading of the path for both clocks: each costs a few /proc reads.)
    const delays = KERNEL.pathDelays();
    if (client.advance(!serverTurn, delays) > ms) {
      const error = new HungError(label, ms, waitedAt);
      if (TRACING) error.message = client.describe(` st${startedAt === undefined ? "-" : startedAt - t0} an${answeredAt === undefined ? "-" : answeredAt - t0} srv${Math.round(server.elapsed)}`) + error.message;
      throw error;
    }
    if (server.advance(serverTurn, delays) > SERVER_TURN_MS) throw new HungError(label, ms + SERVER_TURN_MS, waitedAt);
  }
  if (outcome.status === "rejected") throw outcome.reason;
  return outcome.value;
}

/** Longest time a server's start-up or handshake answer may take before a wait gives up (ms). */
export const SERVER_TURN_MS = 10_000;
/**
 * The probes' clients' timeoutMs where no test wants a timeout: far beyond any wait the hang
 * clock allows, so that on a loaded machine (where the clock takes off the time the path
 * waited for a CPU) a call is judged by the harness, never cut short by the client's own
 * real-time deadline (a model-probe client once timed out an initialize() the server had
 * answered with an error, after a stall of more than 10 s under corpus:stress).
 */
export const SPARE_TIMEOUT_MS = 60_000;

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

const STILL_POLLS = 5;
/** How long a wait runs before it first asks whether the world is still (ms): most waits end
 *  sooner, and in a grade each ask is a round trip to the client's host that stalls this worker. */
const STILL_GRACE_MS = 50;

class StillWatch {
  private last: string | undefined;
  private count = 0;
  private readonly born = Date.now();
  /** True once the world has been still, unchanged, for STILL_POLLS polls in a row. */
  observe(): boolean {
    if (Date.now() - this.born < STILL_GRACE_MS) return false;
    const now = stillness();
    if (now === undefined || now !== this.last) this.count = 0;
    this.last = now;
    if (now !== undefined) this.count += 1;
    return this.count >= STILL_POLLS;
  }
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
  // A correct close() against these fixtures takes milliseconds; waiting the hang deadline
  // (not more) keeps a client whose close() never settles from costing seconds per test.
  const client = madeWithCleanup(ws, () => make(command), HANG_MS);
  return { client, ws, command, timersBefore, pids: () => ws.pids(), log: () => ws.log() };
}

// Makes a client on `ws` and registers its cleanup with the current test, pass or fail: close
// (bounded by `closeMs`), then kill whatever the fixture recorded and remove the workspace.
// Registered before the client is made, so a constructor that throws (a test of bad options)
// still has its workspace removed.
export function madeWithCleanup<C extends ClientLike>(ws: FixtureWorkspace, make: () => C, closeMs: number): C {
  let client: C | undefined;
  onTestFinished(async () => {
    const made = client;
    const closed = made && (await settleWithin(Promise.resolve().then(() => made.close()), msg("closeDuringCleanup"), closeMs).catch(() => undefined));
    await ws.cleanup({ closeResolved: !made || closed?.status === "fulfilled" });
  });
  client = make();
  return client;
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
