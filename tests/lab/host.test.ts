// The client host (labs/33-mcp-lite/host/): the proxy gives the tests CONTRACT §1's surface
// over a client that lives in another process, and the channel survives a host that dies or
// never answers.

import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFixtureWorkspace, isAlive } from "../../fixtures/index.ts";
import { currentHost, HostChannel, HostError } from "../../labs/33-mcp-lite/host/channel.ts";
import { pathDelaysOf } from "../../labs/33-mcp-lite/host/client-side.ts";
import { McpClient, McpError, SUPPORTED_PROTOCOL_VERSIONS } from "../../labs/33-mcp-lite/host/proxy.ts";
import { decodeValue, encodeError, encodeValue, packArgs, unpackArgs } from "../../labs/33-mcp-lite/host/wire.ts";

// (Made in a hook, not at import: a run that filters every test of this file out makes none.)
let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "lab33-host-test-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A one-file "submission" for the channel's own tests.
function submission(name: string, body: string): string {
  const dir = join(scratch, name, "src");
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, "mcp-client.ts");
  writeFileSync(entry, `export class McpError extends Error { code = "X"; }\n${body}\n`);
  return entry;
}

describe("the client proxy", () => {
  it("throws the constructor's McpError synchronously, with its code", () => {
    let thrown: unknown;
    try {
      new McpClient({ executable: "" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(McpError);
    expect(thrown).toMatchObject({ code: "MCP_INVALID_ARGUMENT" });
  });

  it("drives a real client in the host: calls, getters, an abort forwarded in order, close", async () => {
    const ws = createFixtureWorkspace();
    const client = new McpClient({ ...ws.command(), timeoutMs: 10_000 });
    try {
      expect(client.initialized).toBe(false);
      await client.initialize();
      expect(client.initialized).toBe(true);
      const pid = client.pid;
      expect(typeof pid).toBe("number");
      await expect(client.callTool("echo", { value: "ok ✓" })).resolves.toEqual({ content: "ok ✓" });
      const controller = new AbortController();
      const never = client.callTool("never", {}, { signal: controller.signal });
      expect(client.pendingCount).toBe(1);
      controller.abort(new Error("user"));
      await expect(never).rejects.toMatchObject({ code: "MCP_ABORTED" });
      expect(client.pendingCount).toBe(0);
      await expect(client.callTool("fail", {})).rejects.toMatchObject({ code: "MCP_ERROR", remoteCode: -32000 });
      // The hang detectors' clock reads how long each thread on an answer's path waited for
      // a CPU: the host, the server it started, this worker's bridge thread and its main
      // thread (where a fixture pool runs).
      if (process.platform === "linux") {
        const host = currentHost()!;
        const path = pathDelaysOf(host)!;
        expect(host.bridgeTid).not.toBe(process.pid);
        // (Other unreaped children of the host, if any, are on the path too.)
        expect([...path.keys()]).toEqual(expect.arrayContaining([host.pid!, pid!, host.bridgeTid!, process.pid]));
      }
      await client.close();
      expect(isAlive(pid!)).toBe(false);
      expect(client.stderr).toMatchObject({ truncated: false });
    } finally {
      await client.close();
      await ws.cleanup();
    }
  });

  it("exports the submission's data exports", () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS?.length).toBeGreaterThan(0);
  });
});

describe("the host channel", () => {
  it("fails what was in flight when the host dies, naming it, and refuses further use", async () => {
    const entry = submission("dies", `export class McpClient { constructor() {} callTool() { setTimeout(() => process.reallyExit(9), 10); return new Promise(() => {}); } }`);
    const channel = new HostChannel(entry);
    expect(channel.request({ t: "new", client: 1, args: packArgs([{}]) })).toMatchObject({ ok: true });
    const outcome = await channel.send({ t: "call", client: 1, op: "callTool", args: packArgs([]) });
    expect(outcome).toMatchObject({ ok: false, gone: true });
    expect(String(outcome.error.message)).toMatch(/exit 9|9/);
    expect(channel.dead).toBe(true);
    expect(() => channel.request({ t: "get", client: 1 })).toThrow(HostError);
  });

  it("hands the client what the test did in one turn in one turn of the host, the request that follows included", async () => {
    // Each callTool notes whether a turn of the host's event loop has ended since the first
    // one: two calls made back to back (and a getter read right after) must not be parted
    // by the host reading anything in between, or a fast server's answer could come first.
    const entry = submission(
      "turns",
      `export class McpClient { calls = []; ended = false; get pendingCount() { return this.calls.length; }
        callTool(name) { if (this.calls.length === 0) setImmediate(() => (this.ended = true)); this.calls.push(name + ":" + this.ended); return Promise.resolve(this.calls.slice()); } }`,
    );
    const channel = new HostChannel(entry);
    try {
      expect(channel.request({ t: "new", client: 1, args: packArgs([{}]) })).toMatchObject({ ok: true });
      const first = channel.send({ t: "call", client: 1, op: "callTool", args: packArgs(["a"]) });
      const second = channel.send({ t: "call", client: 1, op: "callTool", args: packArgs(["b"]) });
      const third = channel.send({ t: "call", client: 1, op: "callTool", args: packArgs(["c"]) });
      // The request travels with the three sends: it sees all of them, and no turn in between.
      expect(channel.request({ t: "get", client: 1 })).toMatchObject({ ok: true, state: { pendingCount: encodeValue(3) } });
      const outcomes = await Promise.all([first, second, third]);
      expect(decodeValue(outcomes[2].value)).toEqual(["a:false", "b:false", "c:false"]);
      // A send made in a later turn is a later turn for the host too.
      await new Promise((resolve) => setImmediate(resolve));
      const later = await channel.send({ t: "call", client: 1, op: "callTool", args: packArgs(["d"]) });
      expect(decodeValue(later.value)).toEqual(["a:false", "b:false", "c:false", "d:true"]);
    } finally {
      channel.stop();
    }
  });

  it("counts what the host posted, so a still host with an outcome on its way is not still", async () => {
    const entry = submission("posted", `export class McpClient { callTool() { return Promise.resolve("done"); } }`);
    const channel = new HostChannel(entry);
    try {
      expect(channel.request({ t: "new", client: 1, args: packArgs([{}]) })).toMatchObject({ ok: true });
      const call = channel.send({ t: "call", client: 1, op: "callTool", args: packArgs([]) });
      // The request travels with the call: the host settles it, posts the outcome, then answers.
      const answer = channel.request({ t: "query", what: "stillness" });
      const { posted } = decodeValue(answer.value) as { posted: number };
      expect(posted).toBe(1);
      // Read synchronously after the answer: the outcome may still be in this thread's queue.
      expect(channel.received).toBeLessThanOrEqual(posted);
      await call;
      expect(channel.received).toBe(posted);
    } finally {
      channel.stop();
    }
  });

  it("starts its first host through the bridge early-bridge.mjs started, and later ones through bridges of their own", async () => {
    const entry = submission("early", `export class McpClient { callTool() { return Promise.resolve(process.pid); } }`);
    await import("../../labs/33-mcp-lite/host/early-bridge.mjs");
    const early = (globalThis as Record<symbol, unknown>)[Symbol.for("lab.earlyBridge")] as { worker: unknown } | undefined;
    expect(early?.worker).toBeDefined();
    const first = new HostChannel(entry);
    const second = new HostChannel(entry);
    try {
      expect((globalThis as Record<symbol, unknown>)[Symbol.for("lab.earlyBridge")]).toBeUndefined();
      for (const channel of [first, second]) {
        expect(channel.request({ t: "new", client: 1, args: packArgs([{}]) })).toMatchObject({ ok: true });
        const outcome = await channel.send({ t: "call", client: 1, op: "callTool", args: packArgs([]) });
        expect(decodeValue(outcome.value)).toBe(channel.pid);
      }
      expect(first.pid).not.toBe(second.pid);
    } finally {
      first.stop();
      second.stop();
    }
  });

  it("never takes the late answer to a signal it gave up on for the answer to the next request", () => {
    // With no time to answer, every signal() is given up on at once ("ETIMEDOUT"), and the
    // bridge's answer to it comes while the next request waits: that request must still get
    // its own answer (the first flip seen in a fresh-clone CI: a constructor that threw in the
    // host "got no error" in the test, handed the answer to a late signal).
    const entry = submission("late-signal", `export class McpClient { get pendingCount() { return 7; } }`);
    const channel = new HostChannel(entry, { answerMs: 0 });
    try {
      expect(channel.request({ t: "new", client: 1, args: packArgs([{}]) })).toMatchObject({ ok: true });
      let gaveUp = 0;
      for (let round = 0; round < 50; round++) {
        // (Signal 0 to this process: nothing is sent, the answer says it could have been.)
        const outcome = channel.signal(process.pid, 0);
        expect([undefined, "ETIMEDOUT"]).toContain(outcome);
        if (outcome === "ETIMEDOUT") gaveUp += 1;
        expect(channel.request({ t: "get", client: 1 })).toMatchObject({ ok: true, state: { pendingCount: encodeValue(7) } });
      }
      // (An answer can still beat the first look at the clock now and then; not 50 times.)
      expect(gaveUp).toBeGreaterThan(0);
      expect(channel.dead).toBe(false);
    } finally {
      channel.stop();
    }
  });

  it("gives up on a host that loops without answering once it spent its CPU budget, and stops it", () => {
    const entry = submission("stuck", `export class McpClient { constructor() { for (;;) {} } }`);
    const channel = new HostChannel(entry, { answerMs: 3_000 });
    expect(() => channel.request({ t: "new", client: 1, args: packArgs([{}]) })).toThrow(HostError);
    expect(channel.dead).toBe(true);
    // (Judged by the host's CPU time, which a loaded machine does not inflate.)
    expect(channel.why).toMatch(/3000 ms of CPU time|3000 ms 的 CPU/);
    // It names what the submission's code was last given, where to start looking.
    expect(channel.why).toMatch(/new McpClient\(\)/);
  });

  it("gives up on a host blocked in a synchronous wait that uses no CPU, and names it as such", () => {
    const entry = submission("blocked", `export class McpClient { constructor() { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); } }`);
    const channel = new HostChannel(entry, { answerMs: 1_000 });
    expect(() => channel.request({ t: "new", client: 1, args: packArgs([{}]) })).toThrow(HostError);
    expect(channel.dead).toBe(true);
    expect(channel.why).toMatch(/synchronous wait|同步等待/);
    expect(channel.why).toMatch(/new McpClient\(\)/);
  });

  it("calls a host that neither loops nor blocks but never answers slow, with the CPU it used, at six times its budget", async () => {
    // 5 ms of CPU in every 50: a tenth of the budget's worth of CPU per budget of wall time,
    // so never "busy" before the six-budget bound (that would take ten), nor "blocked" (1 %).
    const entry = submission("slow", `export class McpClient { constructor() { const nap = new Int32Array(new SharedArrayBuffer(4)); for (;;) { const end = Date.now() + 5; while (Date.now() < end) {} Atomics.wait(nap, 0, 0, 45); } } }`);
    const channel = new HostChannel(entry, { answerMs: 500 });
    // (Once the host is up: its start-up's CPU is not the constructor's. Asked without a
    // CPU budget: an answer that comes as a message.)
    expect(await channel.send({ t: "query", what: "stillness" })).toMatchObject({ ok: true });
    expect(() => channel.request({ t: "new", client: 1, args: packArgs([{}]) })).toThrow(HostError);
    expect(channel.dead).toBe(true);
    expect(channel.why).toMatch(/did not answer within \d+ ms, using only \d+ ms of CPU time|内没有应答，其间只用了 \d+ ms 的 CPU/);
    expect(channel.why).not.toMatch(/synchronous wait that never returns|loop that never yields/);
  });
});

describe("the wire", () => {
  it("keeps undefined, JSON and unserializable values apart", () => {
    expect(decodeValue(encodeValue(undefined))).toBeUndefined();
    expect(decodeValue(encodeValue({ a: [1, "é"] }))).toEqual({ a: [1, "é"] });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(decodeValue(encodeValue(cycle))).toHaveProperty("[unserializable]");
    expect(decodeValue(undefined)).toEqual({ "[unreadable]": true });
  });

  it("sends arguments as structured clones, functions replaced by a marker", () => {
    const cycle: Record<string, unknown> = { n: 1n };
    cycle.self = cycle;
    const [back] = unpackArgs(packArgs([cycle])) as [Record<string, unknown>];
    expect(back.self).toBe(back);
    expect(unpackArgs(packArgs([() => 1]))).toEqual(["[function]"]);
  });

  it("reads only the contract's fields of a hostile error, whose getters throw", () => {
    const hostile = Object.defineProperty(new Error("x"), "code", { get: () => { throw new Error("boom"); }, enumerable: true });
    const encoded = encodeError(Object.assign(hostile, { stderr: 42, cause: { code: "ENOENT" } }), () => true);
    expect(encoded).toMatchObject({ mcp: true, message: "x", stderr: 42, cause: { code: "ENOENT" } });
    expect(encoded.code).toBeUndefined();
  });
});
