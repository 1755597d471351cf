// What one call should end with, given the model, and the comparison with what it did end
// with. A call the model says cannot be written (closed, not initialized, maxPending reached)
// is marked so the log check can tell when it was written anyway.

import type { Settled } from "../../tests/support.ts";
import { describeOutcome, settled } from "../support-edges.ts";
import { mmsg } from "./messages.ts";
import { expectThat, type Dimension, type Model, type Real } from "./model.ts";

/** An expected outcome: a value (compared as JSON) or a rejection code. */
export type Expected = { value: unknown } | { code: string | string[] };

interface Gate {
  code: string;
  dimension: Dimension;
  why: string;
}

// The rejection the contract requires before anything is written, if any.
export function gate(m: Model): Gate | undefined {
  if (m.closed) return { code: "CLIENT_CLOSED", dimension: "rubric/lifecycle", why: mmsg("whyClosed") };
  if (!m.initialized) return { code: "MCP_NOT_INITIALIZED", dimension: "rubric/handshake", why: mmsg("whyNotInitialized") };
  if (m.held.length >= m.config.maxPending) return { code: "MCP_BUSY", dimension: "rubric/lifecycle", why: mmsg("whyFull", { max: m.config.maxPending }) };
  return undefined;
}

function show(expected: Expected): string {
  return "value" in expected ? `resolve ${JSON.stringify(expected.value)?.slice(0, 80)}` : `reject ${[expected.code].flat().join(" | ")}`;
}

// Compares an outcome with the expectation; the dimension is the sentence the call tests,
// except for an unexpected MCP_BUSY (a slot not freed) and an answer that belongs to another call.
export function expectOutcome(outcome: Settled<unknown>, expected: Expected, dimension: Dimension, step: string, others: unknown[] = []): void {
  if ("value" in expected) {
    if (outcome.status === "fulfilled" && JSON.stringify(outcome.value) === JSON.stringify(expected.value)) return;
    if (outcome.status === "fulfilled" && others.some((o) => JSON.stringify(o) === JSON.stringify(outcome.value))) {
      expectThat(false, "rubric/id-matching", "otherAnswer", { step, actual: describeOutcome(outcome), expected: show(expected) });
    }
    const busy = outcome.status === "rejected" && outcome.reason?.code === "MCP_BUSY";
    expectThat(false, busy ? "rubric/lifecycle" : dimension, "outcome", { step, expected: show(expected), actual: describeOutcome(outcome) });
  }
  const codes = [expected.code].flat();
  const ok = outcome.status === "rejected" && codes.includes(outcome.reason?.code);
  expectThat(ok, dimension, "outcome", { step, expected: show(expected), actual: describeOutcome(outcome) });
}

// Starts a tools/call with a fresh tag; returns the tag, the gate that applies, and the outcome to come.
export function startCall(m: Model, r: Real, tool: string, args: Record<string, unknown>, options: { signal?: AbortSignal; timeoutMs?: number } = {}) {
  const tag = r.tag();
  const g = gate(m);
  if (g) m.unwritten.set(tag, { why: g.why, dimension: g.dimension });
  const outcome = settled(Promise.resolve().then(() => r.client.callTool(tool, { ...args, t: tag }, options)));
  return { tag, gate: g, outcome };
}
