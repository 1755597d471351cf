// Evidence test: evidence/remote-error (see common.ts for how all six are built).

import { describe, expect, it } from "vitest";
import { msg, say } from "../messages.ts";
import { check, expectCleanShutdown, expectCode, initialize, rejection, within } from "../support.ts";
import { start, expectValue } from "./common.ts";

describe("evidence/remote-error", () => {
  it("rejects a JSON-RPC error as MCP_ERROR with its code and data, and keeps working", async () => {
    const h = start();
    await initialize(h);
    const pidBefore = h.client.pid;
    const error = await rejection(
      h.client.callTool("fail", { code: -32050, message: "quota exceeded", data: { retryAfterMs: 500 } }),
      "callTool(fail)",
    );
    expectCode(error, "MCP_ERROR", "callTool(fail)");
    check(
      error.remoteCode === -32050 && error.data?.retryAfterMs === 500,
      msg("remoteDetails", { code: -32050, actualCode: error.remoteCode, actualData: error.data }),
    );
    expect(String(error.message)).toContain("quota exceeded");

    check(h.client.initialized, msg("notInitializedAfterError"));
    expectValue(await within(h.client.callTool("echo", { value: "still here" }), say("远端错误之后的 callTool(echo)", "callTool(echo) after the error")), { content: "still here" }, say("远端错误之后的 callTool(echo)", "callTool(echo) after the error"));
    check(h.client.pid === pidBefore, msg("restartedOnError", { before: pidBefore, after: h.client.pid }));
    await expectCleanShutdown(h, say("远端错误", "remote error"));
  });
});
