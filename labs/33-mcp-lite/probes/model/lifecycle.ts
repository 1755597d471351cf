// The model's operations around the server's life: initialize() (the fixture answers, refuses
// or exits, as the step says), what the server got (arguments, environment), a stderr flood
// past the cap, options the constructor must refuse, and close() with calls made while it runs.

import { existsSync } from "node:fs";
import { McpClient } from "#submission/src/mcp-client.ts";
import { createFixtureWorkspace, isAlive, type LogEntry } from "../../../../fixtures/index.ts";
import { liveClientTimers, processesStarted, received, startupWithin, waitFor } from "../../tests/support.ts";
import { clientProcessPid, startedCount } from "../../host/client-side.ts";
import { Crash, failHeld, Step } from "./calls.ts";
import { expectOutcome, startCall } from "./expect.ts";
import { noted } from "../../tests/messages.ts";
import { mmsg } from "./messages.ts";
import { describeOutcome, killServer, serverGone, settled } from "../support-edges.ts";
import { expectNoServer, expectThat, GIVEN_ENV, hangs, ODD_ARGS, PLATFORM_ENV, settle, Violation, type Dimension, type Model, type Real } from "./model.ts";

export class Init extends Step {
  constructor(readonly mode: "answer" | "error" | "exit") {
    super();
  }
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const call = () => settled(Promise.resolve().then(() => r.client.initialize()));
    if (m.closed) return expectOutcome(await settle(call(), step), { code: "CLIENT_CLOSED" }, "rubric/lifecycle", step);
    if (m.initialized) {
      const inits = () => r.log().filter((e) => e.dir === "in" && e.msg?.method === "initialize").length;
      const before = inits();
      const outcome = await settle(call(), step);
      expectThat(outcome.status === "fulfilled", "rubric/handshake", "outcome", { step, expected: mmsg("expectAlreadyInit"), actual: outcome.status === "rejected" ? outcome.reason?.code : "" });
      expectThat(inits() === before, "rubric/handshake", "outcome", { step, expected: mmsg("expectNoSecondInit"), actual: mmsg("countMore", { count: inits() - before }) });
      return;
    }
    r.handshake(this.mode);
    const mark = r.log().length;
    const startedBefore = startedCount();
    const pending = call();
    // A second initialize() while the first is in flight shares its handshake.
    const second = this.mode === "answer" ? call() : undefined;
    // Right after a fault whose server lingers: a client that waits for the old server to go
    // (as it must: it started no new one when initialize() was called) has the model end it
    // now; one that started the next server at once meets the old one's exit only after the
    // new handshake (see answered). The count is read once both calls were made (they start
    // in a microtask): a read in a later turn sees the client after them, hosted or not.
    if (m.lingering) await new Promise((resolve) => setImmediate(resolve));
    if (m.lingering && startedCount() === startedBefore) for (const p of r.pids().filter(isAlive)) killServer(p);
    m.lingering = false;
    // A server that exits during the handshake: its exit is the server's turn, noticing it the client's.
    if (this.mode === "exit") await startupWithin(r, Promise.race([pending, serverGone(r)]), step).catch(() => {});
    const outcome = this.mode === "exit" ? await settle(pending, step) : await startupWithin(r, pending, step).catch((error: Error) => {
      hangs.count += 1;
      return { status: "rejected" as const, reason: { code: `(${error.message})` } };
    });
    r.handshake("answer");
    // The program exists (the model linked it there): a client that cannot start it did not take its path as given.
    if (outcome.status === "rejected" && outcome.reason?.code === "MCP_SPAWN_FAILED") {
      throw new Violation("rubric/process", mmsg("spawnGiven", { step, executable: r.command.executable, cause: String(outcome.reason?.cause?.code ?? "") }));
    }
    // A restart after a protocol fault, while the old server still goes away, is lifecycle's.
    const restart = m.dying;
    m.dying = false;
    if (this.mode === "answer") {
      await this.shared(r, step, second!, outcome, mark);
      return this.answered(m, r, step, outcome, restart);
    }
    // An exit rejecting what is pending is lifecycle's sentence, during the handshake too.
    const dimension = restart || this.mode === "exit" ? "rubric/lifecycle" : "rubric/handshake";
    expectOutcome(outcome, { code: this.mode === "exit" ? "MCP_PROCESS_EXIT" : ["MCP_ERROR", "MCP_PROTOCOL_ERROR"] }, dimension, step);
    await expectNoServer(r, step).catch(() => {
      throw new Violation("rubric/handshake", mmsg("alive", { step: mmsg("failedHandshakeStops", { step }), pids: r.pids().filter(isAlive).join(", ") }));
    });
    // The server is gone, so its log is complete: a notice sent with the request shows here.
    const early = r.log().slice(mark).some((e) => e.dir === "in" && e.msg?.method === "notifications/initialized");
    expectThat(!early, "rubric/handshake", "earlyNotice", { step });
  }
  // Both concurrent calls end alike, and the server got one initialize request for them.
  private async shared(r: Real, step: string, second: ReturnType<typeof settled>, first: Awaited<ReturnType<typeof settle>>, mark: number): Promise<void> {
    const other = await settle(second, mmsg("secondConcurrent", { step }));
    const same = (other.status === "fulfilled") === (first.status === "fulfilled");
    expectThat(same, "rubric/handshake", "outcome", { step: mmsg("twiceAtOnce", { step }), expected: mmsg(first.status === "fulfilled" ? "bothResolve" : "bothReject"), actual: describeOutcome(other) });
    const since = r.log().slice(mark).filter((e) => e.dir === "in" && e.msg?.method === "initialize").length;
    expectThat(since <= 1, "rubric/handshake", "doubleInit", { step: mmsg("twiceAtOnce", { step }), count: since });
  }
  private async answered(m: Model, r: Real, step: string, outcome: Awaited<ReturnType<typeof settle>>, restart: boolean): Promise<void> {
    const busy = outcome.status === "rejected" && outcome.reason?.code === "MCP_BUSY";
    const dimension = restart || busy ? "rubric/lifecycle" : "rubric/handshake";
    expectThat(outcome.status === "fulfilled", dimension, "outcome", { step, expected: "resolve { protocolVersion, capabilities, serverInfo }", actual: outcome.status === "rejected" ? `reject ${outcome.reason?.code ?? outcome.reason}` : "" });
    // The notice was written before initialize() resolved; the server logs it once it read it.
    const noticed = () => {
      const log = r.log();
      const answer = log.findLastIndex((e) => e.dir === "out" && e.msg?.result?.protocolVersion !== undefined);
      return answer >= 0 && log.findLastIndex((e) => e.dir === "in" && e.msg?.method === "notifications/initialized") > answer;
    };
    await waitFor(noticed, mmsg("waitNotice")).catch(() => {});
    expectThat(noticed(), "rubric/handshake", "noNotice", { step });
    if (restart) {
      // The old server may still linger (a crash followed at once by a handshake makes it
      // ignore SIGTERM and stdin end): the model ends it now, so its exit comes after the new
      // handshake, whatever the load, and waits until its parent has reaped it, then until
      // the client has taken the exit in (it may do so later, once its pipes drained): until
      // initialized changes or nothing moves any more. That exit must not touch the new server.
      const pid = r.client.pid;
      const old = r.pids().filter((p) => p !== pid && isAlive(p));
      for (const p of old) killServer(p);
      await waitFor(() => old.every((p) => !existsSync(`/proc/${p}`)), mmsg("waitReapOld")).catch(() => {});
      if (old.length > 0) await waitFor(() => !r.client.initialized, mmsg("waitOldExitSeen")).catch(() => {});
      expectThat(r.client.initialized && r.client.pid === pid && pid !== undefined, "rubric/lifecycle", "initialized", { step: mmsg("thenOldExited", { step }), actual: r.client.initialized, expected: true });
    }
    m.initialized = true;
    m.serverRunning = true;
  }
  toString(): string {
    return this.mode === "answer" ? mmsg("initTwice") : noted("initialize()", mmsg(this.mode === "error" ? "noteInitError" : "noteInitExit"));
  }
}

