// Evidence test: evidence/abort (see common.ts for how all six are built).

import { describe, it } from "vitest";
import { msg, say } from "../messages.ts";
import { abortListeners, check, expectCleanShutdown, expectCode, initialize, received, rejection, waitFor, within } from "../support.ts";
import { start } from "./common.ts";

describe("evidence/abort", () => {
  it("rejects a pre-aborted call without writing it, and an aborted call with its listener removed", async () => {
    const h = start();
    await initialize(h);

    const pre = new AbortController();
    pre.abort(new Error("user pressed stop"));
    const early = await rejection(h.client.callTool("never", { tag: "pre-aborted" }, { signal: pre.signal }), say("预先 abort 的 callTool", "pre-aborted callTool"));
    expectCode(early, "MCP_ABORTED", say("预先 abort 的 callTool", "pre-aborted callTool"));

    const running = new AbortController();
    const call = h.client.callTool("never", { tag: "in-flight" }, { signal: running.signal });
    await waitFor(
      () => received(h.log(), "tools/call").some((m) => m.params?.arguments?.tag === "in-flight"),
      say("服务器收到在途调用", "the server receiving the in-flight call"),
    );
    running.abort(new Error("cancelled by the agent"));
    const aborted = await rejection(call, say("被 abort 的 callTool", "aborted callTool"));
    expectCode(aborted, "MCP_ABORTED", say("被 abort 的 callTool", "aborted callTool"));
    check(abortListeners(running.signal) === 0, msg("listenersLeft", { when: say("abort ", "abort"), count: abortListeners(running.signal) }));

    // A call that completes normally must also remove its listener from a long-lived signal.
    const longLived = new AbortController();
    await within(h.client.callTool("echo", { value: 1 }, { signal: longLived.signal }), say("带 signal 的 callTool(echo)", "callTool(echo) with a signal"));
    check(abortListeners(longLived.signal) === 0, msg("listenersLeft", { when: say("正常响应", "a normal answer"), count: abortListeners(longLived.signal) }));

    // Everything written before this answer is in the log: the pre-aborted call is not.
    const wrote = received(h.log(), "tools/call").filter((m) => m.params?.arguments?.tag === "pre-aborted");
    check(wrote.length === 0, msg("wroteAfterAbort", { what: wrote[0] }));
    check(h.client.pendingCount === 0, msg("pendingLeft", { when: say("abort ", "abort"), count: h.client.pendingCount }));
    await expectCleanShutdown(h, say("abort ", "abort"));
  });
});
