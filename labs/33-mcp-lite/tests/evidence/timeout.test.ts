// Evidence test: evidence/timeout (see common.ts for how all six are built).

import { describe, it } from "vitest";
import { msg, say } from "../messages.ts";
import { check, expectCleanShutdown, expectCode, initialize, rejection, within } from "../support.ts";
import { start } from "./common.ts";

describe("evidence/timeout", () => {
  it("rejects with MCP_TIMEOUT, cleans up, and never hands the late answer to a newer call", async () => {
    // This server answers even after a cancellation notice, as one that already finished would.
    const h = start({ scenarios: ["ignore-cancellation"] });
    await initialize(h);
    const never = await rejection(h.client.callTool("never", {}, { timeoutMs: 100 }), "callTool(never, 100 ms)");
    expectCode(never, "MCP_TIMEOUT", "callTool(never, 100 ms)");
    check(h.client.pendingCount === 0, msg("pendingLeft", { when: "MCP_TIMEOUT", count: h.client.pendingCount }));

    // The server holds "late" until it has answered "release", so the 50 ms deadline passes
    // first however loaded the machine is.
    const late = await rejection(h.client.callTool("echo", { value: "late", after: "release" }, { timeoutMs: 50 }), "callTool(echo late, 50 ms)");
    expectCode(late, "MCP_TIMEOUT", "callTool(echo late, 50 ms)");
    // "next" is held until the late answer is out, and sent before "release": answering
    // "release" makes the server write release, late, next, in that order, on one stream.
    // So the late answer reaches the client while "next" waits: a client that matches by
    // order or hands it to any pending call gives a wrong answer here, every time.
    const next = h.client.callTool("echo", { value: "next", after: "late" });
    const release = await within(h.client.callTool("echo", { value: "release" }), "callTool(echo release)");
    check(JSON.stringify(release) === JSON.stringify({ content: "release" }), msg("lateAnswerMatched", { actual: release }));
    const after = await within(next, "callTool(echo next)");
    check(JSON.stringify(after) === JSON.stringify({ content: "next" }), msg("lateAnswerMatched", { actual: after }));
    await expectCleanShutdown(h, say("超时", "timeout"));
  });
});
