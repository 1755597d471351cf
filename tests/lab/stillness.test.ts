// The hang detectors' stillness check (labs/33-mcp-lite/tests/support.ts): a wait that
// nothing can ever end is called hung at once, and a wait that something could still end
// (a timer of the client's, a delayed answer the server has scheduled, a signal the server
// has not handled yet, a program that is not the fixture) is never called still. Each case
// waits with a deadline far longer than the test's own timeout, so a wrong "still" shows as
// a HungError and a missed one as a test timeout.

import "../../labs/33-mcp-lite/probes/spawn-recorder.ts";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { createFixtureWorkspace, type FixtureOptions, type FixtureWorkspace } from "../../fixtures/index.ts";
import { HungError, installTimerTracker, settleWithin, stillness } from "../../labs/33-mcp-lite/tests/support.ts";
import { scriptedCommand } from "../../labs/33-mcp-lite/probes/scripted-server.ts";

installTimerTracker();

const FOREVER_MS = 600_000;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Server {
  child: ChildProcess;
  ws: FixtureWorkspace;
  /** Writes one request and resolves with the answer that carries its id. */
  request(id: number, method: string, params?: unknown): Promise<any>;
}

// A minimal client of the fixture (or of a probe's scripted server, answering `scripted`): a
// line reader on stdout, stderr drained.
function startServer(options: FixtureOptions = {}, scripted?: Record<string, unknown>): Server {
  const ws = createFixtureWorkspace();
  const command = scripted ? scriptedCommand(ws, scripted) : ws.command({ selfDestructMs: 60_000, ...options });
  const child = spawn(command.executable, command.args, { stdio: ["pipe", "pipe", "pipe"] });
  const waiting = new Map<number, (msg: any) => void>();
  let buffered = "";
  child.stdout!.setEncoding("utf8").on("data", (text: string) => {
    buffered += text;
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const msg = JSON.parse(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      waiting.get(msg.id)?.(msg);
    }
  });
  child.stderr!.resume();
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
    await ws.cleanup();
  });
  return {
    child,
    ws,
    request: (id, method, params) =>
      new Promise((resolve) => {
        waiting.set(id, resolve);
        child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      }),
  };
}

async function initialized(server: Server): Promise<void> {
  await server.request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } });
  server.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
}

describe("stillness", () => {
  it("calls a wait hung at once when the fixture has answered everything and the client holds nothing", async () => {
    const server = startServer();
    await initialized(server);
    await server.request(2, "ping");
    const error = await settleWithin(new Promise(() => {}), "a promise nothing will settle", FOREVER_MS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HungError);
    expect((error as Error).message).toMatch(/^(挂起：|hung: ).*(再也不会完成|can never settle)/);
  });

  it("calls a wait hung at once when the client's server has exited and its pipes are closed", async () => {
    const server = startServer();
    await initialized(server);
    const exited = once(server.child, "exit");
    server.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "exit", arguments: { code: 3 } } })}\n`);
    await exited;
    await expect(settleWithin(new Promise(() => {}), "a call the exit left pending", FOREVER_MS)).rejects.toBeInstanceOf(HungError);
  });

  it("is not still while the client holds a timer that will settle the wait", async () => {
    const server = startServer();
    await initialized(server);
    const late = new Promise((resolve) => setTimeout(() => resolve("timer fired"), 300));
    expect(await settleWithin(late, "a call with its own timeout", FOREVER_MS)).toEqual({ status: "fulfilled", value: "timer fired" });
  });

  it("is not still while the fixture has a delayed answer scheduled", async () => {
    const server = startServer();
    await initialized(server);
    const answer = server.request(2, "tools/call", { name: "echo", arguments: { value: "late", delay: 300 } });
    const outcome = await settleWithin(answer, "an answer the server holds for 300 ms", FOREVER_MS);
    expect(outcome.status === "fulfilled" && outcome.value.result).toEqual({ content: "late" });
  });

  it("is not still while a signal sent to the server has not been handled (slow exit)", async () => {
    const server = startServer({ scenarios: ["slow-exit"], sigtermDelayMs: 300 });
    await initialized(server);
    const exited = once(server.child, "exit");
    server.child.kill("SIGTERM");
    const outcome = await settleWithin(exited, "the server's slow exit", FOREVER_MS);
    expect(outcome).toEqual({ status: "fulfilled", value: [0, null] });
  });

  it("is never still while a child that is not the fixture runs", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => process.stdout.write('done'), 300)"], { stdio: ["ignore", "pipe", "ignore"] });
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    const done = new Promise((resolve) => child.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString())));
    expect(await settleWithin(done, "output of a plain child", FOREVER_MS)).toEqual({ status: "fulfilled", value: "done" });
  });

  // A probe's scripted server writes the fixture's report too (probes/scripted-server.ts).
  it("calls a wait hung at once when a scripted server has answered everything and will answer nothing more", async () => {
    const server = startServer({}, { "tools/list": { raw: [] } });
    await initialized(server);
    server.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
    const error = await settleWithin(new Promise(() => {}), "a tools/list the scripted server never answers", FOREVER_MS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HungError);
    expect(server.ws.log().some((entry) => entry.dir === "in" && entry.msg?.method === "tools/list")).toBe(true);
  });

  it("is not still while a scripted server has not read what the client wrote, and still once it answered", async () => {
    const server = startServer({}, {});
    await initialized(server);
    // Stopped (SIGSTOP, sent by kill(1): a signal the client sent is one the server must
    // handle), it cannot read the line below: polled in turns of their own (a timer of the
    // test's would itself keep the world moving), the world never reads still.
    spawnSync("kill", ["-STOP", String(server.child.pid)]);
    const answer = server.request(2, "ping");
    const polls: Array<string | undefined> = [];
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      polls.push(stillness());
    }
    expect(polls.every((poll) => poll === undefined)).toBe(true);
    spawnSync("kill", ["-CONT", String(server.child.pid)]);
    expect((await answer).result).toEqual({});
    let still: string | undefined;
    for (let i = 0; i < 500 && still === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      still = stillness();
    }
    expect(still).toMatch(new RegExp(`^${server.child.pid}:`));
  });

  it("tells a still world from a moving one in a snapshot", async () => {
    const server = startServer();
    await initialized(server);
    await server.request(2, "ping");
    // The fixture writes its report once per turn: poll until it shows the ping answered
    // (a fired timer no longer counts as the client's activity).
    let still: string | undefined;
    for (let i = 0; i < 500 && still === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      still = stillness();
    }
    expect(still).toMatch(new RegExp(`^${server.child.pid}:`));
    const timer = setTimeout(() => {}, 1_000);
    expect(stillness()).toBeUndefined();
    clearTimeout(timer);
  });
});
