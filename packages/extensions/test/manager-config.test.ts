// The manager's configuration is checked before anything starts, with the tool adapter's
// name rule for servers and tools and the client's own option check for each server (a bad
// option fails in the constructor, naming the server, not in the first call); a tool's own
// permission may only narrow its server's maxPermission; a broker that returns something
// else than a lease is a failed start, like one that throws.
import { describe, expect, it } from "vitest";
import { McpError } from "../src/errors.ts";
import { McpManager, type ServerConfig } from "../src/manager.ts";
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

  it.each([
    ["args [1]", { args: [1] }, "servers.x: args[0] must be a string, got 1"],
    ["empty executable", { executable: "" }, "servers.x: executable must be a non-empty string"],
    ["no executable", { executable: undefined }, "servers.x: executable must be a non-empty string"],
    ["empty cwd", { cwd: "" }, 'servers.x: cwd must be a non-empty string, got ""'],
    ["env value 1", { env: { MODE: 1 } }, "servers.x: env.MODE must be a string, got 1"],
    ["timeoutMs 0", { timeoutMs: 0 }, "servers.x: timeoutMs must be a positive integer"],
    ["maxPending 1.5", { maxPending: 1.5 }, "servers.x: maxPending must be a positive integer"],
    ["empty secret", { secrets: [""] }, "servers.x: secrets[0] must be a non-empty string"],
    ["secret in args", { secrets: ["tok-123"], args: ["--key=tok-123"] }, "servers.x: args[0] contains a secret"],
    ["negative budget", { budget: { requestBytes: -1, responseBytes: 10 } }, "servers.x: budget.requestBytes must be a finite number of bytes >= 0"],
    ['redactResults "yes"', { redactResults: "yes" }, "servers.x: redactResults must be a boolean"],
    ["empty runId", { runId: "" }, "servers.x: runId must be a non-empty string"],
    ["bad clientInfo", { clientInfo: { name: 1, version: "1" } }, "servers.x: clientInfo must be { name: string, version: string }"],
    ["no tools", { tools: undefined }, "servers.x.tools must list the tools it may offer"],
    ["tool without name", { tools: [{ name: "t" }, { description: "no name" }] }, "servers.x.tools[1]: every tool needs a name"],
    ["tool description 5", { tools: [{ name: "t", description: 5 }] }, "servers.x.tools[0].description must be a string"],
    ['maxPermission "root"', { maxPermission: "root" }, 'servers.x.maxPermission must be one of read, execute, write, got "root"'],
    ['tool permission "root"', { tools: [{ name: "t", permission: "root" }] }, 'servers.x.tools[0].permission must be one of read, execute, write, got "root"'],
    [
      "a tool permission above maxPermission",
      { maxPermission: "execute", tools: [{ name: "r", permission: "read" }, { name: "t", permission: "write" }] },
      'servers.x.tools[1].permission "write" is above the server\'s maxPermission "execute"; a tool\'s permission can only narrow it',
    ],
    [
      "a tool permission above the default maxPermission",
      { tools: [{ name: "t", permission: "execute" }] },
      'servers.x.tools[0].permission "execute" is above the server\'s maxPermission "read" (the default)',
    ],
    ["a misspelt tool field", { tools: [{ name: "t", permision: "read" }] }, 'servers.x.tools[0] has unknown field "permision"'],
  ])("refuses a server config with %s in the constructor, naming the server and the field", (_label, bad, message) => {
    const config = { executable: "node", tools: [{ name: "t" }], ...bad } as unknown as ServerConfig;
    let thrown: unknown;
    try {
      new McpManager({ servers: { x: config } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(McpError);
    expect(thrown).toMatchObject({ code: "MCP_INVALID_ARGUMENT", phase: "configure" });
    expect((thrown as McpError).message.startsWith(message)).toBe(true);
  });

  it("refuses a server config that is not an object, and the manager's own runId if it is empty", () => {
    expect(() => new McpManager({ servers: { x: null as never } })).toThrow(expect.objectContaining({ code: "MCP_INVALID_ARGUMENT", message: "servers.x must be a server config object" }));
    expect(() => new McpManager({ servers: {}, runId: "" })).toThrow(expect.objectContaining({ code: "MCP_INVALID_ARGUMENT", message: "runId must be a non-empty string" }));
  });

  it("refuses a field a server config does not have (a misspelt maxPermission), and takes every field it does have", async () => {
    const typo = { executable: "node", tools: [], maxpermission: "execute" } as unknown as ServerConfig;
    expect(() => new McpManager({ servers: { x: typo } })).toThrow(expect.objectContaining({ code: "MCP_INVALID_ARGUMENT", phase: "configure", message: 'servers.x has unknown field "maxpermission"' }));
    const full: Required<ServerConfig> = {
      tools: [{ name: "echo", description: "Echoes.", permission: "read" }], maxPermission: "write", secrets: ["s3cret"], runId: "run-1", onTrace: () => {}, budget: { requestBytes: 1_000, responseBytes: 1_000 }, redactResults: true,
      executable: "node", args: ["server.js"], cwd: "/tmp", env: { A: "1" }, timeoutMs: 1_000, closeTimeoutMs: 1_000, maxLineBytes: 1_024, maxStderrBytes: 1_024, maxPending: 4,
      maxRequestBytes: 1_024, maxNotificationsPerSecond: 10, maxNotificationBytesPerSecond: 1_024, onNotification: () => {}, clientInfo: { name: "t", version: "1" },
    };
    const manager = new McpManager({ servers: { x: full } });
    await manager.close();
  });

  it("redacts the config's secrets in the message of a refused option", () => {
    const config = { executable: "node", args: ["x"], env: { TOKEN: "tok-123" }, secrets: ["tok-123"], timeoutMs: "tok-123", tools: [] } as unknown as ServerConfig;
    expect(() => new McpManager({ servers: { x: config } })).toThrow(expect.objectContaining({ message: 'servers.x: timeoutMs must be a positive integer no larger than 2147483647, got "[REDACTED]"' }));
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