Crash.reinit = (m, r) => new Init("answer").run(m, r);

export class Inspect extends Step {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const call = startCall(m, r, "inspect", { only: ["argv", "env", "ppid"] });
    const outcome = await settle(call.outcome, step);
    if (call.gate) return expectOutcome(outcome, { code: call.gate.code }, call.gate.dimension, step);
    expectThat(outcome.status === "fulfilled", "rubric/process", "outcome", { step, expected: "resolve", actual: outcome.status === "rejected" ? outcome.reason?.code : "" });
    const seen = (outcome.value ?? {}) as { argv?: string[]; env?: Record<string, string>; ppid?: number };
    const argv = seen.argv ?? [];
    const after = argv.slice(argv.indexOf("--") + 1);
    expectThat(JSON.stringify(after) === JSON.stringify(ODD_ARGS), "rubric/process", "inspectArgs", { step, expected: JSON.stringify(ODD_ARGS), actual: JSON.stringify(after) });
    // The server is the client's own child, started as given: no shell in between, even one that execs.
    // (Its processes are told by the run's own pid file among their arguments: the side clients
    // beside it may start the same program, by another path.)
    const own = r.ws.pidFile;
    const started = processesStarted().filter((p) => [p.command, ...p.args].some((a) => a.includes(own)));
    const shelled = started.find((p) => p.command !== r.command.executable);
    expectThat(!shelled && seen.ppid === clientProcessPid(), "rubric/process", "shell", { step, what: shelled ? [shelled.command, ...shelled.args].join(" ").slice(0, 120) : `ppid ${seen.ppid}` });
    expectEnv(seen.env, GIVEN_ENV, step);
  }
  toString(): string {
    return noted('callTool("inspect")', mmsg("noteInspect"));
  }
}

