// Observability: a trace event per settled request and per server lifecycle step, with the
// run and the server process they belong to, and per-method latency in the metrics.
import { describe, expect, it } from "vitest";
import type { McpTraceEvent } from "../src/mcp-client.ts";
import { startTraced } from "./support.ts";

const requests = (trace: McpTraceEvent[]) => trace.filter((event) => event.kind === "request");
const servers = (trace: McpTraceEvent[]) => trace.filter((event) => event.kind === "server");

describe("trace", () => {
  it("emits one event per settled request and per lifecycle step, with the runId and a serverInstanceId new for every process", async () => {
    const { client, trace } = startTraced({}, { runId: "run-42" });
    await client.initialize();
    await expect(client.callTool("echo", { value: "ARG-MARKER" })).resolves.toEqual({ content: "ARG-MARKER" });
    await expect(client.callTool("fail", {})).rejects.toMatchObject({ code: "MCP_ERROR" });
    await expect(client.callTool("exit", { code: 3 })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    await client.initialize(); // a second server process
    await client.callTool("echo", { value: "again" });
    await client.close();

    expect(trace.every((event) => event.runId === "run-42")).toBe(true);
    const lifecycle = servers(trace).map((event) => event.kind === "server" && event.phase);
    expect(lifecycle).toEqual(["spawned", "initialized", "exited", "spawned", "initialized", "exited", "closed"]);
    const first = trace[0]!.serverInstanceId;
    const second = servers(trace)[3]!.serverInstanceId;
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).not.toBe(first);
    expect(servers(trace).at(-1)!.serverInstanceId).toBe(second);
    expect(servers(trace)[2]).toMatchObject({ phase: "exited", exitCode: 3, signal: null });
    expect(servers(trace)[1]).toMatchObject({ protocolVersion: "2025-06-18", serverInfo: { name: "lab33-fixture" } });

    const calls = requests(trace).map((event) => event.kind === "request" && [event.method, event.tool, event.status, event.serverInstanceId]);
    expect(calls).toEqual([
      ["initialize", undefined, "ok", first],
      ["tools/call", "echo", "ok", first],
      ["tools/call", "fail", "MCP_ERROR", first],
      ["tools/call", "exit", "MCP_PROCESS_EXIT", first],
      ["initialize", undefined, "ok", second],
      ["tools/call", "echo", "ok", second],
    ]);
    const ids = requests(trace).map((event) => (event.kind === "request" ? event.requestId : 0));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    for (const event of requests(trace)) expect(event.kind === "request" && event.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("never carries arguments, results or content", async () => {
    const { client, trace } = startTraced();
    await client.initialize();
    await client.callTool("echo", { value: "ARG-MARKER" });
    await expect(client.callTool("fail", { message: "CONTENT-MARKER", data: { x: "DATA-MARKER" } })).rejects.toMatchObject({
      code: "MCP_ERROR",
    });
    await client.close();
    const text = JSON.stringify(trace);
    expect(requests(trace)).toHaveLength(3);
    for (const marker of ["ARG-MARKER", "CONTENT-MARKER", "DATA-MARKER"]) expect(text).not.toContain(marker);
  });

  it("a throwing trace sink changes no outcome", async () => {
    const { client } = startTraced({}, {
      onTrace: () => {
        throw new Error("sink broke");
      },
    });
    await client.initialize();
    await expect(client.callTool("echo", { value: 1 })).resolves.toEqual({ content: 1 });
  });
});

describe("metrics", () => {
  it("report per-method latency percentiles, the active server and its instance, and exit reasons", async () => {
    const { client, trace } = startTraced();
    await client.initialize();
    expect(client.metrics).toMatchObject({ activeServers: 1, serverInstanceId: trace[0]!.serverInstanceId });
    // 19 fast calls and one the server holds for 1.5 s: the median stays fast, p99 does not.
    const calls = Array.from({ length: 19 }, (_, i) => client.callTool("echo", { value: i }));
    calls.push(client.callTool("echo", { value: "slow", delay: 1_500 }));
    await Promise.all(calls);
    const latency = client.metrics.latencyMs["tools/call"]!;
    expect(latency.count).toBe(20);
    expect(latency.p99).toBeGreaterThanOrEqual(1_400);
    expect(latency.p50).toBeLessThan(latency.p99);
    expect(latency.p95).toBeLessThanOrEqual(latency.p99);
    expect(client.metrics.latencyMs.initialize!.count).toBe(1);

    await expect(client.callTool("exit", { code: 3 })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    expect(client.metrics).toMatchObject({ activeServers: 0, serverInstanceId: null, exitReasons: { "unexpected code 3": 1 } });
    expect(client.metrics.stops.process).toBe(1);
  });
});
