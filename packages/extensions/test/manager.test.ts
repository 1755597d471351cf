// McpManager: routing catalog, lazy start, prewarm, namespacing, health checks, backoff and
// quarantine keyed by server hash with re-approval, and stop reasons carried to every
// rejected call and to the report.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { FIXTURE_SERVER, isAlive, type FixtureWorkspace } from "../../../fixtures/index.ts";
import { McpCancel } from "../src/mcp-client.ts";
import { CATALOG_DESCRIPTION_BYTES, McpManager, type McpManagerOptions, type McpManagerTraceEvent, type ServerConfig } from "../src/manager.ts";
import { received } from "../../../labs/33-mcp-lite/tests/support.ts";
import { waitFor, workspace } from "./support.ts";

const TINY_SERVER = fileURLToPath(new URL("./servers/tiny-server.mjs", import.meta.url));

interface Harness {
  manager: McpManager;
  trace: McpManagerTraceEvent[];
  spawned(server: string): number;
}

function fixtureServer(ws: FixtureWorkspace, tools: string[], env: Record<string, string> = {}): ServerConfig {
  return { ...ws.command({ selfDestructMs: 60_000 }), env, timeoutMs: 10_000, tools: tools.map((name) => ({ name })) };
}

// Resolves once the fixture server received a tools/call of `tool` (the call is in flight).
function inFlight(ws: FixtureWorkspace, tool: string): Promise<void> {
  return waitFor(() => received(ws.log(), "tools/call").some((call) => call.params?.name === tool), `a ${tool} call reaching the server`);
}

function harness(options: McpManagerOptions): Harness {
  const trace: McpManagerTraceEvent[] = [];
  const manager = new McpManager({ ...options, onTrace: (event) => trace.push(event) });
  onTestFinished(() => manager.close());
  const spawned = (server: string) => trace.filter((event) => event.server === server && event.kind === "server" && event.phase === "spawned").length;
  return { manager, trace, spawned };
}

