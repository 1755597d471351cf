// The six evidence tests of Lab 33. One copy: "#submission" points at the starter, the
// reference solution or a learner's folder. Every ordering below is decided by the
// fixture server (it holds and releases answers), never by racing timers; the only
// deadlines are hang detectors that a correct client never comes near.

import { describe, expect, it } from "vitest";
import { McpClient } from "#submission/src/mcp-client.ts";
import { msg } from "./messages.ts";
import {
  abortListeners,
  check,
  expectCleanShutdown,
  expectCode,
  harness,
  received,
  rejection,
  sent,
  waitFor,
  within,
} from "./support.ts";

type Client = InstanceType<typeof McpClient>;

function start(fixture: Parameters<typeof harness>[1] = {}, timeoutMs = 10_000) {
  return harness((command) => new McpClient({ ...command, timeoutMs }), fixture);
}

function expectValue(actual: unknown, expected: unknown, label: string): void {
  check(JSON.stringify(actual) === JSON.stringify(expected), msg("wrongValue", { label, expected, actual }));
}

describe("evidence/happy-path", () => {
  it("initializes, lists the echo tool, calls it, and close() leaves no process", async () => {
    const h = start();
    const init = await within(h.client.initialize(), "initialize()");
    expect(init).toMatchObject({ protocolVersion: expect.any(String), serverInfo: { name: "lab33-fixture" } });
    expect(h.client.initialized).toBe(true);

    const tools = await within(h.client.listTools(), "listTools()");
    const echo = tools.find((tool: { name: string }) => tool.name === "echo");
    expect(echo?.inputSchema).toMatchObject({ type: "object" });

    expectValue(await within(h.client.callTool("echo", { value: "ok" }), "callTool(echo)"), { content: "ok" }, "callTool(echo)");
    const log = h.log();
    expect(received(log, "initialize")).toHaveLength(1);
    expect(received(log, "notifications/initialized")).toHaveLength(1);
    expect(typeof h.client.pid).toBe("number");
    await expectCleanShutdown(h, "happy path");
  });
});

describe("evidence/out-of-order", () => {
  it("matches a fast answer to the fast call while the slow call waits, then the slow one", async () => {
    const h = start();
    await within(h.client.initialize(), "initialize()");
    // The server holds "slow" until it has answered "fast": answers arrive fast, then slow.
    const slow = h.client.callTool("echo", { value: "slow", after: "fast" });
    const fast = h.client.callTool("echo", { value: "fast" });
    expectValue(await within(fast, "fast call"), { content: "fast" }, "fast call");
    expectValue(await within(slow, "slow call"), { content: "slow" }, "slow call");

    const answers = sent(h.log()).filter((m) => m.result?.content === "fast" || m.result?.content === "slow");
    expect(answers.map((m) => m.result.content)).toEqual(["fast", "slow"]);
    const calls = received(h.log(), "tools/call");
    expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);
    await expectCleanShutdown(h, "out-of-order");
  });
});

describe("evidence/remote-error", () => {
  it("rejects a JSON-RPC error as MCP_ERROR with its code and data, and keeps working", async () => {
    const h = start();
    await within(h.client.initialize(), "initialize()");
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
    expectValue(await within(h.client.callTool("echo", { value: "still here" }), "callTool(echo) after the error"), { content: "still here" }, "callTool(echo) after the error");
    check(h.client.pid === pidBefore, msg("restartedOnError", { before: pidBefore, after: h.client.pid }));
    await expectCleanShutdown(h, "remote error");
  });
});

describe("evidence/timeout", () => {
  it("rejects with MCP_TIMEOUT, cleans up, and never hands the late answer to a newer call", async () => {
    // This server answers even after a cancellation notice, as one that already finished would.
    const h = start({ scenarios: ["ignore-cancellation"] });
    await within(h.client.initialize(), "initialize()");
    const never = await rejection(h.client.callTool("never", {}, { timeoutMs: 100 }), "callTool(never, 100 ms)");
    expectCode(never, "MCP_TIMEOUT", "callTool(never, 100 ms)");
    check(h.client.pendingCount === 0, msg("pendingLeft", { when: "MCP_TIMEOUT", count: h.client.pendingCount }));

    // The server answers "late" 300 ms after receiving it, long after the 50 ms deadline.
    const late = await rejection(h.client.callTool("echo", { value: "late", delay: 300 }, { timeoutMs: 50 }), "callTool(echo late, 50 ms)");
    expectCode(late, "MCP_TIMEOUT", "callTool(echo late, 50 ms)");
    await waitFor(() => sent(h.log()).some((m) => m.result?.content === "late"), "the fixture's late answer", 5_000);
    const next = await within(h.client.callTool("echo", { value: "next" }), "callTool(echo next)");
    check(JSON.stringify(next) === JSON.stringify({ content: "next" }), msg("lateAnswerMatched", { actual: next }));
    await expectCleanShutdown(h, "timeout");
  });
});

