// One tools/list for many callers: concurrent tools(), select() and callTool() calls that
// need a server's tool list share the listing in flight, and callers that waited for the
// server's start share the listing its health check made, so ten cold calls cost one start
// and one tools/list. Each caller still waits with its own signal; a failed listing rejects
// every caller waiting on it and is not kept (the next call lists again).
import { describe, expect, it } from "vitest";
import type { McpManagerTraceEvent } from "../src/manager.ts";
import { isAlive } from "../../../fixtures/index.ts";
import { agentServer, killAfter, managed, methods, waitFor, workspace } from "./support.ts";

const listings = (ws: ReturnType<typeof workspace>) => methods(ws).filter((method) => method === "tools/list").length;

// A manager whose `leaving` signal is aborted once the server process exists: every caller is
// waiting on the listing by then.
function abortedAtSpawn() {
  const ws = workspace();
  const leaving = new AbortController();
  const onTrace = (event: McpManagerTraceEvent) => {
    if (event.kind === "server" && event.phase === "spawned") leaving.abort(new Error("the user left"));
  };
  const manager = managed({ servers: { srv: agentServer(ws, "hostile", { tools: [{ name: "echo" }] }) }, onTrace });
  return { ws, leaving, manager };
}

describe("the manager's shared tools/list", () => {
  it("ten cold parallel calls: one start, one tools/list, ten tools/call", async () => {
    const ws = workspace();
    const manager = managed({ servers: { srv: agentServer(ws, "hostile", { tools: [{ name: "echo" }] }) } });
    const values = Array.from({ length: 10 }, (_, i) => `v${i}`);
    const results = await Promise.all(values.map((value) => manager.callTool("srv/echo", { value })));
    expect(results).toEqual(values.map((value) => ({ content: [{ type: "text", text: value }] })));
    expect(manager.report().servers[0]).toMatchObject({ starts: 1 });
    expect(ws.pids()).toHaveLength(1);
    expect(listings(ws)).toBe(1);
    expect(methods(ws).filter((method) => method === "tools/call")).toHaveLength(10);
  });

  it("cold tools(), select() and callTool() together share the start's listing", async () => {
    const ws = workspace();
    const manager = managed({ servers: { srv: agentServer(ws, "hostile", { tools: [{ name: "echo" }] }) } });
    const [tools, selected, called] = await Promise.all([manager.tools("srv"), manager.select("srv/echo"), manager.callTool("srv/echo", { value: "x" })]);
    expect(tools.map((tool) => tool.id)).toEqual(["srv/echo"]);
    expect(selected).toEqual(tools[0]);
    expect(called).toEqual({ content: [{ type: "text", text: "x" }] });
    expect(listings(ws)).toBe(1);
  });

  it("concurrent tools() on a running server send one tools/list; a later one lists afresh", async () => {
    const ws = workspace();
    const manager = managed({ servers: { srv: agentServer(ws, "hostile", { tools: [{ name: "echo" }] }) } });
    await manager.tools("srv");
    expect(listings(ws)).toBe(1);
    const all = await Promise.all(Array.from({ length: 5 }, () => manager.tools("srv")));
    expect(all.every((tools) => tools.length === 1 && tools[0]!.id === "srv/echo")).toBe(true);
    expect(all[0]).not.toBe(all[1]); // each caller its own definitions
    expect(listings(ws)).toBe(2);
    await manager.tools("srv");
    expect(listings(ws)).toBe(3);
  });

  it("a caller that aborts while waiting leaves the listing to the others", async () => {
    const { ws, leaving, manager } = abortedAtSpawn();
    const left = manager.tools("srv", { signal: leaving.signal }).catch((error: unknown) => error);
    const stayed = Promise.allSettled([manager.tools("srv"), manager.callTool("srv/echo", { value: "y" })]);
    expect(await left).toMatchObject({ code: "MCP_ABORTED", reason: "user", outcome: "not-sent", message: expect.stringMatching(/aborted while its server listed its tools/) });
    const [tools, called] = await stayed;
    expect(tools).toMatchObject({ status: "fulfilled", value: [expect.objectContaining({ id: "srv/echo" })] });
    expect(called).toEqual({ status: "fulfilled", value: { content: [{ type: "text", text: "y" }] } });
    expect(listings(ws)).toBe(1);
  });

  it("a cold callTool() stopped while the list is fetched names tools/call, the method it was called for", async () => {
    const { leaving, manager } = abortedAtSpawn();
    const error = await manager.callTool("srv/echo", { value: "z" }, { signal: leaving.signal }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "MCP_ABORTED", outcome: "not-sent", message: expect.stringMatching(/^tools\/call: aborted while its server listed its tools/) });
  });

  it("a failed listing rejects every caller waiting on it and is not kept", async () => {
    const ws = workspace();
    // 3,004 tools: the adapter refuses the whole list.
    const manager = managed({ servers: { srv: agentServer(ws, "many", { tools: [{ name: "tool_1" }] }) } });
    const errors = await Promise.all(Array.from({ length: 4 }, () => manager.tools("srv").catch((error: unknown) => error)));
    for (const error of errors) expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR", message: expect.stringMatching(/tools/) });
    expect(listings(ws)).toBe(1);
    await expect(manager.tools("srv")).rejects.toMatchObject({ code: "MCP_PROTOCOL_ERROR" });
    expect(listings(ws)).toBe(2);
  });

  it("a caller whose deadline passes while waiting has the server pinged at once", async () => {
    const ws = workspace();
    killAfter(() => ws.pids());
    const config = agentServer(ws, "hostile", { tools: [{ name: "echo" }], closeTimeoutMs: 200 });
    const manager = managed({ servers: { srv: config }, heartbeatIntervalMs: 600_000, heartbeatTimeoutMs: 300, backoffInitialMs: 60_000 });
    await manager.tools("srv");
    const [pid] = ws.pids();
    process.kill(pid!, "SIGSTOP"); // frozen: the listing below can never be answered
    const waiting = manager.tools("srv").catch((error: unknown) => error); // no deadline of its own
    await expect(manager.tools("srv", { timeoutMs: 300 })).rejects.toMatchObject({ code: "MCP_TIMEOUT", outcome: "not-sent" });
    await waitFor(() => manager.metrics().servers.srv!.failures === 1, "the ping after the timeout to fail");
    expect(manager.metrics().servers.srv).toMatchObject({ heartbeatFailures: 1, state: "backoff" });
    // The failed ping closed the server's client: the listing it held rejects its other caller.
    expect(await waiting).toMatchObject({ code: "CLIENT_CLOSED", method: "tools/list" });
    await waitFor(() => !isAlive(pid!), "the frozen server to be killed");
  });

  it("still refuses call options the client would refuse", async () => {
    const ws = workspace();
    const manager = managed({ servers: { srv: agentServer(ws, "hostile", { tools: [{ name: "echo" }] }) } });
    await expect(manager.tools("srv", { timeoutMs: -5 })).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT", message: expect.stringMatching(/timeoutMs must be a positive integer/) });
    await expect(manager.tools("srv", { signal: "stop" as never })).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT", message: expect.stringMatching(/signal must be an AbortSignal/) });
    expect(ws.pids()).toEqual([]);
  });
});