// The server's environment: nothing of the grader's beyond the allowlist and the given env, and
// PATH the given one where env sets it (env goes on top of the allowlist), else the client's own
// (an empty allowlist leaves the server without one).
function expectEnv(env: Record<string, string> | undefined, given: Record<string, string>, step: string): void {
  const extra = Object.keys(env ?? {}).filter((name) => !(name in given) && !PLATFORM_ENV.has(name) && process.env[name] !== undefined);
  expectThat(extra.length === 0, "rubric/process", "inspectEnv", { step, names: extra.slice(0, 5).join(", ") });
  const path = env?.PATH;
  const actual = path === undefined ? mmsg("unset") : JSON.stringify(path.slice(-120));
  if (given.PATH !== undefined) return expectThat(path === given.PATH, "rubric/process", "inspectGivenPath", { step, actual });
  expectThat(process.env.PATH === undefined || path === process.env.PATH, "rubric/process", "inspectPath", { step, actual });
}

export class Stderr extends Step {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const call = startCall(m, r, "stderr", { bytes: 1_000_000 });
    const outcome = await settle(call.outcome, step);
    if (call.gate) return expectOutcome(outcome, { code: call.gate.code }, call.gate.dimension, step);
    expectOutcome(outcome, { value: { written: 1_000_000 } }, "rubric/process", step);
  }
  toString(): string {
    return noted('callTool("stderr", { bytes: 1000000 })', mmsg("noteStderr"));
  }
}

