// The model's operations that are calls to a running server: answered at once, held and
// released in a seeded order (one answer cut inside its bytes), timed out, aborted before and
// during, answered with a JSON-RPC error, the server exiting or breaking protocol mid-flight,
// and a server that stops reading its stdin. Each checks its outcome against the model and
// updates the model.

import type { AsyncCommand } from "fast-check";
import { received, waitFor } from "../../tests/support.ts";
import { killServer, settled } from "../support-edges.ts";
import { expectOutcome, gate, startCall, type Expected } from "./expect.ts";
import { noted } from "../../tests/messages.ts";
import { mmsg } from "./messages.ts";
import { expectNoListeners, expectThat, settle, Violation, type Dimension, type Model, type Real } from "./model.ts";

// The base of every operation: always runnable (the model says what a call must do in any state).
export abstract class Step implements AsyncCommand<Model, Real, boolean> {
  check(_m: Readonly<Model>): boolean {
    return true;
  }
  /** Where an error that escapes the client during this step is charged: the sentence the step tests. */
  get escapeDimension(): Dimension {
    return "rubric/lifecycle";
  }
  /** The TODO an error escaping during this step needs first, when another TODO than the dimension's owns its cause. */
  get escapeNeeds(): string | undefined {
    return undefined;
  }
  abstract run(m: Model, r: Real): Promise<void>;
  abstract toString(): string;
}

// Ends every held call with the same rejection (exit, protocol fault, close) and forgets them.
export async function failHeld(m: Model, r: Real, code: string, dimension: Dimension, why: string): Promise<void> {
  for (const held of m.held) {
    const outcome = await settle(r.held.get(held.tag)!, mmsg("heldCall", { tag: held.tag }));
    expectOutcome(outcome, { code }, dimension, mmsg("heldCallWhy", { tag: held.tag, why }));
  }
  m.held = [];
  r.held.clear();
}

// A server that went away (exit, protocol fault): nothing is initialized and no server runs.
export function serverGone(m: Model): void {
  m.initialized = false;
  m.serverRunning = false;
}

// A call that is refused before anything is written gets exactly the gate's code.
export async function gated(m: Model, call: ReturnType<typeof startCall>, step: string): Promise<boolean> {
  if (!call.gate) return false;
  expectOutcome(await settle(call.outcome, step), { code: call.gate.code }, call.gate.dimension, step);
  return true;
}

export class Echo extends Step {
  constructor(readonly value: string, readonly isError: boolean, readonly notify: boolean) {
    super();
  }
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    // Every call carries a signal; once it settled, no listener may stay on it.
    const signal = new AbortController().signal;
    const call = startCall(m, r, "echo", { value: this.value, isError: this.isError, notify: this.notify }, { signal });
    if (await gated(m, call, step)) return expectNoListeners(signal, step);
    const content = this.isError ? { content: this.value, isError: true } : { content: this.value };
    // The answer line is its result plus about 40 bytes; the generator keeps values far from the cap.
    const tooLong = Buffer.byteLength(JSON.stringify(content)) + 40 > m.lineCap;
    const expected: Expected = tooLong ? { code: "MCP_PROTOCOL_ERROR" } : { value: content };
    expectOutcome(await settle(call.outcome, step), expected, "rubric/handshake", step, [{ content: "stray" }, ...m.held.map((h) => ({ content: h.value }))]);
    expectNoListeners(signal, step);
    if (!tooLong) return;
    await failHeld(m, r, "MCP_PROTOCOL_ERROR", "rubric/handshake", mmsg("whyLineOverCap"));
    serverGone(m);
  }
  toString(): string {
    const v = this.value.length > 24 ? `${JSON.stringify(this.value.slice(0, 12))}…(${Buffer.byteLength(this.value)} B)` : JSON.stringify(this.value);
    return `callTool("echo", { value: ${v}${this.isError ? ", isError: true" : ""}${this.notify ? ", notify: true" : ""} }, { signal })`;
  }
}

/** 1200 three-byte characters: 3600 bytes, over a 2048-byte cap only when counted in bytes. */
const WIDE = "中".repeat(1200);
/** Over a 64 KiB cap, well under the default 1 MiB. */
const HUGE = "x".repeat(200_000);

// Two big answers: one of multi-byte text, one of 200 kB. Under a 2048-byte cap the first is a
// protocol fault (and the second is refused: no server); under the default 1 MiB both resolve.
export class Big extends Step {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async run(m: Model, r: Real): Promise<void> {
    await new Echo(WIDE, false, false).run(m, r);
    await new Echo(HUGE, false, false).run(m, r);
  }
  toString(): string {
    return mmsg("then", { first: 'callTool("echo", { value: "中" × 1200 })', next: 'callTool("echo", { value: "x" × 200000 })' });
  }
}

