// Rubric probe: 生命周期 (lifecycle). After a timeout, an abort, a remote error, a server
// exit and close(): nothing pending, no timer of the client, no abort listener left.
// The second half (timeout racing abort, the 100-call stress) is lifecycle-stress.test.ts,
// a file of its own so the two halves run in parallel workers.

import { describe, it } from "vitest";
import { expectCode, received, rejection, waitFor, within } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { expectClean, start } from "./support.ts";

describe("rubric/lifecycle", () => {
  it("leaves nothing pending, no timer and no abort listener after a timeout, an abort and a remote error", async () => {
    const h = start();
    await within(h.client.initialize(), "initialize()");
    const s1 = new AbortController();
    expectCode(await rejection(h.client.callTool("never", {}, { timeoutMs: 50, signal: s1.signal }), "callTool(never, 50 ms)"), "MCP_TIMEOUT", "callTool(never, 50 ms)");
    expectClean(h, "MCP_TIMEOUT", [s1.signal]);

    const s2 = new AbortController();
    const call = h.client.callTool("never", { tag: "abort-me" }, { signal: s2.signal });
    await waitFor(() => received(h.log(), "tools/call").some((m) => m.params?.arguments?.tag === "abort-me"), "the server receiving the call");
    s2.abort();
    expectCode(await rejection(call, "aborted callTool"), "MCP_ABORTED", "aborted callTool");
    expectClean(h, "MCP_ABORTED", [s1.signal, s2.signal]);

    const s3 = new AbortController();
    expectCode(await rejection(h.client.callTool("fail", {}, { signal: s3.signal }), "callTool(fail)"), "MCP_ERROR", "callTool(fail)");
    expectClean(h, "MCP_ERROR", [s1.signal, s2.signal, s3.signal]);
  });

  it("leaves nothing pending, no timer and no abort listener after the server exits and after close()", async () => {
    const h = start();
    await within(h.client.initialize(), "initialize()");
    const signals = [new AbortController(), new AbortController()];
    const pending = [
      h.client.callTool("never", {}, { signal: signals[0]!.signal }),
      h.client.callTool("exit", { code: 4 }, { signal: signals[1]!.signal }),
    ];
    // Waited for together: a client that hangs costs one hang deadline here, not two.
    const errors = await Promise.all(pending.map((p, i) => rejection(p, `pending call #${i + 1}`)));
    errors.forEach((error, i) => expectCode(error, "MCP_PROCESS_EXIT", `pending call #${i + 1}`));
    expectClean(h, "MCP_PROCESS_EXIT", signals.map((c) => c.signal));

    await within(h.client.initialize(), "initialize() after the exit");
    const s3 = new AbortController();
    const inFlight = h.client.callTool("never", { tag: "at-close" }, { signal: s3.signal });
    await waitFor(() => received(h.log(), "tools/call").some((m) => m.params?.arguments?.tag === "at-close"), "the server receiving the call");
    const closing = h.client.close();
    expectCode(await rejection(inFlight, "the call pending at close()"), "CLIENT_CLOSED", "the call pending at close()");
    await within(closing, "close()", 10_000);
    expectClean(h, "close()", [s3.signal]);
  });
});