describe("evidence/abort", () => {
  it("rejects a pre-aborted call without writing it, and an aborted call with its listener removed", async () => {
    const h = start();
    await within(h.client.initialize(), "initialize()");

    const pre = new AbortController();
    pre.abort(new Error("user pressed stop"));
    const early = await rejection(h.client.callTool("never", { tag: "pre-aborted" }, { signal: pre.signal }), "pre-aborted callTool");
    expectCode(early, "MCP_ABORTED", "pre-aborted callTool");

    const running = new AbortController();
    const call = h.client.callTool("never", { tag: "in-flight" }, { signal: running.signal });
    await waitFor(
      () => received(h.log(), "tools/call").some((m) => m.params?.arguments?.tag === "in-flight"),
      "the server receiving the in-flight call",
    );
    running.abort(new Error("cancelled by the agent"));
    const aborted = await rejection(call, "aborted callTool");
    expectCode(aborted, "MCP_ABORTED", "aborted callTool");
    check(abortListeners(running.signal) === 0, msg("listenersLeft", { when: "abort", count: abortListeners(running.signal) }));

    // A call that completes normally must also remove its listener from a long-lived signal.
    const longLived = new AbortController();
    await within(h.client.callTool("echo", { value: 1 }, { signal: longLived.signal }), "callTool(echo) with a signal");
    check(abortListeners(longLived.signal) === 0, msg("listenersLeft", { when: "a normal answer", count: abortListeners(longLived.signal) }));

    // Everything written before this answer is in the log: the pre-aborted call is not.
    const wrote = received(h.log(), "tools/call").filter((m) => m.params?.arguments?.tag === "pre-aborted");
    check(wrote.length === 0, msg("wroteAfterAbort", { what: wrote[0] }));
    check(h.client.pendingCount === 0, msg("pendingLeft", { when: "abort", count: h.client.pendingCount }));
    await expectCleanShutdown(h, "abort");
  });
});

describe("evidence/server-exit", () => {
  it("rejects every pending call with MCP_PROCESS_EXIT, exit code and stderr, and can start again", async () => {
    const h = start();
    await within(h.client.initialize(), "initialize()");
    const firstPid = h.client.pid;
    const pending = [
      h.client.callTool("never", {}),
      h.client.callTool("echo", { value: "held", after: "nothing-will-answer-this" }),
      h.client.callTool("exit", { code: 7, stderr: "fatal: disk on fire\n" }),
    ];
    const errors = await Promise.all(pending.map((p, i) => rejection(p, `pending call #${i + 1}`)));
    errors.forEach((error, i) => expectCode(error, "MCP_PROCESS_EXIT", `pending call #${i + 1}`));
    const withDetails = errors.find((e) => e.exitCode === 7 && String(e.stderr ?? "").includes("disk on fire"));
    check(
      withDetails,
      msg("exitDetails", { code: 7, text: "disk on fire", actualCode: errors[0]?.exitCode, actualStderr: errors[0]?.stderr }),
    );
    check(!h.client.initialized, msg("stillInitialized"));
    check(h.client.pendingCount === 0, msg("pendingLeft", { when: "MCP_PROCESS_EXIT", count: h.client.pendingCount }));

    await within(h.client.initialize(), "initialize() after the exit");
    check(h.client.pid !== undefined && h.client.pid !== firstPid, msg("notRestartable"));
    expectValue(await within(h.client.callTool("echo", { value: "again" }), "callTool(echo) on the new server"), { content: "again" }, "callTool(echo) on the new server");
    await expectCleanShutdown(h, "server exit");
  });
});

export type { Client };