export class Hold extends Step {
  constructor(readonly value: string, readonly cut: number | undefined) {
    super();
  }
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const call = startCall(m, r, "echo", { value: this.value, hold: true, ...(this.cut === undefined ? {} : { cut: this.cut, cutInside: true }) });
    if (await gated(m, call, step)) return;
    m.held.push({ tag: call.tag, value: this.value, isError: false });
    r.held.set(call.tag, call.outcome);
    await waitFor(() => received(r.log(), "tools/call").some((msg) => msg.params?.arguments?.t === call.tag), mmsg("waitHeldCall")).catch(() => {});
  }
  toString(): string {
    return `callTool("echo", { value: ${JSON.stringify(this.value)}, hold: true${this.cut === undefined ? "" : `, cut: ${this.cut}, cutInside: true`} })`;
  }
}

export class Release extends Step {
  constructor(readonly seed: number) {
    super();
  }
  override get escapeDimension(): Dimension {
    return "rubric/id-matching";
  }
  override check(m: Readonly<Model>): boolean {
    return m.held.length > 0 && m.held.length < m.config.maxPending;
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const release = startCall(m, r, "release", { seed: this.seed });
    if (await gated(m, release, step)) return;
    expectOutcome(await settle(release.outcome, step), { value: { released: m.held.length } }, "rubric/id-matching", step);
    // The next request lets the server send the rest of a cut answer.
    const flush = startCall(m, r, "echo", { value: "flush" });
    expectOutcome(await settle(flush.outcome, `${step} + echo "flush"`), { value: { content: "flush" } }, "rubric/id-matching", `${step} + echo "flush"`);
    const values = m.held.map((h) => ({ content: h.value }));
    for (const held of m.held) {
      const label = mmsg("heldValue", { tag: held.tag, value: JSON.stringify(held.value) });
      expectOutcome(await settle(r.held.get(held.tag)!, label), { value: { content: held.value } }, "rubric/handshake", label, values);
    }
    m.held = [];
    r.held.clear();
  }
  toString(): string {
    return noted(`callTool("release", { seed: ${this.seed} })`, mmsg("noteReleaseAll"));
  }
}

export class Timeout extends Step {
  constructor(readonly ms: number) {
    super();
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const signal = new AbortController().signal;
    const call = startCall(m, r, "never", {}, { timeoutMs: this.ms, signal });
    if (await gated(m, call, step)) return;
    expectOutcome(await settle(call.outcome, step), { code: "MCP_TIMEOUT" }, "rubric/lifecycle", step);
    expectNoListeners(signal, step);
  }
  toString(): string {
    return `callTool("never", {}, { timeoutMs: ${this.ms} })`;
  }
}

export class Abort extends Step {
  constructor(readonly when: "before" | "during", readonly method: "callTool" | "listTools") {
    super();
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const controller = new AbortController();
    if (this.when === "before") return this.before(m, r, controller, step);
    const call = startCall(m, r, "never", {}, { signal: controller.signal });
    if (await gated(m, call, step)) return;
    await waitFor(() => received(r.log(), "tools/call").some((msg) => msg.params?.arguments?.t === call.tag), mmsg("waitCall")).catch(() => {});
    controller.abort(new Error("stopped by the model"));
    expectOutcome(await settle(call.outcome, step), { code: "MCP_ABORTED" }, "rubric/lifecycle", step);
    expectNoListeners(controller.signal, step);
  }
  private async before(m: Model, r: Real, controller: AbortController, step: string): Promise<void> {
    controller.abort(new Error("stopped before it began"));
    const g = gate(m);
    // Closed wins; before initialize either refusal is right; otherwise only MCP_ABORTED (or BUSY when full).
    const codes = m.closed ? ["CLIENT_CLOSED"] : !m.initialized ? ["MCP_ABORTED", "MCP_NOT_INITIALIZED"] : g ? ["MCP_ABORTED", g.code] : ["MCP_ABORTED"];
    if (this.method === "listTools") {
      const outcome = await settle(settled(Promise.resolve().then(() => r.client.listTools({ signal: controller.signal }))), step);
      return expectOutcome(outcome, { code: codes }, "rubric/lifecycle", step);
    }
    const tag = r.tag();
    m.unwritten.set(tag, { why: mmsg("whyPreAborted"), dimension: "rubric/lifecycle" });
    const outcome = await settle(settled(Promise.resolve().then(() => r.client.callTool("echo", { value: "pre-aborted", t: tag }, { signal: controller.signal }))), step);
    expectOutcome(outcome, { code: codes }, "rubric/lifecycle", step);
  }
  toString(): string {
    const call = this.method === "listTools" ? "listTools({ signal })" : `callTool(${this.when === "before" ? '"echo"' : '"never"'}, {}, { signal })`;
    return this.when === "before" ? noted(call, mmsg("noteSignalAborted")) : mmsg("abortInFlight", { call });
  }
}

