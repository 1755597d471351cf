// The test worker's side of its connection to the client host: one host per worker
// process, started on first use (and again after it died), through the bridge thread.
// request() is synchronous (Atomics.wait on the bridge's answer, bounded); send() is not:
// its outcome comes back as a "settled" message. Both keep one order, the order they were
// made in, so a getter read after a call sees the host after that call. And what the test
// does in one turn of its event loop the host does in one turn of its own: sends are
// batched until this turn ends (or until the next request, which travels with them), and
// the host handles a batch without reading anything in between. Two calls made back to
// back reach the client back to back, as they would in one process, whatever the load.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { msg } from "../tests/messages.ts";
import { decodeValue, errorFields, MAX_HOST_LINE_BYTES, type EncodedError } from "./wire.ts";
import { GONE_PID, PidView } from "./pid-view.ts";
import { gateSaysUnbundled, waitForGate } from "./gate-wait.ts";
import { realSetTimeout, untracked } from "../tests/observers.ts";

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(here, "..", "..", "..");
/** How much of the host's CPU time (ms) a synchronous request may cost before the test calls
 *  the host stuck; a host that uses almost none for as long is blocked (bridge.mjs). */
export const HOST_ANSWER_MS = Number(process.env.LAB_HOST_ANSWER_MS ?? 5_000);
/** Beyond the bridge's own last bound (six times the budget), for a bridge that cannot answer. */
const BRIDGE_SLACK_MS = 10_000;
const SAB_BYTES = 16 * 1024 * 1024;
/** A clock no test's fake timers replace (taken as this module loads). */
const monotonicMs = performance.now.bind(performance);

/** Pids of the host processes this worker started (the grader's stray check skips them). */
export const HOST_PIDS: Set<number> = ((globalThis as Record<symbol, unknown>)[Symbol.for("lab.hostPids")] ??= new Set<number>()) as Set<number>;
/** Hosts started whose pid has not come back yet: the stray check waits for these first, so a
 *  host started late in a test is never taken for a process of the submission's. */
const HOSTS_STARTING: Set<Promise<void>> = ((globalThis as Record<symbol, unknown>)[Symbol.for("lab.hostsStarting")] ??= new Set<Promise<void>>()) as Set<Promise<void>>;

export class HostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HostError";
  }
}

type Settle = (message: any) => void;

export class HostChannel {
  private readonly worker: Worker;
  private readonly control: Int32Array;
  private readonly data: Uint8Array;
  private seq = 0;
  private readonly waiting = new Map<number, Settle>();
  dead = false;
  /** Messages the host posted that arrived here (see the host's stillness answer). */
  received = 0;
  /** Why the host ended, once it has. */
  why = "";
  /** The host's pid as this worker sees it. */
  pid: number | undefined;
  /** The thread of this worker that reads the host's output (the bridge), as the kernel numbers it, where known. */
  bridgeTid: number | undefined;
  /** The host's pid in its own PID namespace (2 when the sandbox's launcher started it; else `pid`). */
  nsPid: number | undefined;
  /** The first process of the host's namespace, where it has one of its own (the host's parent). */
  init: number | undefined;
  /** The host's pids as this worker sees them (pid-view.ts). */
  private view: PidView | undefined;
  /** How the host process ended ({ code, signal }), once the bridge saw it exit. */
  exit: { code: number | null; signal: string | null } | undefined;
  /** Called once when the host ends, for whatever reason. */
  private readonly onEnd: Array<() => void> = [];
  /** Settles HOSTS_STARTING's entry for this host (its pid known, or the host gone). */
  private pidKnown: () => void = () => {};
  /** Functions handed to the host as stand-ins ({ $fn: id }). */
  readonly callbacks = new Map<number, (...args: unknown[]) => unknown>();

  private readonly answerMs: number;
  /** What the host was last given (one batch), named for the learner when it stops answering. */
  private lastGiven: string[] = [];
  /** Sends made in this turn of the event loop, not yet posted to the bridge. */
  private batch: object[] = [];
  private flushing = false;

