// Homework: the cancellation notice. When a written request times out or is aborted, the
// client settles it locally first, then tells the server, best effort, with
// notifications/cancelled {requestId, reason}. A request never sent needs no notice.

import { describe, it } from "vitest";
import { McpClient } from "#submission/src/mcp-client.ts";
import { check, expectCleanShutdown, expectCode, harness, initialize, received, rejection, waitFor } from "../tests/support.ts";
import { hw } from "./messages.ts";

function start() {
  return harness((command) => new McpClient({ ...command, timeoutMs: 10_000 }));
}

// The id the server saw for the call tagged `tag`.
function idOf(log: ReturnType<ReturnType<typeof start>["log"]>, tag: string): number | undefined {
  return received(log, "tools/call").find((m) => m.params?.arguments?.tag === tag)?.id;
}

describe("homework/cancel-notice", () => {
  it("sends notifications/cancelled {requestId, reason} after a timeout and after an abort", async () => {
    const h = start();
    await initialize(h);

    const timedOut = await rejection(h.client.callTool("never", { tag: "timeout" }, { timeoutMs: 100 }), "callTool(never, 100 ms)");
    expectCode(timedOut, "MCP_TIMEOUT", "callTool(never, 100 ms)");
    const timeoutId = idOf(h.log(), "timeout");
    const noticeFor = (id: number | undefined) =>
      received(h.log(), "notifications/cancelled").find((m) => m.params?.requestId === id && typeof m.params?.reason === "string");
    await waitFor(() => noticeFor(timeoutId) !== undefined, hw("lblCancelAfterTimeout")).catch(() => {
      throw new Error(hw("noCancelNotice", { when: "MCP_TIMEOUT", id: timeoutId, actual: received(h.log(), "notifications/cancelled") }));
    });

    const controller = new AbortController();
    const call = h.client.callTool("never", { tag: "abort" }, { signal: controller.signal });
    await waitFor(() => idOf(h.log(), "abort") !== undefined, hw("lblServerGotCall"));
    controller.abort(new Error("user pressed stop"));
    expectCode(await rejection(call, hw("lblAbortedCall")), "MCP_ABORTED", hw("lblAbortedCall"));
    const abortId = idOf(h.log(), "abort");
    await waitFor(() => noticeFor(abortId) !== undefined, hw("lblCancelAfterAbort")).catch(() => {
      throw new Error(hw("noCancelNotice", { when: hw("whenAbort"), id: abortId, actual: received(h.log(), "notifications/cancelled") }));
    });

    const pre = new AbortController();
    pre.abort();
    expectCode(await rejection(h.client.callTool("never", { tag: "pre" }, { signal: pre.signal }), hw("lblPreAborted")), "MCP_ABORTED", hw("lblPreAborted"));
    // Anything the client wrote before this answer is already in the server's log.
    await h.client.callTool("echo", { value: "sync" });
    const extra = received(h.log(), "notifications/cancelled").filter((m) => m.params?.requestId !== timeoutId && m.params?.requestId !== abortId);
    check(extra.length === 0, hw("cancelForUnsent", { actual: extra }));
    await expectCleanShutdown(h, hw("whenCancelNotice"));
  });
});
