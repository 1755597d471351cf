// The manager's observability: metrics() per server (state, pending, latency percentiles,
// timeouts, aborts, unknown responses, protocol faults, stderr truncation, exits, tool
// errors apart from ok) and the number of running servers, with no arguments, results or
// content in it; stderr(server) is the current or last process's redacted tail.
import { describe, expect, it } from "vitest";
import type { FixtureOptions, FixtureWorkspace } from "../../../fixtures/index.ts";
import { received } from "../../../labs/33-mcp-lite/tests/support.ts";
import type { ServerConfig } from "../src/manager.ts";
import { agentServer, managed, waitFor, workspace } from "./support.ts";

function fixture(ws: FixtureWorkspace, tools: string[], options: FixtureOptions = {}, extra: Partial<ServerConfig> = {}): ServerConfig {
  return { ...ws.command({ selfDestructMs: 60_000, ...options }), timeoutMs: 10_000, tools: tools.map((name) => ({ name })), ...extra };
}

const MARKER = "argument-marker-7f3a";

describe("metrics()", () => {
  it("counts per server what its clients saw, tool errors apart from ok, and never carries arguments or results", async () => {
    const a = workspace();
    const b = workspace();
    const c = workspace();
    const manager = managed({
      servers: {
        main: fixture(a, ["echo", "never", "stderr"], { scenarios: ["unknown-id"] }, { maxStderrBytes: 1024 }),
        tools: agentServer(b, "leaky", { tools: [{ name: "echo" }, { name: "tool-error" }] }),
        broken: fixture(c, ["echo"], { scenarios: ["non-object"] }),
        idle: fixture(workspace(), ["echo"]),
      },
    });
    expect(manager.metrics()).toMatchObject({ runId: manager.runId, runningServers: 0, servers: { main: { state: "unused", pending: 0, availability: null } } });
    await expect(manager.callTool("main/echo", { value: MARKER })).resolves.toEqual({ content: MARKER });
    await expect(manager.callTool("main/never", {}, { timeoutMs: 200 })).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    const mine = new AbortController();
    const held = manager.callTool("main/never", { value: MARKER }, { signal: mine.signal });
    await waitFor(() => received(a.log(), "tools/call").filter((call) => call.params.name === "never").length === 2, "the held call to reach the server");
    expect(manager.metrics().servers.main!.pending).toBeGreaterThanOrEqual(1);
    mine.abort();
    await expect(held).rejects.toMatchObject({ code: "MCP_ABORTED", reason: "user" });
    await manager.callTool("main/stderr", { bytes: 4096 });
    await expect(manager.callTool("tools/tool-error")).resolves.toMatchObject({ isError: true });
    await expect(manager.callTool("tools/echo", { value: "x" })).resolves.toBeDefined();
    await expect(manager.callTool("broken/echo", { value: 1 })).rejects.toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    // The broken server counts as running until its process is gone (it is being stopped).
    await waitFor(() => manager.metrics().servers.broken!.running === false, "the broken server to be stopped");

    const metrics = manager.metrics();
    expect(metrics.runningServers).toBe(2);
    expect(metrics.servers.main).toMatchObject({
      state: "ready",
      running: true,
      pending: 0,
      calls: { ok: 2, toolErrors: 0, stopped: { user: 1 }, failed: { MCP_TIMEOUT: 1 } },
      timeouts: 1,
      aborts: 1,
      stderrTruncated: 1,
      latencyMs: { count: 4 },
    });
    expect(metrics.servers.main!.unknownResponses).toBeGreaterThanOrEqual(2);
    expect(metrics.servers.main!.latencyMs.p99).toBeGreaterThanOrEqual(metrics.servers.main!.latencyMs.p50);
    expect(metrics.servers.tools).toMatchObject({ calls: { ok: 1, toolErrors: 1 } });
    expect(metrics.servers.broken).toMatchObject({ protocolFaults: 1, running: false, failures: 1, state: "backoff" });
    expect(metrics.servers.idle).toMatchObject({ state: "unused", starts: 0, running: false });
    expect(manager.report().calls).toMatchObject({ ok: 3, toolErrors: 1 });
    expect(JSON.stringify(metrics)).not.toContain(MARKER);
    await manager.close();
    const after = manager.metrics();
    expect(after.runningServers).toBe(0);
    // How the closed server went (stdin end or SIGTERM) is the close ladder's business; that it was expected is the point.
    expect(Object.entries(after.servers.main!.exits)).toEqual([[expect.stringMatching(/^expected /), 1]]);
  });

  it("stderr(server) is the redacted tail of the current or last process", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: fixture(ws, ["stderr", "exit"], {}, { secrets: ["pa55word"] }) } });
    expect(manager.stderr("s")).toEqual({ text: "", truncated: false });
    await manager.callTool("s/stderr", { text: "login pa55word ok\n" });
    await waitFor(() => manager.stderr("s").text.includes("ok"), "the stderr line");
    expect(manager.stderr("s").text).toContain("login [REDACTED] ok");
    await expect(manager.callTool("s/exit", { code: 2, stderr: "dying with pa55word\n" })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    expect(manager.stderr("s").text).toContain("dying with [REDACTED]");
    expect(() => manager.stderr("nope")).toThrow(/unknown server/);
  });
});
