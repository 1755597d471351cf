import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { McpClient, McpError } from "#submission/src/mcp-client.ts";
import { isAlive, makeTempDir } from "../../fixtures/index.ts";
import { liveClientTimers, received, rejection, timerSnapshot, within } from "../../labs/33-mcp-lite/tests/support.ts";
import { startClient, waitFor } from "../support.ts";

describe("starting the server", () => {
  it("validates options in the constructor and spawns nothing until initialize()", () => {
    expect(() => new McpClient({ executable: "node --version" as string, args: [1 as never] })).toThrow(McpError);
    const client = new McpClient({ executable: "/definitely/not/here" });
    expect(client.pid).toBeUndefined();
    expect(client.initialized).toBe(false);
    expect(client.state).toBe("idle");
  });

  it("reports a missing executable as MCP_SPAWN_FAILED with ENOENT", async () => {
    const client = new McpClient({ executable: "/definitely/not/here/mcp-server" });
    const error = await rejection(client.initialize(), "initialize()");
    expect(error).toMatchObject({ code: "MCP_SPAWN_FAILED", phase: "spawn", cause: { code: "ENOENT" } });
    expect(client.initialized).toBe(false);
    expect(client.pid).toBeUndefined();
    await client.close();
  });

  it("reports a file that is not executable as MCP_SPAWN_FAILED with EACCES", async () => {
    const temp = makeTempDir();
    try {
      const file = join(temp.dir, "server.sh");
      writeFileSync(file, "#!/bin/sh\necho hi\n");
      chmodSync(file, 0o644);
      const client = new McpClient({ executable: file });
      const error = await rejection(client.initialize(), "initialize()");
      expect(error).toMatchObject({ code: "MCP_SPAWN_FAILED", cause: { code: "EACCES" } });
      await client.close();
    } finally {
      temp.cleanup();
    }
  });

  it("tells a server that dies during the handshake apart from a spawn failure", async () => {
    const h = startClient({ scenarios: ["crash-on-start"] });
    const error = await rejection(h.client.initialize(), "initialize()");
    expect(error).toMatchObject({ code: "MCP_PROCESS_EXIT", exitCode: 1 });
    expect(error.stderr).toContain("fatal: fixture configured to crash on start");
    expect(h.client.initialized).toBe(false);
  });

  it.each([
    ["bad-version", "MCP_PROTOCOL_ERROR", /"1999-01-01".*2025-06-18/],
    ["bad-initialize", "MCP_PROTOCOL_ERROR", /capabilities/],
    ["error-initialize", "MCP_ERROR", /initialization refused/],
  ])("fails the handshake on %s and stops the child it started", async (scenario, code, message) => {
    const h = startClient({ scenarios: [scenario] });
    const error = await rejection(h.client.initialize(), "initialize()");
    expect(error).toMatchObject({ code, message: expect.stringMatching(message) });
    expect(h.client.initialized).toBe(false);
    expect(h.client.pid).toBeUndefined();
    expect(h.pids().filter(isAlive)).toEqual([]);
    // The client stopped this server itself: its exit is recorded as expected.
    expect(h.client.metrics.lastExit).toMatchObject({ expected: true });
  });

  it("times out a handshake the server never answers and stops the child", async () => {
    const h = startClient({ scenarios: ["hang-initialize"] }, { timeoutMs: 200 });
    const error = await rejection(h.client.initialize(), "initialize()");
    expect(error).toMatchObject({ code: "MCP_TIMEOUT", method: "initialize", timeoutMs: 200 });
    expect(h.pids().filter(isAlive)).toEqual([]);
  });

  it("shares one handshake between concurrent initialize() calls and never sends a second", async () => {
    const h = startClient();
    const [a, b, c] = await within(Promise.all([h.client.initialize(), h.client.initialize(), h.client.initialize()]), "initialize() x3");
    expect(a).toBe(b);
    expect(b).toBe(c);
    await h.client.initialize();
    await waitFor(() => received(h.log(), "notifications/initialized").length === 1, "notifications/initialized");
    expect(received(h.log(), "initialize")).toHaveLength(1);
    const log = h.log().filter((entry) => entry.dir === "in").map((entry) => entry.msg.method ?? "response");
    expect(log.slice(0, 2)).toEqual(["initialize", "notifications/initialized"]);
  });

  it("refuses listTools and callTool before initialize() without starting anything", async () => {
    const h = startClient();
    await expect(h.client.listTools()).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED" });
    await expect(h.client.callTool("echo", { value: 1 })).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED" });
    await expect(h.client.ping()).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED" });
    expect(h.pids()).toEqual([]);
  });

  it("checks call input before anything is written", async () => {
    const h = startClient();
    await h.client.initialize();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(h.client.callTool("", {})).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    await expect(h.client.callTool("echo", [] as never)).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    await expect(h.client.callTool("echo", circular)).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    await expect(h.client.callTool("echo", { n: 1n } as never)).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    await expect(h.client.callTool("echo", {}, { timeoutMs: -5 })).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    await expect(h.client.callTool("echo", {}, { signal: {} as AbortSignal })).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    expect(h.client.pendingCount).toBe(0);
    await h.client.callTool("echo", { value: "sync" });
    expect(received(h.log(), "tools/call")).toHaveLength(1);
  });
});