describe("routing", () => {
  it("lists every declared tool as server/tool with slim metadata and starts nothing", async () => {
    const a = workspace();
    const b = workspace();
    const { manager, spawned } = harness({
      servers: {
        alpha: { ...fixtureServer(a, []), tools: [{ name: "echo", description: `Echoes its value.\n${"long ".repeat(100)}` }, { name: "fail" }] },
        beta: fixtureServer(b, ["echo"]),
      },
    });
    const catalog = manager.catalog();
    expect(catalog.map((entry) => entry.id)).toEqual(["alpha/echo", "alpha/fail", "beta/echo"]);
    expect(catalog[0]).toMatchObject({ server: "alpha", tool: "echo", description: expect.stringMatching(/^Echoes its value\. long .*…$/) });
    expect(Buffer.byteLength(catalog[0]!.description)).toBeLessThanOrEqual(CATALOG_DESCRIPTION_BYTES);
    expect(catalog[1]!.description).toBe("");
    expect(spawned("alpha") + spawned("beta")).toBe(0);
    expect(a.pids()).toEqual([]);
    expect(b.pids()).toEqual([]);
    expect(manager.report().servers).toMatchObject([{ name: "alpha", state: "unused", running: false }, { name: "beta", state: "unused" }]);
  });

  it("starts a server only when one of its tools is chosen, and routes same-named tools to their own server", async () => {
    const a = workspace();
    const b = workspace();
    const { manager, spawned } = harness({
      servers: { alpha: fixtureServer(a, ["echo", "inspect"], { WHO: "alpha" }), beta: fixtureServer(b, ["echo", "inspect"], { WHO: "beta" }) },
    });
    await expect(manager.callTool("alpha/echo", { value: 1 })).resolves.toEqual({ content: 1 });
    expect([spawned("alpha"), spawned("beta")]).toEqual([1, 0]);
    expect(b.pids()).toEqual([]);
    const tool = await manager.select("beta/inspect");
    expect(tool).toMatchObject({ name: "inspect", inputSchema: expect.any(Object) });
    expect([spawned("alpha"), spawned("beta")]).toEqual([1, 1]);
    const alpha = (await manager.callTool("alpha/inspect")) as { env: Record<string, string> };
    const beta = (await manager.callTool("beta/inspect")) as { env: Record<string, string> };
    expect([alpha.env.WHO, beta.env.WHO]).toEqual(["alpha", "beta"]);
    expect(manager.report()).toMatchObject({ state: "open", calls: { ok: 3 }, servers: [{ state: "ready", running: true, starts: 1 }, { state: "ready", running: true }] });
  });

  it("refuses undeclared tools, unknown servers and malformed ids without starting anything", async () => {
    const a = workspace();
    const { manager, spawned } = harness({ servers: { alpha: fixtureServer(a, ["echo"]) } });
    await expect(manager.callTool("alpha/inspect")).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT", message: expect.stringMatching(/no declared tool "inspect"/) });
    await expect(manager.callTool("gamma/echo")).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    await expect(manager.callTool("echo")).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    await expect(manager.select("/echo")).rejects.toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
    expect(spawned("alpha")).toBe(0);
  });

  it("prewarms exactly the listed servers", async () => {
    const a = workspace();
    const b = workspace();
    const { manager, spawned } = harness({ servers: { alpha: fixtureServer(a, ["echo"]), beta: fixtureServer(b, ["echo"]) }, prewarm: ["beta"] });
    expect(spawned("beta")).toBe(0); // constructing starts nothing
    await expect(manager.prewarm()).resolves.toEqual([{ server: "beta", ok: true }]);
    expect([spawned("alpha"), spawned("beta")]).toEqual([0, 1]);
    await manager.callTool("beta/echo", { value: "warm" });
    expect(spawned("beta")).toBe(1);
  });

  it("validates its configuration", () => {
    const ws = workspace();
    expect(() => new McpManager({ servers: { "a/b": fixtureServer(ws, []) } })).toThrow(/server name/);
    expect(() => new McpManager({ servers: { a: { ...fixtureServer(ws, []), tools: undefined as never } } })).toThrow(/must list the tools/);
    expect(() => new McpManager({ servers: { a: fixtureServer(ws, ["x", "x"]) } })).toThrow(/declared twice/);
    expect(() => new McpManager({ servers: { a: fixtureServer(ws, ["x"]) }, prewarm: ["b"] })).toThrow(/unknown server/);
    expect(() => new McpManager(null as never)).toThrow(/needs \{ servers/);
  });
});

describe("health check", () => {
  it("runs initialize, tools/list and ping on a fresh process and confirms it is gone", async () => {
    const a = workspace();
    const { manager, spawned } = harness({ servers: { alpha: fixtureServer(a, ["echo", "never"]) } });
    const result = await manager.healthCheck("alpha");
    expect(result).toMatchObject({ server: "alpha", ok: true, cached: false, exited: true, hash: manager.serverHash("alpha") });
    expect(result.tools).toBeGreaterThan(2);
    expect(spawned("alpha")).toBe(1);
    expect(a.pids().filter(isAlive)).toEqual([]);
  });

  it("gives the ping its own deadline and remembers a failure for a short backoff without starting anything", async () => {
    const ws = workspace();
    let now = 1_000;
    const { manager, spawned } = harness({
      servers: { quiet: { executable: process.execPath, args: [TINY_SERVER, "--mode", "no-ping", "--pid-file", ws.pidFile], tools: [{ name: "never" }] } },
      healthTimeoutMs: 10_000,
      healthPingTimeoutMs: 300,
      healthBackoffMs: 5_000,
      now: () => now,
    });
    const first = await manager.healthCheck("quiet");
    expect(first).toMatchObject({ ok: false, cached: false, exited: true, error: { code: "MCP_TIMEOUT", method: "ping", timeoutMs: 300 } });
    now += 4_000;
    await expect(manager.healthCheck("quiet")).resolves.toMatchObject({ ok: false, cached: true });
    expect(spawned("quiet")).toBe(1);
    now += 2_000;
    await expect(manager.healthCheck("quiet")).resolves.toMatchObject({ ok: false, cached: false });
    expect(spawned("quiet")).toBe(2);
  });

  it("fails when a declared tool is not offered", async () => {
    const a = workspace();
    const { manager } = harness({ servers: { alpha: fixtureServer(a, ["echo", "teleport"]) } });
    await expect(manager.healthCheck("alpha")).resolves.toMatchObject({ ok: false, error: { code: "MCP_PROTOCOL_ERROR", message: expect.stringMatching(/"teleport" is not offered/) } });
  });
});

describe("server hash: backoff and quarantine", () => {
  // A server script in its own folder, so the test can change its content (and hash).
  function scriptServer(ws: FixtureWorkspace, content: string): { config: ServerConfig; write(text: string): void } {
    const script = join(ws.dir, "server.mjs");
    writeFileSync(script, content);
    return {
      config: { executable: process.execPath, args: [script, "--pid-file", ws.pidFile, "--self-destruct-ms", "60000"], timeoutMs: 10_000, tools: [{ name: "echo" }] },
      write: (text) => writeFileSync(script, text),
    };
  }
  const CRASH = 'process.stderr.write("boom\\n"); process.exit(3);\n';
  const WORKING = () => readFileSync(FIXTURE_SERVER, "utf8");

  it("quarantines a failing server by hash; a changed hash starts again only when approved", async () => {
    const ws = workspace();
    const server = scriptServer(ws, CRASH);
    let now = 0;
    const approvals: unknown[] = [];
    let approve = false;
    const { manager, spawned } = harness({
      servers: { flaky: server.config },
      maxFailures: 2,
      backoffInitialMs: 1_000,
      now: () => now,
      approve: (change) => {
        approvals.push(change);
        return approve;
      },
    });
    const crashedHash = manager.serverHash("flaky");
    expect(crashedHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ reason: "process" });
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ message: expect.stringMatching(/backing off/) });
    now += 1_000;
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ reason: "process" });
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ code: "MCP_NOT_INITIALIZED", message: expect.stringMatching(/quarantined/) });
    expect(spawned("flaky")).toBe(2);
    expect(manager.report().servers[0]).toMatchObject({ hash: crashedHash, state: "quarantined", failures: 2 });

    server.write(WORKING()); // a new binary: a new hash
    const fixedHash = manager.serverHash("flaky");
    expect(fixedHash).not.toBe(crashedHash);
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ message: expect.stringMatching(/not approved/) });
    expect(approvals).toEqual([{ server: "flaky", previousHash: crashedHash, hash: fixedHash }]);
    expect(spawned("flaky")).toBe(2);

    approve = true;
    await expect(manager.callTool("flaky/echo", { value: "back" })).resolves.toEqual({ content: "back" });
    expect(approvals).toHaveLength(2);
    expect(manager.report().servers[0]).toMatchObject({ hash: fixedHash, state: "ready", failures: 0 });

    server.write(CRASH); // back to the quarantined binary: still quarantined, nothing asked
    await manager.callTool("flaky/echo", { value: 2 }).catch(() => {});
    expect(manager.report().servers[0]).toMatchObject({ hash: crashedHash, state: "quarantined" });
  });

  it("an unchanged hash stays quarantined, and without an approval callback a change is never approved", async () => {
    const ws = workspace();
    const server = scriptServer(ws, CRASH);
    const { manager, spawned } = harness({ servers: { flaky: server.config }, maxFailures: 1 });
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ reason: "process" });
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ message: expect.stringMatching(/quarantined/) });
    server.write(`${CRASH}// v2\n`);
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ message: expect.stringMatching(/not approved/) });
    expect(spawned("flaky")).toBe(1);
    await expect(manager.healthCheck("flaky")).resolves.toMatchObject({ ok: false });
  });

  it("backoff belongs to the hash: a changed server starts at once", async () => {
    const ws = workspace();
    const server = scriptServer(ws, CRASH);
    const { manager, spawned } = harness({ servers: { flaky: server.config }, backoffInitialMs: 60_000 });
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ reason: "process" });
    await expect(manager.callTool("flaky/echo", { value: 1 })).rejects.toMatchObject({ message: expect.stringMatching(/backing off/) });
    server.write(WORKING());
    await expect(manager.callTool("flaky/echo", { value: "new" })).resolves.toEqual({ content: "new" });
    expect(spawned("flaky")).toBe(2);
  });

  it("a running server whose hash changed is retired: its calls stop as a shutdown, its process ends, the next call starts the new one", async () => {
    const ws = workspace();
    const server = scriptServer(ws, WORKING());
    const { manager, spawned } = harness({ servers: { live: { ...server.config, tools: [{ name: "echo" }, { name: "never" }] } } });
    await manager.callTool("live/echo", { value: 1 });
    const [oldPid] = ws.pids();
    const held = manager.callTool("live/never").catch((error: unknown) => error);
    await manager.select("live/never");
    server.write(`${WORKING()}\n// v2\n`);
    await expect(manager.callTool("live/echo", { value: 2 })).resolves.toEqual({ content: 2 });
    await expect(held).resolves.toMatchObject({ code: "MCP_ABORTED", reason: "shutdown", message: expect.stringMatching(/replaced/) });
    expect(spawned("live")).toBe(2);
    await waitFor(() => !isAlive(oldPid!), "the retired server to end");
  });

  it("the hash covers the executable's content, the script's content and the configuration, not secret values", () => {
    const ws = workspace();
    const script = join(ws.dir, "s.mjs");
    copyFileSync(FIXTURE_SERVER, script);
    const base = { executable: "node", args: [script], tools: [], env: { PATH: process.env.PATH ?? "" } };
    const hash = (config: Partial<ServerConfig>) => new McpManager({ servers: { s: { ...base, ...config } as ServerConfig } }).serverHash("s");
    const first = hash({});
    expect(hash({})).toBe(first);
    expect(hash({ args: [script, "--scenario", "slow-exit"] })).not.toBe(first);
    expect(hash({ executable: process.execPath })).toBe(first); // "node" is looked up in PATH: the same program
    // (Secrets that cannot occur in the script's path: one in argv is refused up front.)
    expect(hash({ env: { ...base.env, TOKEN: "token-A" }, secrets: ["token-A"] })).toBe(hash({ env: { ...base.env, TOKEN: "token-B" }, secrets: ["token-B"] }));
    expect(hash({ env: { ...base.env, MODE: "a" } })).not.toBe(hash({ env: { ...base.env, MODE: "b" } }));
    writeFileSync(script, "// changed\n", { flag: "a" });
    expect(hash({})).not.toBe(first);
    expect(hash({ executable: "no-such-program-xyz" })).toMatch(/^sha256:/);
  });
});