  constructor(entry: string, options: { answerMs?: number } = {}) {
    this.answerMs = options.answerMs ?? HOST_ANSWER_MS;
    const starting = new Promise<void>((resolve) => (this.pidKnown = resolve));
    HOSTS_STARTING.add(starting);
    void starting.then(() => HOSTS_STARTING.delete(starting));
    // The bridge this worker started as it started (early-bridge.mjs), for its first host: it
    // gets the same start as a bridge started now.
    const early = takeEarlyBridge();
    const sab = early?.sab ?? new SharedArrayBuffer(8 + SAB_BYTES);
    this.control = new Int32Array(sab, 0, 2);
    this.data = new Uint8Array(sab, 8);
    const start = { ...hostStart(entry), answerMs: this.answerMs };
    if (early) {
      this.worker = early.worker;
      this.worker.postMessage({ t: "start", ...start });
    } else this.worker = new Worker(join(here, "bridge.mjs"), { workerData: { sab, ...start } });
    this.worker.unref();
    this.worker.on("message", (message) => this.onMessage(message));
    this.worker.on("error", (error) => this.fail(`the bridge to the client's host failed: ${error.message}`));
    const failed = early?.failed();
    if (failed) this.fail(`the bridge to the client's host failed: ${failed.message}`);
  }

  private onMessage(message: any): void {
    if (message.t === "pid") {
      this.pid = message.pid;
      this.nsPid = message.nsPid ?? message.pid;
      this.init = message.init;
      this.bridgeTid = typeof message.bridgeTid === "number" ? message.bridgeTid : undefined;
      this.view = new PidView(message.pid, this.nsPid!, message.init);
      HOST_PIDS.add(message.pid);
      if (message.init !== undefined) HOST_PIDS.add(message.init);
      this.pidKnown();
    } else if (message.t === "settled" || message.t === "reply" || message.t === "callback" || message.t === "escaped") {
      this.received += 1;
      this.deliver(message);
    } else if (message.t === "exit") {
      this.exit = { code: message.code ?? null, signal: message.signal ?? null };
      this.fail(endedMessage(message));
    } else if (message.t === "fault") {
      this.fail(String(message.message));
    }
  }

  // A message the host posted: a call's outcome, a callback, an escaped error.
  private deliver(message: any): void {
    if (message.t === "settled" || message.t === "reply") {
      const settle = this.waiting.get(message.seq);
      this.waiting.delete(message.seq);
      settle?.(message);
    } else if (message.t === "callback") {
      const fn = this.callbacks.get(message.fn);
      const args = decodeValue(message.args);
      fn?.(...(Array.isArray(args) ? args : []));
    } else if (message.t === "escaped") {
      const error = rebuild(message.error);
      const emit = process.emit as unknown as (event: string, ...args: unknown[]) => boolean;
      if (message.kind === "unhandledRejection") emit.call(process, "unhandledRejection", error, Promise.resolve());
      else emit.call(process, "uncaughtException", error, "uncaughtException");
    }
  }

  private fail(why: string): void {
    if (this.dead) return;
    this.dead = true;
    this.why = why;
    if (this.pid !== undefined) HOST_PIDS.delete(this.pid);
    if (this.init !== undefined) HOST_PIDS.delete(this.init);
    for (const [, settle] of this.waiting) settle({ ok: false, gone: true, error: { mcp: false, message: why } });
    this.waiting.clear();
    for (const end of this.onEnd.splice(0)) end();
    this.pidKnown();
  }