describe("the process boundary", () => {
  it("passes arguments verbatim, without a shell", async () => {
    const tricky = ["with space", "it's \"quoted\"", "$(echo pwned)", "a; rm -rf /", "`id`", "*", "$HOME", ""];
    const h = startClient({ extraArgs: ["--", ...tricky] });
    await h.client.initialize();
    const result = (await h.client.callTool("inspect")) as { argv: string[] };
    expect(result.argv.slice(-tricky.length)).toEqual(tricky);
  });

  it("gives the server PATH and the configured env, and nothing else of the client's environment", async () => {
    process.env.LAB33_TEST_SECRET = "hunter2";
    try {
      const h = startClient({}, { env: { GREETING: "你好" } });
      await h.client.initialize();
      const { env } = (await h.client.callTool("inspect")) as { env: Record<string, string> };
      expect(env.GREETING).toBe("你好");
      expect(env.PATH).toBe(process.env.PATH);
      expect(env.LAB33_TEST_SECRET).toBeUndefined();
      expect(env.HOME).toBeUndefined();
    } finally {
      delete process.env.LAB33_TEST_SECRET;
    }
  });

  it("runs the server in the configured cwd", async () => {
    const temp = makeTempDir();
    try {
      const h = startClient({}, { cwd: temp.dir });
      await h.client.initialize();
      const { cwd } = (await h.client.callTool("inspect")) as { cwd: string };
      expect(cwd).toBe(temp.dir);
      await h.client.close();
    } finally {
      temp.cleanup();
    }
  });
});

describe("close()", () => {
  it("is idempotent: concurrent callers share one shutdown that ends after the exit", async () => {
    const h = startClient({ scenarios: ["slow-exit"], sigtermDelayMs: 150 });
    await h.client.initialize();
    const pid = h.client.pid!;
    const pending = h.client.callTool("never");
    const first = h.client.close();
    const second = h.client.close();
    expect(second).toBe(first);
    await expect(pending).rejects.toMatchObject({ code: "CLIENT_CLOSED", method: "tools/call" });
    await first;
    expect(isAlive(pid)).toBe(false);
    expect(h.client.state).toBe("closed");
    await expect(h.client.callTool("echo")).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    await expect(h.client.initialize()).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    await h.client.close();
  });

  it("kills a server that ignores SIGTERM after closeTimeoutMs", async () => {
    const h = startClient({ scenarios: ["ignore-sigterm"] }, { closeTimeoutMs: 200 });
    await h.client.initialize();
    const pid = h.client.pid!;
    await within(h.client.close(), "close()", 5_000);
    expect(isAlive(pid)).toBe(false);
    expect(h.client.metrics.lastExit).toMatchObject({ signal: "SIGKILL", expected: true });
  });

  it("takes down a grandchild that holds the server's pipes", async () => {
    const h = startClient({ scenarios: ["grandchild"] });
    await h.client.initialize();
    await waitFor(() => h.pids().length === 2, "the grandchild's pid");
    const pending = rejection(h.client.callTool("never"), "callTool(never)");
    await within(h.client.close(), "close()", 5_000);
    expect(await pending).toMatchObject({ code: "CLIENT_CLOSED" });
    expect(h.pids().filter(isAlive)).toEqual([]);
  });

  it("rejects a handshake that close() interrupts with CLIENT_CLOSED", async () => {
    const h = startClient({ scenarios: ["hang-initialize"] });
    const init = rejection(h.client.initialize(), "initialize()");
    await waitFor(() => received(h.log(), "initialize").length === 1, "the initialize request");
    await h.client.close();
    expect(await init).toMatchObject({ code: "CLIENT_CLOSED" });
    expect(h.pids().filter(isAlive)).toEqual([]);
  });

  it("racing a spawn that fails, resolves and leaves no SIGKILL timer behind", async () => {
    const before = timerSnapshot();
    const client = new McpClient({ executable: "/definitely/not/here/mcp-server" });
    const init = rejection(client.initialize(), "initialize()");
    await within(client.close(), "close()");
    expect(await init).toMatchObject({ code: "MCP_SPAWN_FAILED", cause: { code: "ENOENT" } });
    expect(client.pid).toBeUndefined();
    expect(liveClientTimers(before)).toEqual([]);
  });

  it("resolves at once when nothing was ever started", async () => {
    const client = new McpClient({ executable: "node" });
    await client.close();
    expect(client.state).toBe("closed");
  });

  it("tells an observer of each spawn and exit, an exit it caused as expected and a crash as not", async () => {
    const events: Array<[string, unknown]> = [];
    const observer = {
      spawned: (event: unknown) => events.push(["spawned", event]),
      exited: (event: unknown) => events.push(["exited", event]),
    };
    const h = startClient({}, {}, (options) => new McpClient(options, observer));
    await h.client.initialize();
    const first = h.client.pid;
    await expect(h.client.callTool("exit", { code: 4 })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT" });
    await h.client.initialize();
    const second = h.client.pid;
    await h.client.close();
    expect(events).toEqual([
      ["spawned", { pid: first }],
      ["exited", { exitCode: 4, signal: null, expected: false }],
      ["spawned", { pid: second }],
      ["exited", expect.objectContaining({ expected: true })],
    ]);
  });
});
