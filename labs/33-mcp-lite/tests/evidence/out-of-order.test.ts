// Evidence test: evidence/out-of-order (see common.ts for how all six are built).

import { say } from "../messages.ts";
import { describe, expect, it } from "vitest";
import { expectCleanShutdown, initialize, received, sent, within } from "../support.ts";
import { start, expectValue } from "./common.ts";

describe("evidence/out-of-order", () => {
  it("matches a fast answer to the fast call while the slow call waits, then the slow one", async () => {
    const h = start();
    await initialize(h);
    // The server holds "slow" until it has answered "fast": answers arrive fast, then slow.
    const slow = h.client.callTool("echo", { value: "slow", after: "fast" });
    const fast = h.client.callTool("echo", { value: "fast" });
    expectValue(await within(fast, say("快调用", "fast call")), { content: "fast" }, say("快调用", "fast call"));
    expectValue(await within(slow, say("慢调用", "slow call")), { content: "slow" }, say("慢调用", "slow call"));

    const answers = sent(h.log()).filter((m) => m.result?.content === "fast" || m.result?.content === "slow");
    expect(answers.map((m) => m.result.content)).toEqual(["fast", "slow"]);
    const calls = received(h.log(), "tools/call");
    expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);
    await expectCleanShutdown(h, say("乱序响应", "out-of-order"));
  });
});
