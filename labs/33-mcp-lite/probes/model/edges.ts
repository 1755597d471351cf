// The model's operations at the edges of the contract: an answer line of exactly
// maxLineBytes bytes (the largest accepted), two calls sharing one AbortSignal, where the
// first one settling must leave the second abortable, and call input the client must refuse.

import { received, waitFor, type Settled } from "../../tests/support.ts";
import { failHeld, gated, serverGone, Step } from "./calls.ts";
import { settled } from "../support-edges.ts";
import { expectOutcome, gate, startCall } from "./expect.ts";
import { describeOutcome } from "../support-edges.ts";
import { noted } from "../../tests/messages.ts";
import { mmsg } from "./messages.ts";
import { expectNoListeners, expectThat, settle, type Dimension, type Model, type Real } from "./model.ts";

/** The bytes of the fixture's answer line to an echo call (its newline not counted). */
function echoLineBytes(id: unknown, value: string): number {
  return Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id, result: { content: value } }));
}

// The answer's value is sized for the id after the last one the server saw; the id the
// server then really got decides what to expect, so a client whose ids skip is judged by the
// line it was actually sent.
export class AtCap extends Step {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const last = r.log().filter((e) => e.dir === "in" && typeof e.msg?.id === "number").at(-1)?.msg.id;
    const value = "x".repeat(Math.max(0, m.lineCap - echoLineBytes(typeof last === "number" ? last + 1 : 1, "")));
    const call = startCall(m, r, "echo", { value });
    if (await gated(m, call, step)) return;
    const outcome = await settle(call.outcome, step);
    const id = received(r.log(), "tools/call").find((msg) => msg.params?.arguments?.t === call.tag)?.id;
    const bytes = echoLineBytes(id, value);
    const over = bytes > m.lineCap;
    expectOutcome(outcome, over ? { code: "MCP_PROTOCOL_ERROR" } : { value: { content: value } }, "rubric/handshake", mmsg("atCapStep", { step, bytes, cap: m.lineCap }));
    if (!over) return;
    await failHeld(m, r, "MCP_PROTOCOL_ERROR", "rubric/handshake", mmsg("whyLineOverCap"));
    serverGone(m);
  }
  toString(): string {
    return noted('callTool("echo", { value: "x" × n })', mmsg("noteAtCap"));
  }
}

const SHARED_VALUE = "shares a signal";

export class SharedSignal extends Step {
  override check(m: Readonly<Model>): boolean {
    return m.held.length === 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const step = this.toString();
    const controller = new AbortController();
    const { signal } = controller;
    // The echo first: its answer then settles the oldest request too, so only the signal is tested here.
    const echo = startCall(m, r, "echo", { value: SHARED_VALUE }, { signal });
    const never = startCall(m, r, "never", {}, { signal });
    if (await gated(m, echo, step)) {
      await gated(m, never, step);
      return expectNoListeners(signal, step);
    }
    let neverSettled: Settled<unknown> | undefined;
    void never.outcome.then((outcome) => (neverSettled = outcome));
    const echoed = await settle(echo.outcome, mmsg("theEcho", { step }));
    // The echo's answer handed to the other call (matched by anything but its id) is id matching's business.
    const stolen = neverSettled?.status === "fulfilled" ? neverSettled : undefined;
    expectThat(!stolen, "rubric/id-matching", "otherAnswer", { step: `${step}: callTool("never")`, actual: stolen && describeOutcome(stolen), expected: mmsg("noAnswerBeforeAbort") });
    expectOutcome(echoed, { value: { content: SHARED_VALUE } }, "rubric/handshake", mmsg("theEcho", { step }));
    await waitFor(() => received(r.log(), "tools/call").some((msg) => msg.params?.arguments?.t === never.tag), mmsg("waitCall")).catch(() => {});
    controller.abort(new Error("stopped by the model"));
    expectOutcome(await settle(never.outcome, step), { code: "MCP_ABORTED" }, "rubric/lifecycle", step);
    expectNoListeners(signal, step);
  }
  toString(): string {
    return mmsg("sharedSignalStep", { echo: `callTool("echo", { value: "${SHARED_VALUE}" }, { signal })`, never: 'callTool("never", {}, { signal })' });
  }
}

// Bad call input, each refused with MCP_INVALID_ARGUMENT before anything is written (or with
// the gate's code, when one applies): arguments JSON cannot hold (they refer to themselves),
// arguments that are an array (they must be a plain object), a call's timeoutMs of 0 (a
// positive integer or nothing), and listTools() with a timeoutMs of 0 (its options are checked
// like callTool's).
export class BadCallInput extends Step {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async run(m: Model, r: Real): Promise<void> {
    const g = gate(m);
    const codes = g ? ["MCP_INVALID_ARGUMENT", g.code] : "MCP_INVALID_ARGUMENT";
    const dimension = g?.dimension ?? "rubric/handshake";
    const refused = async (step: string, call: (tag: string) => Promise<unknown>, why: string) => {
      const tag = r.tag();
      m.unwritten.set(tag, { why, dimension: "rubric/handshake" });
      expectOutcome(await settle(settled(Promise.resolve().then(() => call(tag))), step), { code: codes }, dimension, step);
    };
    const self: Record<string, unknown> = { value: "loop" };
    self.self = self;
    await refused(UNSERIALIZABLE, (t) => r.client.callTool("echo", Object.assign(self, { t })), mmsg("whyUnserializable"));
    // An array carries no tag on the wire: the server must simply never get a call whose arguments are one.
    const arrays = () => received(r.log(), "tools/call").filter((msg) => Array.isArray(msg.params?.arguments)).length;
    const before = arrays();
    await refused(ARRAY_ARGS, () => r.client.callTool("echo", ["x"] as never), mmsg("whyArrayArgs"));
    expectThat(arrays() === before, "rubric/handshake", "wrote", { step: ARRAY_ARGS, why: mmsg("whyArrayArgs") });
    await refused(ZERO_TIMEOUT, (t) => r.client.callTool("echo", { value: "no time", t }, { timeoutMs: 0 }), mmsg("whyZeroTimeout"));
    // A tools/list request carries no tag either: the model's count of lists tells (checkInvariants).
    const step = LIST_ZERO_TIMEOUT;
    expectOutcome(await settle(settled(Promise.resolve().then(() => r.client.listTools({ timeoutMs: 0 }))), step), { code: codes }, dimension, step);
  }
  toString(): string {
    return mmsg("badCallInputStep", { list: [UNSERIALIZABLE, ARRAY_ARGS, ZERO_TIMEOUT, LIST_ZERO_TIMEOUT].join("; ") });
  }
}

const UNSERIALIZABLE = noted('callTool("echo", args)', mmsg("noteUnserializable"));
const ARRAY_ARGS = 'callTool("echo", ["x"])';
const ZERO_TIMEOUT = 'callTool("echo", { value: "no time" }, { timeoutMs: 0 })';
const LIST_ZERO_TIMEOUT = "listTools({ timeoutMs: 0 })";
