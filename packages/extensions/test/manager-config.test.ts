// The manager's configuration is checked before anything starts, with the tool adapter's
// name rule for servers and tools; a broker that returns something else than a lease is a
// failed start, like one that throws.
import { describe, expect, it } from "vitest";
import { McpManager } from "../src/manager.ts";
import { agentServer, managed, workspace } from "./support.ts";

describe("manager configuration", () => {
  it.each([
    [{ heartbeatIntervalMs: -1 }, /heartbeatIntervalMs must be an integer >= 0, got -1/],
    [{ heartbeatTimeoutMs: 0 }, /heartbeatTimeoutMs must be an integer >= 1, got 0/],
    [{ healthyAfterMs: 1.5 }, /healthyAfterMs must be an integer >= 1, got 1.5/],
    [{ secretBroker: "vault" }, /secretBroker must be a function/],
    [{ onTrace: 1 }, /onTrace must be a function/],
    [{ approve: true }, /approve must be a function/],
  ])("refuses %j", (extra, message) => {
    expect(() => new McpManager({ servers: {}, ...(extra as object) })).toThrow(message);
  });

  it("uses the adapter's slug rule for server names (one rule, not two)", () => {
    const ws = workspace();
    expect(() => new McpManager({ servers: { "a.b": agentServer(ws, "hostile") } })).toThrow(/server name "a.b" must match/);
    expect(() => new McpManager({ servers: { "a_b-1": agentServer(ws, "hostile") } })).not.toThrow();
  });

  it("a broker that returns no lease is a failed start", async () => {
    const ws = workspace();
    const manager = managed({ servers: { s: agentServer(ws, "hostile", { tools: [{ name: "echo" }] }) }, secretBroker: async () => ({ env: {} }) as never });
    await expect(manager.callTool("s/echo", { value: "x" })).rejects.toMatchObject({ code: "MCP_SPAWN_FAILED", message: expect.stringMatching(/must return \{ env, secrets, revoke \}/) });
    expect(ws.pids()).toEqual([]);
  });

  it("refuses tools() and stderr() of an unknown server", async () => {
    const manager = managed({ servers: {} });
    await expect(manager.tools("nope")).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    expect(() => manager.stderr("nope")).toThrow(/unknown server "nope"/);
  });
});