// A second client with every option at its default (its own fixture, so its ids and
// processes stay apart): a 200 kB answer is far under the default 1 MiB line cap. Its server
// sends, ahead of every answer, an error answer whose id is the request's id as a string
// (which settles nothing); then a remote error with 300 kB of data, which McpError.data
// must not keep whole.
export class Defaults extends Step {
  // What this client meets is the protocol's (answer lines, error answers and their data).
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async run(_m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const ws = createFixtureWorkspace("lab33-model-defaults-");
    const client = new McpClient(ws.command({ selfDestructMs: 60_000, scenarios: ["string-id-error"] }));
    try {
      const init = await startupWithin(ws, settled(Promise.resolve().then(() => client.initialize())), mmsg("defaultInit"));
      expectThat(init.status === "fulfilled", "rubric/handshake", "outcome", { step: `${DEFAULT_CLIENT}: initialize()`, expected: "resolve", actual: init.status === "rejected" ? init.reason?.code : "" });
      const value = "x".repeat(200_000);
      const echoed = await settle(settled(client.callTool("echo", { value })), step);
      // Rejected by the error answer with the string id: matched by something else than the id itself.
      const stray = echoed.status === "rejected" && echoed.reason?.code === "MCP_ERROR";
      const id = received(ws.log(), "tools/call")[0]?.id;
      const label = `${DEFAULT_CLIENT}: callTool("echo", { value: "x" × 200000 })${stray ? mmsg("strayFirst", { id: JSON.stringify(String(id)) }) : ""}`;
      expectOutcome(echoed, { value: { content: value } }, stray ? "rubric/id-matching" : "rubric/handshake", label);
      await errorData(client, DEFAULT_CLIENT);
      const seen = await settle(settled(client.callTool("inspect", { only: ["env"] })), `${DEFAULT_CLIENT}: callTool("inspect")`);
      expectThat(seen.status === "fulfilled", "rubric/process", "outcome", { step: `${DEFAULT_CLIENT}: callTool("inspect")`, expected: "resolve", actual: seen.status === "rejected" ? seen.reason?.code : "" });
      expectEnv((seen.value as { env?: Record<string, string> } | undefined)?.env, {}, `${DEFAULT_CLIENT}: callTool("inspect")`);
      await defaultMaxPending(client, ws);
    } catch (error) {
      // The report shows this client's trace, not the run's.
      if (error instanceof Violation) error.log ??= ws.log();
      throw error;
    } finally {
      const closed = await settle(settled(Promise.resolve().then(() => client.close())), mmsg("closeDefault"));
      await ws.cleanup({ closeResolved: closed.status === "fulfilled" });
    }
    void r;
  }
  toString(): string {
    return mmsg("defaultsStep", { client: "new McpClient({ executable, args })", calls: 'initialize(), callTool("echo", { value: "x" × 200000 }), callTool("fail", { data: "d" × 300000 }), callTool("fail", { noData: true }), callTool("fail", { nest: 100000 }), callTool("inspect"), ' + mmsg("maxPendingCalls", { count: DEFAULT_MAX_PENDING }) + ", close()" });
  }
}

const DEFAULT_CLIENT = mmsg("defaultClient");

/** Bytes of error data sent, and the most McpError.data may keep of it (as JSON). */
const ERROR_DATA = { sent: 300_000, kept: 256 * 1024 };

// A remote error with more data than any sensible bound: MCP_ERROR, its data size-bounded.
async function errorData(client: { callTool(name: string, args: Record<string, unknown>): Promise<unknown> }, step: string): Promise<void> {
  const label = `${step}: callTool("fail", { data: "d" × ${ERROR_DATA.sent} })`;
  const failed = await settle(settled(client.callTool("fail", { data: "d".repeat(ERROR_DATA.sent) })), label);
  try {
    expectOutcome(failed, { code: "MCP_ERROR" }, "rubric/lifecycle", label);
  } catch (error) {
    // Settling is lifecycle's business; rejecting with MCP_ERROR is TODO(remote-error)'s.
    if (error instanceof Violation && failed.status === "fulfilled") error.needs = "remote-error";
    throw error;
  }
  const kept = Buffer.byteLength(JSON.stringify(failed.status === "rejected" ? failed.reason?.data : undefined) ?? "");
  expectThat(kept <= ERROR_DATA.kept, "rubric/handshake", "errorData", { step: label, sent: ERROR_DATA.sent, kept });
  // An error the server sent without data has none on its McpError (nothing invented) ...
  const bare = `${step}: callTool("fail", { noData: true })`;
  const none = await settle(settled(client.callTool("fail", { noData: true })), bare);
  expectOutcome(none, { code: "MCP_ERROR" }, "rubric/handshake", bare);
  expectThat(none.status === "rejected" && none.reason?.data === undefined, "rubric/handshake", "outcome", { step: `${bare}: McpError.data`, expected: "undefined", actual: JSON.stringify(none.status === "rejected" ? none.reason?.data : undefined) });
  // ... and data nested deeper than JSON.stringify can go (JSON.parse reads it) still rejects MCP_ERROR.
  const deep = `${step}: callTool("fail", { nest: ${ERROR_NEST} })`;
  expectOutcome(await settle(settled(client.callTool("fail", { nest: ERROR_NEST })), deep), { code: "MCP_ERROR" }, "rubric/handshake", deep);
}

