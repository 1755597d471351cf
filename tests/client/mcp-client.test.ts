// McpClient's public surface on paths the fixture rarely takes: the guards at the top of
// every call, answers the client must refuse, and the copies its getters hand out.
import { fileURLToPath } from "node:url";
import { onTestFinished, describe, expect, it } from "vitest";
import { McpClient, McpError, type McpClientOptions } from "#submission/src/mcp-client.ts";
import { startClient, waitFor } from "../support.ts";

const SCRIPTED = fileURLToPath(new URL("./servers/scripted.mjs", import.meta.url));

// A client of the scripted server, which answers each method with the given result.
function scripted(answers: Record<string, unknown> = {}, options: Partial<McpClientOptions> = {}) {
  const client = new McpClient({ executable: process.execPath, args: [SCRIPTED, JSON.stringify(answers)], timeoutMs: 10_000, ...options });
  onTestFinished(() => client.close());
  return client;
}

async function refusal(run: () => Promise<unknown>): Promise<McpError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  }
  throw new Error("expected a rejection");
}

describe("McpClient guards", () => {
  it("refuses calls before initialize() with the method named, and a pre-aborted call as aborted", async () => {
    const client = scripted();
    for (const [method, run] of [
      ["tools/list", () => client.listTools()],
      ["tools/call", () => client.callTool("echo")],
      ["ping", () => client.ping()],
    ] as const) {
      expect(await refusal(run)).toMatchObject({
        code: "MCP_NOT_INITIALIZED",
        method,
        phase: "request",
        message: `${method}: call initialize() first (no initialized server)`,
      });
    }
    const controller = new AbortController();
    controller.abort("stop");
    expect(await refusal(() => client.listTools({ signal: controller.signal }))).toMatchObject({ code: "MCP_ABORTED", method: "tools/list" });
  });

  it("checks call input with one message shape, phase request, before anything is sent", async () => {
    const client = scripted();
    await client.initialize();
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => client.callTool(""), 'tool name must be a non-empty string, got ""'],
      [() => client.callTool("  "), 'tool name must be a non-empty string, got "  "'],
      [() => client.callTool(5 as never), "tool name must be a non-empty string, got 5"],
      [() => client.callTool("echo", [] as never), "tool arguments must be a plain object, got an array"],
      [() => client.callTool("echo", null as never), "tool arguments must be a plain object, got null"],
      [() => client.listTools(null as never), "call options must be an object, got null"],
      [() => client.ping("fast" as never), 'call options must be an object, got "fast"'],
      [() => client.listTools({ signal: {} as never }), "signal must be an AbortSignal, got an object"],
      [() => client.callTool("echo", {}, { timeoutMs: 0 }), "timeoutMs must be a positive integer no larger than 2147483647, got 0"],
    ];
    for (const [run, message] of cases) {
      expect(await refusal(run)).toMatchObject({ code: "MCP_INVALID_ARGUMENT", phase: "request", message });
    }
    expect(client.metrics.requests).toBe(1); // the handshake's initialize only
  });

  it("tags constructor errors as configuration, not as a request", () => {
    expect(() => new McpClient({ executable: "" })).toThrow(expect.objectContaining({ code: "MCP_INVALID_ARGUMENT", phase: "configure" }));
  });

  it("refuses everything after close(), naming the method, phase close", async () => {
    const client = scripted();
    await client.initialize();
    await client.close();
    for (const [method, run] of [
      ["initialize", () => client.initialize()],
      ["tools/list", () => client.listTools()],
      ["tools/call", () => client.callTool("echo")],
      ["ping", () => client.ping()],
    ] as const) {
      expect(await refusal(run)).toMatchObject({ code: "CLIENT_CLOSED", method, phase: "close", message: `${method}: the client was closed` });
    }
    expect([client.state, client.initialized, client.pid]).toEqual(["closed", false, undefined]);
  });
});

describe("McpClient answers", () => {
  it("returns the server's tools, and refuses a tools/list result that is not one", async () => {
    const tools = [{ name: "a", inputSchema: { type: "object" } }];
    const good = scripted({ "tools/list": { tools } });
    await good.initialize();
    await expect(good.listTools()).resolves.toEqual(tools);
    const bad = scripted({ "tools/list": { tools: "nope" } });
    await bad.initialize();
    expect(await refusal(() => bad.listTools())).toMatchObject({
      code: "MCP_PROTOCOL_ERROR",
      method: "tools/list",
      phase: "request",
      message: "invalid tools/list result: tools/list result has no tools array",
    });
    expect(bad.initialized).toBe(true); // one bad answer is not a broken stream
  });

  it("pings a live server and resolves with nothing", async () => {
    const client = scripted();
    await client.initialize();
    await expect(client.ping({ timeoutMs: 5_000 })).resolves.toBeUndefined();
  });

  it("goes idle → starting → ready, and is initialized only when ready", async () => {
    const client = scripted();
    expect([client.state, client.initialized]).toEqual(["idle", false]);
    const init = client.initialize();
    expect([client.state, client.initialized]).toEqual(["starting", false]);
    const result = await init;
    expect([client.state, client.initialized]).toEqual(["ready", true]);
    expect(await client.initialize()).toBe(result);
  });
});

