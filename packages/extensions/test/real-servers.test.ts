// The manager against two real third-party MCP servers from the npm registry (root dev
// dependencies, run offline from node_modules): @modelcontextprotocol/server-everything and
// @modelcontextprotocol/server-memory at once, adapted tool definitions, argument checks
// before anything is sent, a cancelled parent, and a server killed behind the manager's back.
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { isAlive } from "../../../fixtures/index.ts";
import { McpCancel } from "../src/mcp-client.ts";
import type { McpManagerOptions, McpManagerTraceEvent, ServerConfig } from "../src/manager.ts";
import { killAfter, managed, waitFor } from "./support.ts";

const require = createRequire(import.meta.url);
// Each package's own bin script, started with this node (no shell, no npx, no network).
const bin = (name: string) => join(dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), "dist", "index.js");

function setup(extra: Partial<McpManagerOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "ext-real-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const trace: McpManagerTraceEvent[] = [];
  const everything: ServerConfig = {
    executable: process.execPath,
    args: [bin("server-everything"), "stdio"],
    cwd: dir,
    timeoutMs: 20_000,
    tools: [{ name: "echo" }, { name: "get-sum" }, { name: "trigger-long-running-operation" }],
  };
  const memory: ServerConfig = {
    executable: process.execPath,
    args: [bin("server-memory")],
    cwd: dir,
    env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
    timeoutMs: 20_000,
    maxPermission: "write",
    tools: [{ name: "create_entities" }, { name: "read_graph" }],
  };
  const manager = managed({ servers: { everything, memory }, onTrace: (event) => trace.push(event), ...extra });
  const pids = () => trace.flatMap((e) => (e.kind === "server" && e.phase === "spawned" && e.pid !== undefined ? [e.pid] : []));
  killAfter(pids);
  const sent = (server: string, method: string) => trace.filter((e) => e.server === server && e.kind === "request" && e.method === method).length;
  return { manager, pids, sent };
}

const entity = { name: "ada", entityType: "person", observations: ["wrote the first program"] };

describe("real MCP servers through the manager", () => {
  it("adapts both servers' tools, calls them, and checks arguments before anything is sent", async () => {
    const { manager, sent } = setup();
    const [everything, memory] = await Promise.all([manager.tools("everything"), manager.tools("memory")]);
    expect(everything.map((tool) => tool.id)).toEqual(["everything/echo", "everything/get-sum", "everything/trigger-long-running-operation"]);
    expect(everything.every((tool) => tool.permission === "read")).toBe(true);
    expect(memory.map((tool) => [tool.id, tool.permission])).toEqual([["memory/create_entities", "write"], ["memory/read_graph", "write"]]);
    await expect(manager.callTool("everything/echo", { message: "hi" })).resolves.toMatchObject({ content: [{ type: "text", text: "Echo: hi" }] });
    await expect(manager.callTool("everything/get-sum", { a: 2, b: 3 })).resolves.toMatchObject({ content: [{ type: "text", text: expect.stringContaining("5") }] });
    await manager.callTool("memory/create_entities", { entities: [entity] });
    const before = sent("memory", "tools/call");
    await expect(manager.callTool("memory/create_entities", { entities: "not a list" })).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT", outcome: "not-sent" });
    await expect(manager.callTool("everything/echo", { message: 42 })).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    expect(sent("memory", "tools/call")).toBe(before);
    const graph = (await manager.callTool("memory/read_graph")) as { content: Array<{ text: string }> };
    expect(graph.content[0]!.text).toContain("wrote the first program");
    expect(manager.metrics()).toMatchObject({ runningServers: 2, servers: { everything: { calls: { ok: 2, failed: { MCP_INVALID_ARGUMENT: 1 } } }, memory: { calls: { ok: 2 } } } });
  });

  it("a cancelled parent stops a long call with its reason and leaves no server running", async () => {
    const parent = new AbortController();
    const { manager, pids } = setup({ signal: parent.signal });
    await manager.callTool("memory/read_graph");
    const long = manager.callTool("everything/trigger-long-running-operation", { duration: 30, steps: 30 });
    await waitFor(() => pids().length === 2, "both servers to run");
    parent.abort(new McpCancel("budget", "context budget spent"));
    await expect(long).rejects.toMatchObject({ reason: "budget" });
    await manager.close();
    expect(pids().filter(isAlive)).toEqual([]);
    expect(manager.report()).toMatchObject({ state: "closed", shutdownReason: "budget" });
  });

  it("a server killed behind the manager's back is started afresh on the next call", async () => {
    let now = 0;
    const { manager, pids } = setup({ backoffInitialMs: 1_000, now: () => now });
    await manager.callTool("memory/create_entities", { entities: [entity] });
    const [first] = pids();
    process.kill(first!, "SIGKILL");
    await waitFor(() => manager.metrics().servers.memory!.state === "backoff", "the manager to notice the kill");
    now += 1_000;
    const graph = (await manager.callTool("memory/read_graph")) as { content: Array<{ text: string }> };
    expect(graph.content[0]!.text).toContain("ada");
    expect(pids()).toHaveLength(2);
    expect(manager.metrics().servers.memory).toMatchObject({ state: "ready", starts: 2, exits: { "unexpected signal SIGKILL": 1 } });
  });
});