/** CONTRACT §1's default maxPending. */
const DEFAULT_MAX_PENDING = 256;

// The default maxPending, at its edge: 256 held calls are all written; one more is refused with
// MCP_BUSY; aborting the last held one frees its slot for the release, which answers the rest.
async function defaultMaxPending(client: InstanceType<typeof McpClient>, ws: { log(): LogEntry[] }): Promise<void> {
  const last = new AbortController();
  const holds = Array.from({ length: DEFAULT_MAX_PENDING }, (_, i) => {
    const options = i === DEFAULT_MAX_PENDING - 1 ? { signal: last.signal } : {};
    return settled(Promise.resolve().then(() => client.callTool("echo", { value: `h${i}`, hold: true }, options)));
  });
  let early: number | undefined;
  holds.forEach((hold, i) => void hold.then(() => (early ??= i)));
  const heldNow = () => received(ws.log(), "tools/call").filter((msg) => msg.params?.arguments?.hold === true).length;
  await waitFor(() => heldNow() >= DEFAULT_MAX_PENDING || early !== undefined, mmsg("waitHeldCalls", { count: DEFAULT_MAX_PENDING })).catch(() => {});
  if (early !== undefined) {
    const label = mmsg("heldOfMany", { client: DEFAULT_CLIENT, n: early + 1, count: DEFAULT_MAX_PENDING });
    const outcome = await settle(holds[early]!, label);
    expectThat(false, "rubric/lifecycle", "outcome", { step: label, expected: mmsg("heldUntilRelease"), actual: describeOutcome(outcome) });
  }
  const over = `${DEFAULT_CLIENT}: ${mmsg("oneTooMany", { n: DEFAULT_MAX_PENDING + 1 })}`;
  expectOutcome(await settle(settled(Promise.resolve().then(() => client.callTool("echo", { value: "one too many" }))), over), { code: "MCP_BUSY" }, "rubric/lifecycle", over);
  // maxPending counts requests, whatever their method: tools/list is one too.
  const overList = `${DEFAULT_CLIENT}: listTools() // ${mmsg("oneTooMany", { n: DEFAULT_MAX_PENDING + 1 })}`;
  expectOutcome(await settle(settled(Promise.resolve().then(() => client.listTools())), overList), { code: "MCP_BUSY" }, "rubric/lifecycle", overList);
  last.abort(new Error("stopped by the model"));
  const aborted = mmsg("heldOfMany", { client: DEFAULT_CLIENT, n: DEFAULT_MAX_PENDING, count: DEFAULT_MAX_PENDING });
  expectOutcome(await settle(holds.at(-1)!, aborted), { code: "MCP_ABORTED" }, "rubric/lifecycle", aborted);
  // An answer that went to another of these calls is id matching's business.
  const answers = holds.map((_, i) => ({ content: `h${i}` }));
  const release = `${DEFAULT_CLIENT}: callTool("release")`;
  // The aborted call is still held by the server unless the client told it so
  // (notifications/cancelled, a homework): the release answers 255 or 256 calls.
  const released = await settle(settled(client.callTool("release", {})), release);
  const count = released.status === "fulfilled" ? (released.value as { released?: unknown } | null)?.released : undefined;
  if (count !== DEFAULT_MAX_PENDING) expectOutcome(released, { value: { released: DEFAULT_MAX_PENDING - 1 } }, "rubric/lifecycle", release, answers);
  for (const [i, hold] of holds.slice(0, -1).entries()) {
    const label = mmsg("heldOfMany", { client: DEFAULT_CLIENT, n: i + 1, count: DEFAULT_MAX_PENDING });
    expectOutcome(await settle(hold, label), { value: answers[i] }, "rubric/lifecycle", label, [{ released: DEFAULT_MAX_PENDING - 1 }, { released: DEFAULT_MAX_PENDING }, ...answers]);
  }
}

