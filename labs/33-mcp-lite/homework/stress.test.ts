// Homework: 100 concurrent calls with random delays. Every call gets its own answer, and
// afterwards nothing is left: no pending entry, no timer, no abort listener.

import { describe, it } from "vitest";
import { McpClient } from "#submission/src/mcp-client.ts";
import { abortListeners, check, expectCleanShutdown, harness, initialize, within } from "../tests/support.ts";
import { msg } from "../tests/messages.ts";
import { seededRandom } from "../probes/support.ts";
import { hw } from "./messages.ts";

describe("homework/stress-100", () => {
  it("matches 100 random-delay calls to their answers and leaves nothing pending", async () => {
    const seed = Number(process.env.LAB_SEED ?? 33);
    const next = seededRandom(seed); // one seed, one sequence of delays: a failure can be replayed
    const h = harness((command) => new McpClient({ ...command, timeoutMs: 20_000 }));
    await initialize(h);
    const signal = new AbortController().signal; // one long-lived signal shared by every call
    const calls = Array.from({ length: 100 }, (_, index) => {
      const delay = Math.floor(next() * 40);
      return h.client.callTool("echo", { value: `call-${index}`, delay }, { signal });
    });
    // A correct client answers all 100 (delays under 40 ms) in well under a second.
    const results = await within(Promise.all(calls), hw("whenHundredCalls"));
    results.forEach((result, index) => {
      const expected = { content: `call-${index}` };
      check(JSON.stringify(result) === JSON.stringify(expected), hw("stressMismatch", { index, expected, actual: result }));
    });
    check(h.client.pendingCount === 0, msg("pendingLeft", { when: hw("whenHundredCalls"), count: h.client.pendingCount }));
    const listeners = abortListeners(signal);
    check(listeners === 0, msg("listenersLeft", { when: hw("whenHundredCalls"), count: listeners }));
    await expectCleanShutdown(h, hw("whenHundredCalls"));
  });
});
