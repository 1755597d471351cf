// The fault battery: one test per hostile-server behaviour the lesson names. Each ends
// with a stable error code, nothing pending, no process of the fixture left alive, and
// (for the floods) a bound on how much memory the client grew.

import { describe, expect, it } from "vitest";
import { LineTooLongError } from "../../labs/33-mcp-lite/solution/src/framing.ts";
import { failure, startClient, waitFor, type Started } from "../support.ts";
import { expectRetainedWithin, MiB, sampleMemory } from "./memory.ts";

// Every fault test ends here: no request left, close() resolves, every pid gone.
async function expectNothingLeft(s: Started): Promise<void> {
  expect(s.client.pendingCount).toBe(0);
  await s.client.close();
  expect(s.client.pid).toBeUndefined();
  expect(s.alive()).toEqual([]);
}

describe("fault battery", () => {
  it("half a line and then exit rejects the call with MCP_PROCESS_EXIT and drops the half line", async () => {
    const s = startClient({ scenarios: ["half-line-exit"] });
    await s.client.initialize();
    const error = await failure(s.client.callTool("echo", { value: 1 }));
    // The server read the call before dying: whether it acted on it is unknown.
    expect(error).toMatchObject({ code: "MCP_PROCESS_EXIT", exitCode: 3, outcome: "unknown" });
    expect(s.client.initialized).toBe(false);
    expect(s.client.metrics.protocolFaults).toBe(0);
    await expectNothingLeft(s);
  });

  it.each([
    ["a JSON line that is not an object", "non-object", "not a JSON object"],
    ["stdout pollution (a console.log in the server)", "stdout-pollution", '"ready"'],
  ])("%s is a protocol fault: every pending call rejects and the server is stopped", async (_name, scenario, reason) => {
    const s = startClient({ scenarios: [scenario] });
    await s.client.initialize();
    const pid = s.client.pid!;
    const other = s.client.callTool("never");
    const error = await failure(s.client.callTool("echo", { value: 1 }));
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    expect(error.message).toContain(reason);
    await expect(other).rejects.toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    await waitFor(() => s.pids().includes(pid) && !s.alive().includes(pid), "the polluting server to be stopped");
    expect(s.client.metrics.protocolFaults).toBe(1);
    await expectNothingLeft(s);
  });

  it("a duplicate response id settles the call once and the second answer is only counted", async () => {
    const s = startClient({ scenarios: ["duplicate-id"] });
    await s.client.initialize();
    await expect(s.client.callTool("echo", { value: "first" })).resolves.toEqual({ content: "first" });
    // The duplicate follows its original on the same pipe; the next answer proves it was read.
    await expect(s.client.callTool("echo", { value: "second" })).resolves.toEqual({ content: "second" });
    expect(s.client.metrics.unknownResponses).toBeGreaterThanOrEqual(1);
    expect(s.client.initialized).toBe(true);
    await expectNothingLeft(s);
  });

  it("a response with both result and error is a protocol fault", async () => {
    const s = startClient({ scenarios: ["result-and-error"] });
    await s.client.initialize();
    const error = await failure(s.client.callTool("echo", { value: 1 }));
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    expect(error.message).toContain("both");
    expect(s.client.initialized).toBe(false);
    await expectNothingLeft(s);
  });

  it("a 50 MiB line with no newline is refused at maxLineBytes, keeps LineTooLongError as cause, and memory stays bounded", async () => {
    const maxLineBytes = 1 * MiB;
    const s = startClient({ scenarios: ["oversized"], floodBytes: 50 * MiB }, { maxLineBytes });
    await s.client.initialize();
    const never = s.client.callTool("never");
    const memory = sampleMemory();
    const error = await failure(s.client.callTool("echo", { value: 1 }));
    const peak = memory.stop();
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    expect(error.cause).toBeInstanceOf(LineTooLongError);
    expect(error.cause).toMatchObject({ limitBytes: maxLineBytes });
    await expect(never).rejects.toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    // Peak includes garbage V8 has not collected yet; what survives a collection is the real bound.
    expect(peak.heapGrowth).toBeLessThan(maxLineBytes + 32 * MiB);
    await expectRetainedWithin(peak.baseline, maxLineBytes + 4 * MiB, "after the oversized line");
    await expectNothingLeft(s);
  });

  it("stdin closed early by the server fails the call instead of hanging, and the server is stopped", async () => {
    const s = startClient({ scenarios: ["stdin-close"] }, { closeTimeoutMs: 500 });
    await s.client.initialize();
    const error = await failure(s.client.callTool("echo", { value: 1 }));
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    expect(error.message).toMatch(/stdin/);
    await waitFor(() => s.client.pid === undefined, "the deaf server to be stopped");
    await expectNothingLeft(s);
  });

  it("a 50 MiB stderr flood is drained into a bounded tail while calls keep working", async () => {
    const maxStderrBytes = 64 * 1024;
    const s = startClient({ scenarios: ["stderr-flood"], floodBytes: 50 * MiB }, { maxStderrBytes });
    const memory = sampleMemory();
    await s.client.initialize();
    await waitFor(() => s.client.stderr.text.endsWith("FLOOD-END\n"), "the end of the stderr flood");
    const peak = memory.stop();
    await expect(s.client.callTool("echo", { value: "still fine" })).resolves.toEqual({ content: "still fine" });
    expect(s.client.stderr.truncated).toBe(true);
    expect(Buffer.byteLength(s.client.stderr.text)).toBeLessThanOrEqual(maxStderrBytes);
    // No bound on the peak here: it counts pipe chunks V8 has not collected yet, and a peak
    // near the flood's size cannot tell "held whole" from "not yet collected". What survives
    // a collection is the real bound.
    await expectRetainedWithin(peak.baseline, maxStderrBytes + 4 * MiB, "after the stderr flood");

    const exit = await failure(s.client.callTool("exit", { code: 7, stderr: "last words 最后的话\n" }));
    expect(exit).toMatchObject({ code: "MCP_PROCESS_EXIT", exitCode: 7, stderrTruncated: true });
    expect(exit.stderr.endsWith("last words 最后的话\n")).toBe(true);
    expect(Buffer.byteLength(exit.stderr)).toBeLessThanOrEqual(maxStderrBytes);
    expect(s.client.metrics.stderrTruncated).toBe(true);
    await expectNothingLeft(s);
  });

  it("a server that ignores SIGTERM is SIGKILLed after closeTimeoutMs and close() waits for it", async () => {
    const s = startClient({ scenarios: ["ignore-sigterm"] }, { closeTimeoutMs: 300 });
    await s.client.initialize();
    const waiting = s.client.callTool("never");
    const closed = s.client.close();
    await expect(waiting).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    await closed;
    expect(s.alive()).toEqual([]);
    expect(s.client.metrics.lastExit).toMatchObject({ signal: "SIGKILL", expected: true });
    await expectNothingLeft(s);
  });

  it("a grandchild holding the pipes neither keeps a call pending nor survives the server's exit", async () => {
    const s = startClient({ scenarios: ["grandchild"] });
    await s.client.initialize();
    expect(s.pids()).toHaveLength(2);
    const error = await failure(s.client.callTool("exit", { code: 5 }));
    expect(error).toMatchObject({ code: "MCP_PROCESS_EXIT", exitCode: 5 });
    expect(s.alive()).toEqual([]);
    await expectNothingLeft(s);
  });

  it("a call written after the server died (EPIPE) rejects with MCP_PROCESS_EXIT even while a grandchild holds stdout", async () => {
    const s = startClient({ scenarios: ["grandchild"] });
    await s.client.initialize();
    const pid = s.client.pid!;
    process.kill(pid, "SIGKILL");
    // Spin without yielding, so the client writes before it has seen the exit: the write
    // fails with EPIPE, and stdout, held open by the grandchild, drains only on its timeout.
    const deadline = Date.now() + 2_000;
    while (s.alive().includes(pid) && Date.now() < deadline);
    const error = await failure(s.client.callTool("echo", { value: 1 }));
    expect(error).toMatchObject({ code: "MCP_PROCESS_EXIT", signal: "SIGKILL" });
    expect(s.client.metrics.protocolFaults).toBe(0);
    await expectNothingLeft(s);
  });

  it("a grandchild holding the pipes does not survive close()", async () => {
    const s = startClient({ scenarios: ["grandchild"] });
    await s.client.initialize();
    const waiting = expect(s.client.callTool("never")).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    await s.client.close();
    await waiting;
    expect(s.pids()).toHaveLength(2);
    expect(s.alive()).toEqual([]);
  });

  it("a notification flood past maxNotificationsPerSecond is a protocol fault that stops the server", async () => {
    const s = startClient({ scenarios: ["notification-flood"] }, { maxNotificationsPerSecond: 500 });
    await s.client.initialize();
    const waiting = s.client.callTool("never");
    const error = await failure(waiting);
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    expect(error.message).toContain("notification flood");
    await waitFor(() => s.client.pid === undefined, "the flooding server to be stopped");
    await expectNothingLeft(s);
  });
});