/** How deep the nested error data goes: past JSON.stringify's stack, not JSON.parse's. */
const ERROR_NEST = 100_000;

/** Options the constructor must refuse, each next to otherwise good ones. */
const BAD_OPTIONS: Array<[string, Record<string, unknown>]> = [
  ["maxStderrBytes: -1", { maxStderrBytes: -1 }],
  ["maxPending: 0", { maxPending: 0 }],
  ["timeoutMs: 0", { timeoutMs: 0 }],
  ["closeTimeoutMs: -5", { closeTimeoutMs: -5 }],
  ["maxLineBytes: 1.5", { maxLineBytes: 1.5 }],
  [mmsg("badArgs"), { args: ["", 7] }],
  ['executable: ""', { executable: "" }],
  ["cwd: 7", { cwd: 7 }],
];

export class BadOptions extends Step {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  async run(_m: Model, r: Real): Promise<void> {
    for (const [label, bad] of BAD_OPTIONS) {
      let actual = mmsg("noError");
      try {
        new McpClient({ executable: process.execPath, args: ["-e", ""], ...bad } as never);
      } catch (error) {
        actual = (error as { code?: string })?.code ?? String(error);
      }
      expectThat(actual === "MCP_INVALID_ARGUMENT", "rubric/process", "badOption", { step: `new McpClient({ ${label} })`, actual });
    }
    void r;
  }
  toString(): string {
    return mmsg("badOptionsStep", { list: BAD_OPTIONS.map(([label]) => label).join("; ") });
  }
}

export class Close extends Step {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const closing = settled(Promise.resolve().then(() => r.client.close()));
    if (!m.closed) {
      const during = startCall({ ...m, closed: true } as Model, r, "echo", { value: "during close" });
      m.unwritten.set(during.tag, { why: "close() was running", dimension: "rubric/lifecycle" });
      expectOutcome(await settle(during.outcome, mmsg("callDuringClose")), { code: "CLIENT_CLOSED" }, "rubric/lifecycle", mmsg("echoWhileClose"));
      const init = await settle(settled(Promise.resolve().then(() => r.client.initialize())), mmsg("initDuringClose"));
      expectOutcome(init, { code: "CLIENT_CLOSED" }, "rubric/lifecycle", mmsg("initWhileClose"));
      await failHeld(m, r, "CLIENT_CLOSED", "rubric/lifecycle", "close()");
    }
    const closed = await settle(closing, step);
    expectOutcome(closed, { value: undefined }, "rubric/process", step);
    const alive = r.pids().filter(isAlive);
    expectThat(alive.length === 0, "rubric/process", "alive", { step: mmsg("resolved", { step }), pids: alive.join(", ") });
    // Every request of the run has settled: none of their timers may be left.
    const timers = liveClientTimers(r.timersBefore);
    expectThat(timers.length === 0, "rubric/lifecycle", "timers", { step: mmsg("resolved", { step }), count: timers.length, where: timers.slice(0, 2).join("; ") });
    Object.assign(m, { closed: true, initialized: false, serverRunning: false, dying: false });
  }
  toString(): string {
    return noted("close()", mmsg("noteClose"));
  }
}
