// Evidence test: evidence/server-exit (see common.ts for how all six are built).

import { describe, it } from "vitest";
import { msg, say } from "../messages.ts";
import { check, received, expectCleanShutdown, expectCode, initialize, rejection, within } from "../support.ts";
import { start, expectValue } from "./common.ts";

describe("evidence/server-exit", () => {
  it("rejects every pending call with MCP_PROCESS_EXIT, exit code and stderr, and can start again", async () => {
    const h = start();
    await initialize(h);
    const firstPid = h.client.pid;
    const pending = [
      h.client.callTool("never", {}),
      h.client.callTool("echo", { value: "held", after: "nothing-will-answer-this" }),
      h.client.callTool("exit", { code: 7, stderr: "fatal: disk on fire\n" }),
    ];
    const errors = await Promise.all(pending.map((p, i) => rejection(p, say(`第 ${i + 1} 个在途调用`, `pending call #${i + 1}`))));
    errors.forEach((error, i) => expectCode(error, "MCP_PROCESS_EXIT", say(`第 ${i + 1} 个在途调用`, `pending call #${i + 1}`)));
    const withDetails = errors.find((e) => e.exitCode === 7 && String(e.stderr ?? "").includes("disk on fire"));
    check(
      withDetails,
      msg("exitDetails", { code: 7, text: "disk on fire", actualCode: errors[0]?.exitCode, actualStderr: errors[0]?.stderr }),
    );
    check(!h.client.initialized, msg("stillInitialized"));
    check(h.client.pendingCount === 0, msg("pendingLeft", { when: "MCP_PROCESS_EXIT", count: h.client.pendingCount }));

    await initialize(h, say("退出之后的 initialize()", "initialize() after the exit"));
    check(h.client.pid !== undefined && h.client.pid !== firstPid, msg("notRestartable"));
    expectValue(await within(h.client.callTool("echo", { value: "again" }), say("新服务器上的 callTool(echo)", "callTool(echo) on the new server")), { content: "again" }, say("新服务器上的 callTool(echo)", "callTool(echo) on the new server"));
    // Everything written before that answer is logged: the calls pending at the exit were
    // sent once, never replayed to the new server.
    const nevers = received(h.log(), "tools/call").filter((m) => m.params?.name === "never").length;
    check(nevers === 1, msg("replayed", { count: nevers }));
    await expectCleanShutdown(h, say("服务器退出", "server exit"));
  });
});