  /**
   * The leak check made from outside the host: the host lets go of its own handles, and the
   * host process must then exit by itself within `boundMs` (its event loop empty: nothing the
   * client made is left running). Whatever happens, the host is gone afterwards (stopped when
   * it did not exit); the next use starts a new one. When it did not exit, `resources` and
   * `timers` are what the host says keeps it running (its report: for the message only).
   */
  async drain(boundMs: number): Promise<{ exited: boolean; exit?: { code: number | null; signal: string | null }; resources: string[]; timers: string[] }> {
    const ended = new Promise<void>((resolve) => (this.dead ? resolve() : this.onEnd.push(resolve)));
    if (!this.dead) this.request({ t: "drain" });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<"bound">((resolve) => (timer = untracked(() => realSetTimeout(() => resolve("bound"), boundMs))));
    const outcome = await Promise.race([ended.then(() => "ended" as const), bound]);
    clearTimeout(timer);
    if (outcome === "ended") return { exited: this.exit !== undefined, exit: this.exit, resources: [], timers: [] };
    let resources: string[] = [];
    let timers: string[] = [];
    try {
      resources = decodeValue(this.request({ t: "query", what: "resources" }).value) as string[];
      timers = decodeValue(this.request({ t: "query", what: "liveClientTimers" }).value) as string[];
    } catch {
      // (the host could not say: the verdict stands without the details)
    }
    this.stop();
    await ended;
    return { exited: false, resources: Array.isArray(resources) ? resources.map(String) : [], timers: Array.isArray(timers) ? timers.map(String) : [] };
  }

  /** A request answered now: the host's reply, or a HostError when it cannot answer in time. */
  request(message: object): any {
    if (this.dead) throw new HostError(this.why || msg("hostGone"));
    const seq = ++this.seq;
    const sync = { ...message, seq, sync: true };
    const before = this.takeBatch();
    this.given([...before, sync]);
    this.worker.postMessage(before.length > 0 ? { t: "batch", messages: [...before, sync] } : sync);
    // The bridge decides when the host is stuck (from the host's CPU time: see bridge.mjs) and
    // then answers for it; this wait's own bound is only for a bridge that cannot answer at all.
    const bound = this.answerMs * 6 + BRIDGE_SLACK_MS;
    const reply = this.answerFor(seq, bound) ?? { stuck: "slow", ms: bound };
    if (reply.stuck) {
      this.worker.postMessage({ t: "stop" });
      const stuck = stuckMessage(reply, this.answerMs);
      this.fail(this.lastGiven.length > 0 ? `${stuck}${msg("hostLastGiven", { what: this.lastGiven.join(", ") })}` : stuck);
      throw new HostError(this.why);
    }
    if (reply.gone) {
      this.fail(reply.exit ? endedMessage(reply.exit) : msg("hostGone"));
      throw new HostError(this.why);
    }
    return reply;
  }