describe("McpClient getters", () => {
  it("hand out copies: changing what they return changes nothing inside", async () => {
    const h = startClient();
    await h.client.initialize();
    await expect(h.client.callTool("exit", { code: 3, stderr: "bye" })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    const stderr = h.client.stderr;
    expect(stderr).toEqual({ text: "bye", truncated: false });
    stderr.text = "changed";
    expect(h.client.stderr.text).toBe("bye");
    const metrics = h.client.metrics;
    expect(metrics).toMatchObject({ spawns: 1, exits: 1, pending: 0, queuedWrites: 0, lastExit: { exitCode: 3, signal: null, expected: false } });
    metrics.lastExit!.exitCode = 99;
    metrics.exits = 42;
    expect(h.client.metrics).toMatchObject({ exits: 1, lastExit: { exitCode: 3 } });
  });

  it("counts requests in flight in pendingCount and metrics.pending alike", async () => {
    const h = startClient();
    await h.client.initialize();
    const slow = h.client.callTool("echo", { value: 1, delay: 200 });
    expect([h.client.pendingCount, h.client.metrics.pending]).toEqual([1, 1]);
    await slow;
    expect([h.client.pendingCount, h.client.metrics.pending]).toEqual([0, 0]);
  });
});

describe("McpClient handshake edges", () => {
  it("fails a handshake whose answer is followed by a protocol fault, without sending notifications/initialized", async () => {
    const client = scripted({ "after:initialize": "[1,2,3]" });
    const error = await refusal(() => client.initialize());
    expect(error).toMatchObject({ code: "MCP_PROTOCOL_ERROR", phase: "transport", message: expect.stringContaining("not a JSON object") });
    expect([client.state, client.initialized, client.pid]).toEqual(["idle", false, undefined]);
    expect(client.metrics).toMatchObject({ protocolFaults: 1, lastExit: { expected: true } });
  });

  it("ignores a notification that arrives before the handshake finished", async () => {
    const client = scripted({ "before:initialize": '{"jsonrpc":"2.0","method":"notifications/message","params":{}}' });
    await client.initialize();
    expect(client.metrics).toMatchObject({ ignoredNotifications: 1, notifications: 0 });
  });

  it("gives a handshake the client's default deadline", async () => {
    const client = scripted({ initialize: null }, { timeoutMs: 50 });
    expect(await refusal(() => client.initialize())).toMatchObject({ code: "MCP_TIMEOUT", timeoutMs: 50, method: "initialize" });
  });
});

describe("McpClient exits", () => {
  it("says how the server exited: its code, or the signal that ended it", async () => {
    const h = startClient();
    await h.client.initialize();
    expect(await refusal(() => h.client.callTool("exit", { code: 3 }))).toMatchObject({ message: "tools/call (id 2): server exited (code 3)", exitCode: 3 });
    await h.client.initialize();
    const held = h.client.callTool("echo", { value: 1, delay: 60_000 });
    process.kill(h.client.pid!, "SIGKILL");
    await expect(held).rejects.toMatchObject({ message: "tools/call (id 4): server exited (signal SIGKILL)", signal: "SIGKILL" });
  });

  it("keeps, after an exit, whether the last server's stderr was cut", async () => {
    const h = startClient({}, { maxStderrBytes: 4 });
    expect(h.client.metrics.stderrTruncated).toBe(false);
    await h.client.initialize();
    await expect(h.client.callTool("exit", { code: 1, stderr: "a long farewell" })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    expect(h.client.stderr).toEqual({ text: "well", truncated: true });
    expect(h.client.metrics.stderrTruncated).toBe(true);
    await h.client.initialize(); // a new server with nothing on stderr yet
    expect(h.client.stderr).toEqual({ text: "", truncated: false });
    expect(h.client.metrics.stderrTruncated).toBe(true);
  });

  it("reports a running server's cut stderr in metrics before it exits", async () => {
    const h = startClient({ scenarios: ["stderr-flood"], floodBytes: 64 * 1024 }, { maxStderrBytes: 1024 });
    await h.client.initialize();
    await waitFor(() => h.client.stderr.text.endsWith("FLOOD-END\n"), "the end of the flood");
    expect(h.client.metrics).toMatchObject({ stderrTruncated: true, exits: 0 });
  });

  it("starts with an empty stderr and no last exit", () => {
    const client = new McpClient({ executable: "node" });
    expect(client.stderr).toEqual({ text: "", truncated: false });
    expect(client.metrics).toMatchObject({ lastExit: null, stderrTruncated: false, spawns: 0, queuedWrites: 0 });
  });
});

describe("McpClient close and readiness", () => {
  it("rejects a call still pending at close() as closed, naming it", async () => {
    const h = startClient();
    await h.client.initialize();
    const held = h.client.callTool("echo", { value: 1, delay: 60_000 });
    // The expectation is attached before close() rejects the call, so the rejection is
    // handled the moment it happens (never reported as unhandled).
    const rejected = expect(held).rejects.toMatchObject({
      code: "CLIENT_CLOSED",
      phase: "close",
      message: "tools/call (id 2): the client was closed",
      outcome: "unknown",
    });
    await h.client.close();
    await rejected;
  });

  it("refuses calls while the handshake is still running", async () => {
    const client = scripted();
    const init = client.initialize();
    expect(client.state).toBe("starting");
    expect(await refusal(() => client.listTools())).toMatchObject({ code: "MCP_NOT_INITIALIZED", method: "tools/list" });
    await init;
  });
});