describe("stop reasons", () => {
  it("a parent abort stops every call with its reason through the settle path, then closes every server; the report says why", async () => {
    const a = workspace();
    const b = workspace();
    const parent = new AbortController();
    const { manager } = harness({ servers: { alpha: fixtureServer(a, ["echo", "never", "fail"]), beta: fixtureServer(b, ["never"]) }, signal: parent.signal });
    await manager.callTool("alpha/echo", { value: 1 });
    await expect(manager.callTool("alpha/fail")).rejects.toMatchObject({ code: "MCP_ERROR" });
    const held = [manager.callTool("alpha/never"), manager.callTool("beta/never")];
    await Promise.all([inFlight(a, "never"), inFlight(b, "never")]);
    const pids = [...a.pids(), ...b.pids()];
    parent.abort(new McpCancel("budget", "context budget spent"));
    for (const call of held) {
      // MCP_ABORTED, not CLIENT_CLOSED or MCP_PROCESS_EXIT: the abort ran before the close.
      await expect(call).rejects.toMatchObject({ code: "MCP_ABORTED", reason: "budget", outcome: "unknown" });
    }
    await manager.close();
    await expect(manager.callTool("alpha/echo", { value: 2 })).rejects.toMatchObject({ code: "CLIENT_CLOSED", reason: "budget" });
    expect(pids.filter(isAlive)).toEqual([]);
    expect(manager.report()).toMatchObject({
      state: "closed",
      shutdownReason: "budget",
      calls: { ok: 1, stopped: { user: 0, budget: 3, shutdown: 0, process: 0 }, failed: { MCP_ERROR: 1 } },
      servers: [{ running: false }, { running: false }],
    });
  });

  it("tells a user's cancel, a shutdown and a process failure apart", async () => {
    const a = workspace();
    const { manager } = harness({ servers: { alpha: fixtureServer(a, ["echo", "never", "exit"]) } });
    const mine = new AbortController();
    const cancelled = manager.callTool("alpha/never", {}, { signal: mine.signal });
    await inFlight(a, "never");
    mine.abort();
    await expect(cancelled).rejects.toMatchObject({ code: "MCP_ABORTED", reason: "user" });
    await expect(manager.callTool("alpha/exit", { code: 5 })).rejects.toMatchObject({ code: "MCP_PROCESS_EXIT", reason: "process" });
    const before = manager.report().calls.stopped;
    expect(before).toEqual({ user: 1, budget: 0, shutdown: 0, process: 1 });

    const b = workspace();
    const other = harness({ servers: { beta: fixtureServer(b, ["never", "echo"]) } }).manager;
    const pending = other.callTool("beta/never").catch((error: unknown) => error);
    await inFlight(b, "never");
    await other.close();
    await expect(pending).resolves.toMatchObject({ code: "MCP_ABORTED", reason: "shutdown" });
    expect(other.report()).toMatchObject({ shutdownReason: "shutdown", calls: { stopped: { shutdown: 1 } } });

    const c = workspace();
    const parent = new AbortController();
    parent.abort("process");
    const third = harness({ servers: { gamma: fixtureServer(c, ["echo"]) }, signal: parent.signal }).manager;
    await expect(third.callTool("gamma/echo", { value: 1 })).rejects.toMatchObject({ code: "CLIENT_CLOSED", reason: "process" });
    await expect(third.healthCheck("gamma")).resolves.toMatchObject({ ok: false, error: { code: "CLIENT_CLOSED" } });
    expect(c.pids()).toEqual([]);
  });
});