  /** A call whose outcome comes later (the "settled" message). */
  send(message: object): Promise<any> {
    if (this.dead) return Promise.resolve({ ok: false, gone: true, error: { mcp: false, message: this.why || msg("hostGone") } });
    const seq = ++this.seq;
    return new Promise((resolve) => {
      this.waiting.set(seq, (reply) => {
        if (reply.gone && !reply.error) reply.error = { mcp: false, message: reply.exit ? endedMessage(reply.exit) : msg("hostGone") };
        resolve(reply);
      });
      this.batch.push({ ...message, seq });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private takeBatch(): object[] {
    const taken = this.batch;
    this.batch = [];
    return taken;
  }

  private flush(): void {
    this.flushing = false;
    const messages = this.takeBatch();
    if (messages.length === 0 || this.dead) return;
    this.given(messages);
    this.worker.postMessage(messages.length === 1 ? messages[0] : { t: "batch", messages });
  }

  stop(): void {
    this.worker.postMessage({ t: "stop" });
  }

  // Names the submission's code a batch runs (calls, constructors, getters); the harness's own
  // queries run none of it and are left out.
  private given(messages: object[]): void {
    const names = messages.map(describeRequest).filter((name): name is string => name !== undefined);
    if (names.length > 0) this.lastGiven = [...new Set(names)];
  }

  /** Signals a process of the host's namespace through the launcher (a pid of this worker's view); the error code, if any. */
  signal(pid: number, signal: string | number): string | undefined {
    if (this.dead) return "ESRCH";
    const before = this.takeBatch();
    if (before.length > 0) this.worker.postMessage(before.length === 1 ? before[0] : { t: "batch", messages: before });
    const seq = ++this.seq;
    this.worker.postMessage({ t: "signal", pid, signal, seq });
    const reply = this.answerFor(seq, this.answerMs);
    return reply === undefined ? "ETIMEDOUT" : (reply.error ?? undefined);
  }

  // Waits for the bridge's answer to synchronous request `seq`, at most `boundMs`: the reply,
  // or undefined when none came in time. The bridge writes the seq it answers into the control
  // word (and drops an answer to any request but the one waited for), so an answer that comes
  // too late for its own request (a signal the launcher took long to deliver) is never read
  // as the answer to the next one.
  private answerFor(seq: number, boundMs: number): any {
    const deadline = monotonicMs() + boundMs;
    for (;;) {
      const seen = Atomics.load(this.control, 0);
      if (seen === seq) return JSON.parse(Buffer.from(this.data.subarray(0, Atomics.load(this.control, 1))).toString("utf8"));
      const left = deadline - monotonicMs();
      if (left <= 0) return undefined;
      Atomics.wait(this.control, 0, seen, left);
    }
  }

  /** A pid of the host's namespace (what the client and its servers report) as this worker sees it. */
  workerPid(pid: number): number {
    return this.view ? this.view.toWorker(pid) : pid;
  }

  /** True when `pid` (this worker's view) is a process of the host's namespace. */
  owns(pid: number): boolean {
    return this.view?.owns(pid) ?? false;
  }
}

export { GONE_PID };

// A request as the learner wrote it: `callTool()`, `new McpClient()`, a getter read.
function describeRequest(message: object): string | undefined {
  const m = message as { t?: string; op?: unknown };
  if (m.t === "call") return `${String(m.op)}()`;
  if (m.t === "new") return "new McpClient()";
  if (m.t === "get") return "pendingCount / pid / initialized / stderr";
  if (m.t === "abort") return "AbortSignal abort";
  return undefined;
}

// Why the bridge gave up on a synchronous request, in the learner's language: the host busy
// (CPU spent, no answer), blocked (no CPU used for a long while), or neither (slow: the
// bridge's last bound, with the CPU it did use where that is known).
function stuckMessage(reply: { stuck: string; ms?: unknown; cpuMs?: unknown }, answerMs: number): string {
  const ms = Number(reply.ms) || answerMs;
  if (reply.stuck === "busy") return msg("hostStuck", { ms: answerMs });
  if (reply.stuck === "blocked") return msg("hostBlocked", { ms });
  return typeof reply.cpuMs === "number" ? msg("hostSlow", { ms, cpu: reply.cpuMs }) : msg("hostNoAnswer", { ms });
}

// Why the host ended, in the learner's language (an out-of-memory death named as such).
function endedMessage(exit: { code?: unknown; signal?: unknown; oom?: unknown }): string {
  const oom = exit.oom ? msg("hostOom", { mb: process.env.LAB_HOST_HEAP_MB ?? "?" }) : "";
  return msg("hostEnded", { code: exit.code ?? null, signal: exit.signal ?? null, oom });
}

// What the bridge starts: the host's command, environment and folder.
function hostStart(entry: string) {
  const tsx = pathToFileURL(join(projectRoot, "node_modules", "tsx", "dist", "loader.mjs")).href;
  const heap = process.env.LAB_HOST_HEAP_MB ? [`--max-old-space-size=${process.env.LAB_HOST_HEAP_MB}`] : [];
  // In a grade both files come prebuilt (grader/host-bundle.ts): plain node, no TypeScript
  // loader; unless the gate said they could not be built.
  const bundled = process.env.LAB_HOST_HARNESS && process.env.LAB_HOST_SUBMISSION && !gateSaysUnbundled();
  const command = bundled
    ? [process.execPath, ...heap, process.env.LAB_HOST_HARNESS!, process.env.LAB_HOST_SUBMISSION!]
    : [process.execPath, ...heap, "--import", tsx, join(here, "host-main.ts"), entry];
  const env: Record<string, string> = {};
  // (Nor the sandbox's launcher: its socket and token are the workers' alone.)
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("VITEST") && !key.startsWith("LAB_HOST_LAUNCHER") && key !== "NODE_OPTIONS" && key !== "LAB_GATE_FILE") env[key] = value;
  env.LAB_IN_HOST = "1";
  // In the host every resolution must stay inside the submission's copy (nothing of the
  // harness loads after the submission does).
  if (env.LAB_CONFINE) env.LAB_CONFINE_STRICT = "1";
  return { command, env, cwd: process.cwd(), maxLine: MAX_HOST_LINE_BYTES };
}

let current: HostChannel | undefined;

type EarlyBridge = { worker: Worker; sab: SharedArrayBuffer; failed(): Error | undefined };
const EARLY = Symbol.for("lab.earlyBridge");

// The bridge early-bridge.mjs started in this worker, for its first host only.
function takeEarlyBridge(): EarlyBridge | undefined {
  const early = (globalThis as Record<symbol, unknown>)[EARLY] as EarlyBridge | undefined;
  delete (globalThis as Record<symbol, unknown>)[EARLY];
  return early && early.sab.byteLength === 8 + SAB_BYTES ? early : undefined;
}

/** This worker's host, started when first needed and again after it ended. */
export function hostChannel(): HostChannel {
  if (!current || current.dead) {
    const dir = process.env.LAB_SUBMISSION_DIR ?? "";
    const entry = join(dir, "src", "mcp-client.ts");
    if (!existsSync(entry)) throw new HostError(`no client to host: ${entry} does not exist`);
    try {
      waitForGate();
    } catch (error) {
      throw new HostError((error as Error).message);
    }
    current = new HostChannel(entry);
  }
  return current;
}

/** A pid the client or its servers reported (its host's namespace), as this worker sees it. */
export function workerPid(pid: number): number {
  return current ? current.workerPid(pid) : pid;
}
// The fixture workspaces read their pid files through it (fixtures/index.ts).
(globalThis as Record<symbol, unknown>)[Symbol.for("lab.workerPid")] = workerPid;

/** The host this worker has now, if any (for the observers' queries). */
export function currentHost(): HostChannel | undefined {
  return current && !current.dead ? current : undefined;
}

// Where the host runs as a user of its own (the sandbox's launcher, as root), this worker may
// not signal the host's processes itself: a signal it is refused for one of them (EPERM) goes
// through the launcher, which checks the process is of that host's namespace. `kill(pid, 0)`
// as well, so a liveness check reads as before.
const realKill = process.kill.bind(process);
process.kill = function kill(pid: number, signal?: string | number): true {
  try {
    return realKill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM" || !current?.owns(pid)) throw error;
    const code = current.signal(pid, signal ?? "SIGTERM");
    if (code === undefined) return true;
    throw Object.assign(new Error(`kill ${code}`), { code, errno: -1, syscall: "kill" });
  }
} as typeof process.kill;

process.on("exit", () => {
  for (const pid of HOST_PIDS) {
    try {
      // (Not through the launcher: the worker is going, and its connections with it, which
      // ends its host's namespace anyway.)
      realKill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

/** An error as the host reported it, with the contract's fields. */
export function rebuild(encoded: EncodedError, make: (message: string) => Error = (m) => new Error(m)): Error {
  const error = make(String(encoded?.message ?? "error"));
  if (typeof encoded?.name === "string") Object.defineProperty(error, "name", { value: encoded.name, configurable: true, writable: true });
  Object.assign(error, errorFields(encoded ?? { mcp: false }));
  if (typeof encoded?.stack === "string") error.stack = encoded.stack;
  return error;
}

export { decodeValue };