export class Fail extends Step {
  constructor(readonly code: number) {
    super();
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const call = startCall(m, r, "fail", { code: this.code, message: "refused by the model", data: { n: this.code } });
    if (await gated(m, call, step)) return;
    const outcome = await settle(call.outcome, step);
    try {
      expectOutcome(outcome, { code: "MCP_ERROR" }, "rubric/lifecycle", step);
    } catch (error) {
      // Settling (never hanging) is lifecycle's business; rejecting with MCP_ERROR is TODO(remote-error)'s.
      if (error instanceof Violation && outcome.status === "fulfilled") error.needs = "remote-error";
      throw error;
    }
    const remote = outcome.status === "rejected" ? outcome.reason?.remoteCode : undefined;
    expectOutcome({ status: "rejected", reason: { code: remote === this.code ? "ok" : `remoteCode ${remote}` } }, { code: "ok" }, "rubric/lifecycle", `${step}: remoteCode`);
  }
  toString(): string {
    return noted(`callTool("fail", { code: ${this.code} })`, mmsg("noteRemoteError"));
  }
}

export class Crash extends Step {
  constructor(readonly how: "exit" | "kill" | "garble", readonly again: boolean) {
    super();
  }
  // An error escaping as the server exits is the process's; one escaping a protocol fault, the framing's.
  override get escapeDimension(): Dimension {
    return this.how === "garble" ? "rubric/handshake" : "rubric/process";
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const args: Record<string, unknown> = this.how === "exit" ? { code: 0, stderr: "model: exiting\n" } : this.how === "kill" ? {} : { value: "garbled", garble: true, slowExitMs: this.again ? 60_000 : 300, lingerOnStdinEnd: this.again };
    const call = startCall(m, r, { exit: "exit", kill: "never", garble: "echo" }[this.how], args);
    if (await gated(m, call, step)) return;
    // The model's own SIGKILL, once the server has the call: the exit must report that signal.
    if (this.how === "kill") await this.kill(r, call.tag);
    const [code, dimension, why]: [string, Dimension, string] = this.how === "garble" ? ["MCP_PROTOCOL_ERROR", "rubric/handshake", mmsg("whyProtocolFault")] : ["MCP_PROCESS_EXIT", "rubric/lifecycle", mmsg("whyServerExited")];
    const outcome = await settle(call.outcome, step);
    expectOutcome(outcome, { code }, dimension, step);
    const signal = outcome.status === "rejected" ? outcome.reason?.signal : undefined;
    if (this.how === "kill") expectThat(signal === "SIGKILL", "rubric/process", "exitSignal", { step, expected: "SIGKILL", actual: String(signal) });
    // Exit code 0: a success, and a falsy number (a client that writes `code || null` loses it).
    const exitCode = outcome.status === "rejected" ? outcome.reason?.exitCode : undefined;
    if (this.how === "exit") expectThat(exitCode === 0 && signal == null, "rubric/process", "exitCodeZero", { step, exitCode: String(exitCode), signal: String(signal) });
    await failHeld(m, r, code, dimension, why);
    serverGone(m);
    // The faulted server takes 300 ms to exit (with `again`, it lingers until the new
    // handshake is done: see Init): the next initialize() must not be fooled by its exit.
    m.dying = this.how === "garble";
    m.lingering = this.how === "garble" && this.again;
    if (this.again) await this.reinitialize(m, r);
  }
  private async kill(r: Real, tag: string): Promise<void> {
    await waitFor(() => received(r.log(), "tools/call").some((msg) => msg.params?.arguments?.t === tag), mmsg("waitCall")).catch(() => {});
    killServer(r.pids().at(-1)); // the running server recorded its pid last
  }
  toString(): string {
    const crash = {
      exit: () => noted('callTool("exit", { code: 0 })', mmsg("noteExitMidFlight")),
      kill: () => noted(mmsg("crashKill"), mmsg("noteDiesMidFlight")),
      garble: () => noted('callTool("echo", { garble: true })', mmsg("noteGarble")),
    }[this.how]();
    return this.again ? mmsg("thenReinit", { crash }) : crash;
  }
  // Set by lifecycle.ts (which imports this module): a new handshake right after the crash.
  static reinit: (m: Model, r: Real) => Promise<void> = async () => {};
  private reinitialize(m: Model, r: Real): Promise<void> {
    return Crash.reinit(m, r);
  }
}

export class Stall extends Step {
  override check(m: Readonly<Model>): boolean {
    return m.held.length === 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const stall = startCall(m, r, "stall", {});
    if (await gated(m, stall, step)) return;
    expectOutcome(await settle(stall.outcome, step), { value: { stalled: true } }, "rubric/lifecycle", step);
    // Each is bigger than the pipe: the first fills it, the second waits in the client.
    const pad = "z".repeat(200_000);
    const calls = [1, 2].map((n) => startCall(m, r, "never", { pad, n }, { timeoutMs: 100 }));
    for (const [i, call] of calls.entries()) {
      const label = mmsg("queuedCall", { step, n: i + 1 });
      expectOutcome(await settle(call.outcome, label), { code: "MCP_TIMEOUT" }, "rubric/lifecycle", label);
    }
    const pid = r.client.pid;
    if (pid !== undefined) process.kill(pid, "SIGUSR2"); // the fixture reads again
  }
  toString(): string {
    return noted('callTool("stall")', mmsg("noteStall"));
  }
}
