// ServerProcess with tiny real programs (cat, sh, sleep): spawn, the write queue and its
// veto, write errors, the shutdown ladder, exit reporting. No MCP involved.
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { Socket } from "node:net";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isAlive } from "../../fixtures/index.ts";
import { buildServerEnv, drained, EXIT_DRAIN_MS, ServerProcess, type ExitInfo, type ServerProcessOptions } from "#submission/src/server-process.ts";

const servers: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop(100)));
});

function make(executable: string, args: string[] = [], options: Partial<ServerProcessOptions> = {}) {
  const out: string[] = [];
  const exits: ExitInfo[] = [];
  const writeErrors: Error[] = [];
  const server = new ServerProcess({
    executable,
    args,
    cwd: undefined,
    env: buildServerEnv({}),
    maxStderrBytes: 1024,
    onStdout: (chunk) => out.push(chunk.toString()),
    onWriteError: (error) => writeErrors.push(error),
    onExit: (info) => exits.push(info),
    ...options,
  });
  servers.push(server);
  return { server, out, exits, writeErrors, text: () => out.join("") };
}

async function until(condition: () => boolean, label: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("buildServerEnv", () => {
  it("passes PATH and the given variables, nothing else of this process's environment", () => {
    vi.stubEnv("LAB33_SECRET_FOR_TEST", "token");
    const env = buildServerEnv({ MODE: "test" });
    expect(env).toEqual({ PATH: process.env.PATH, MODE: "test" });
    vi.unstubAllEnvs();
  });

  it("leaves out an allowlisted variable this process does not have", () => {
    vi.stubEnv("PATH", undefined);
    try {
      expect(Object.keys(buildServerEnv({ MODE: "test" }))).toEqual(["MODE"]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("lets a given variable override the allowlisted one", () => {
    expect(buildServerEnv({ PATH: "/only/here" }).PATH).toBe("/only/here");
  });
});

describe("ServerProcess", () => {
  it("drops what is sent before start, then writes lines a running program reads", async () => {
    const { server, text } = make("cat");
    expect(server.send("early\n")).toBe("dropped");
    expect([server.pid, server.hasExited, server.queuedLines]).toEqual([undefined, false, 0]);
    await server.start();
    expect(server.pid).toBeTypeOf("number");
    expect(server.send("a\n")).toBe("written");
    expect(server.send("b\n", { beforeWrite: () => true })).toBe("written");
    expect(server.sendIfIdle("c\n")).toBe(true);
    await until(() => text() === "a\nb\nc\n", "the echo");
  });

  it("lets beforeWrite veto a line: it is never written", async () => {
    const { server, text } = make("cat");
    await server.start();
    expect(server.send("vetoed\n", { beforeWrite: () => false })).toBe("dropped");
    server.send("kept\n");
    await until(() => text().length > 0, "the echo");
    expect(text()).toBe("kept\n");
  });

  it("rejects a spawn that fails with the system's error, and stops at once afterwards", async () => {
    const { server, exits } = make("/definitely/not/here");
    await expect(server.start()).rejects.toMatchObject({ code: "ENOENT" });
    await server.stop(100);
    expect(exits).toEqual([]);
  });

  it("reports the exit once, after the output written before it, with the stderr tail kept", async () => {
    const { server, text, exits } = make("sh", ["-c", "echo out; echo oops >&2; exit 3"]);
    await server.start();
    await until(() => exits.length === 1, "the exit");
    expect(text()).toBe("out\n");
    expect(exits).toEqual([{ exitCode: 3, signal: null }]);
    expect(server.stderr.text).toBe("oops\n");
    expect(server.queuedLines).toBe(0);
    expect([server.hasExited, server.pid]).toEqual([true, undefined]);
    expect(server.send("late\n")).toBe("dropped");
  });

  it("says it has exited as soon as the exit is seen, before its pipes drained", async () => {
    // The grandchild holds stdout open, so draining waits EXIT_DRAIN_MS.
    const { server, exits } = make("sh", ["-c", "sleep 5 & exit 0"]);
    await server.start();
    await until(() => server.hasExited, "the exit to be seen");
    expect(exits).toEqual([]);
    expect(server.pid).toBeUndefined();
    await until(() => exits.length === 1, "the exit report");
  });

  it("queues lines while the pipe is full, drops the unwanted ones, and sends notices only when idle", async () => {
    const { server } = make("sleep", ["30"]);
    await server.start();
    const big = `${"x".repeat(64 * 1024)}\n`;
    let sent: string = "written";
    for (let i = 0; i < 64 && sent === "written"; i += 1) sent = server.send(big);
    expect(sent).toBe("queued");
    expect(server.sendIfIdle("notice\n")).toBe(false);
    let wanted = true;
    expect(server.send("a\n", { stillWanted: () => wanted })).toBe("queued");
    expect(server.send("b\n")).toBe("queued");
    expect(server.queuedLines).toBe(3); // the big line that found the pipe full, a, b
    wanted = false;
    expect(server.discardUnwanted()).toBe(2);
    expect(server.queuedLines).toBe(2);
    const stopped = server.stop(100);
    expect(server.queuedLines).toBe(0); // emptied at once: nothing queued is written to a server being stopped
    await stopped;
  });

  it("writes queued lines in order once the pipe drains, through their vetoes", async () => {
    const { server, out } = make("sh", ["-c", "sleep 0.3; cat"]);
    await server.start();
    const big = `${"y".repeat(64 * 1024)}\n`;
    while (server.send(big) === "written");
    server.send("first\n");
    server.send("vetoed\n", { beforeWrite: () => false });
    server.send("last\n");
    await until(() => out.join("").includes("last\n"), "the queued lines");
    const tail = out.join("").split("\n").filter((line) => !line.startsWith("y"));
    expect(tail).toEqual(["first", "last", ""]);
    expect(server.queuedLines).toBe(0);
  });

  it("reports a failed stdin once, and drops every later line", async () => {
    const { server, writeErrors } = make("sh", ["-c", "exec 0<&-; sleep 30"]);
    await server.start();
    for (let i = 0; i < 50 && writeErrors.length === 0; i += 1) {
      server.send(`${"z".repeat(1024)}\n`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(writeErrors).toHaveLength(1);
    expect((writeErrors[0] as NodeJS.ErrnoException).code).toBe("EPIPE");
    expect(server.send("more\n")).toBe("dropped");
    expect(server.queuedLines).toBe(0);
  });

  it("stops a program that ignores SIGTERM with SIGKILL after the grace, and every stop() waits for it", async () => {
    const { server, exits, out } = make("sh", ["-c", 'trap "" TERM; echo ready; while :; do sleep 0.05; done']);
    await server.start();
    await until(() => out.join("") === "ready\n", "the trap");
    const pid = server.pid!;
    const first = server.stop(150);
    expect(server.stop(5_000)).toBe(first);
    expect(server.send("x\n")).toBe("dropped");
    await first;
    expect(exits).toEqual([{ exitCode: null, signal: "SIGKILL" }]);
    expect(isAlive(pid)).toBe(false);
  });

  it("ends a polite program with SIGTERM, before the grace runs out", async () => {
    const { server, exits } = make("sleep", ["30"]);
    await server.start();
    await server.stop(10_000);
    expect(exits).toEqual([{ exitCode: null, signal: "SIGTERM" }]);
  });

  it("stops reading stdout on request, and kills its group at once with killNow()", async () => {
    const { server, out, exits } = make("sh", ["-c", 'trap "" PIPE; while :; do echo tick 2>/dev/null; sleep 0.02; done']);
    await server.start();
    await until(() => out.length > 0, "the first tick");
    server.stopReading();
    const seen = out.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(out.length).toBe(seen);
    server.killNow();
    await until(() => exits.length === 1, "the kill");
    expect(exits[0]!.signal).toBe("SIGKILL");
  });

  it("waits at most EXIT_DRAIN_MS for pipes a grandchild holds open", async () => {
    expect(EXIT_DRAIN_MS).toBe(200);
    const { server, exits } = make("sh", ["-c", "sleep 30 & exit 0"]);
    await server.start();
    const start = Date.now();
    await until(() => exits.length === 1, "the exit report");
    expect(Date.now() - start).toBeLessThan(5_000);
    expect(exits).toEqual([{ exitCode: 0, signal: null }]);
  });

  it("scans the queue for unwanted lines only once it doubled since the last scan (at least 32 lines)", async () => {
    const { server } = make("sleep", ["30"]);
    await server.start();
    const big = `${"x".repeat(64 * 1024)}\n`;
    while (server.send(big) === "written");
    // The first queued line set the next scan at 2 * max(1 - 1, 16) = 32 queued lines.
    let asked = 0;
    const unwanted = () => (asked++, false);
    for (let i = 0; i < 31; i += 1) expect(server.send("u\n", { stillWanted: unwanted })).toBe("queued");
    expect([server.queuedLines, asked]).toEqual([32, 0]);
    // The 32nd finds 32 queued: the 31 unwanted leave, the big line stays, the next scan is
    // at 32 again. The scan asks each line once to find that one must leave, then once more
    // per line while dropping: 1 + 31 questions.
    server.send("u\n", { stillWanted: unwanted });
    expect([server.queuedLines, asked]).toEqual([2, 32]);
    for (let i = 0; i < 8; i += 1) server.send("u\n", { stillWanted: unwanted });
    expect([server.queuedLines, asked]).toEqual([10, 32]);
  });

  it("after the queue emptied, scans again from its first queued line, however large the last backlog was", async () => {
    // The reader is stopped (SIGSTOP) and continued (SIGCONT) by the test: the pipe fills
    // and drains when the test says so.
    const { server } = make("sh", ["-c", "exec cat > /dev/null"]);
    await server.start();
    const pid = server.pid!;
    const state = () => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]![0];
    const pause = async () => {
      process.kill(pid, "SIGSTOP");
      await until(() => state() === "T", "the reader to stop");
    };
    const big = `${"x".repeat(64 * 1024)}\n`;
    try {
      await pause();
      while (server.send(big) === "written");
      // 40 live lines: the scan at 32 keeps them all, so the next one is at 64.
      for (let i = 0; i < 40; i += 1) server.send("live\n", { stillWanted: () => true });
      process.kill(pid, "SIGCONT");
      await until(() => server.queuedLines === 0, "the backlog to drain");
      await pause();
      while (server.send(big) === "written");
      for (let i = 0; i < 32; i += 1) server.send("dead\n", { stillWanted: () => false });
      // The scan came at 32 queued lines again, not at 64.
      expect(server.queuedLines).toBe(2);
    } finally {
      process.kill(pid, "SIGCONT");
    }
  });

  it("corks stdin once per tick, so the lines sent in one tick leave together, and uncorks at the end of it", async () => {
    const { server, text } = make("cat");
    await server.start();
    const cork = vi.spyOn(Socket.prototype, "cork");
    const uncork = vi.spyOn(Socket.prototype, "uncork");
    try {
      server.send("a\n");
      server.send("b\n");
      server.send("c\n");
      expect([cork.mock.calls.length, uncork.mock.calls.length]).toEqual([1, 0]);
      await new Promise((resolve) => setImmediate(resolve));
      expect([cork.mock.calls.length, uncork.mock.calls.length]).toEqual([1, 1]);
      server.send("d\n");
      expect(cork.mock.calls.length).toBe(2);
    } finally {
      cork.mockRestore();
      uncork.mockRestore();
    }
    await until(() => text() === "a\nb\nc\nd\n", "the echo");
  });

  it("says it has exited as soon as a signal ended it, before its pipes drained", async () => {
    // The grandchild holds stdout open from a session of its own (out of reach of the
    // group reap), so draining waits EXIT_DRAIN_MS and nothing else delays the report.
    const { server, exits } = make("sh", ["-c", "setsid sleep 30 & echo $! >&2; kill -9 $$"]);
    await server.start();
    try {
      await until(() => server.hasExited, "the exit to be seen");
      expect(exits).toEqual([]);
      expect(server.pid).toBeUndefined();
      await until(() => exits.length === 1, "the exit report");
      expect(exits).toEqual([{ exitCode: null, signal: "SIGKILL" }]);
    } finally {
      await until(() => /^\d+\n$/.test(server.stderr.text), "the grandchild's pid");
      process.kill(Number(server.stderr.text), "SIGKILL");
    }
  });

  it("does nothing when asked to stop reading before it started", () => {
    const { server } = make("cat");
    servers.pop(); // never started: there is nothing to stop
    expect(() => server.stopReading()).not.toThrow();
  });

  it("once the exit was reported, stop() returns at once and killNow() signals nothing: no timer, no signal, no write", async () => {
    const { server, exits, writeErrors } = make("sh", ["-c", "exit 0"]);
    await server.start();
    await until(() => exits.length === 1, "the exit report");
    const kill = vi.spyOn(process, "kill");
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      await server.stop(5_000);
      server.killNow();
      expect(vi.getTimerCount()).toBe(0);
      expect(kill).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
      kill.mockRestore();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(writeErrors).toEqual([]);
  });
});

describe("drained", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // Starts drained(stream, 200); says whether it resolved, and whether it left its
  // listeners and its timer behind.
  function drain(stream: PassThrough) {
    const listeners = () => `${stream.listenerCount("end")} ${stream.listenerCount("close")}`;
    const before = listeners();
    let settled = false;
    void drained(stream, 200).then(() => (settled = true));
    return { settled: () => settled, cleanedUp: () => vi.getTimerCount() === 0 && listeners() === before };
  }

  it("resolves at once, arming no timer, for a stream that already ended or was destroyed", async () => {
    const ended = new PassThrough();
    ended.resume();
    ended.end();
    await once(ended, "end");
    const destroyed = new PassThrough();
    destroyed.destroy();
    await once(destroyed, "close");
    const both = [drain(ended), drain(destroyed)];
    await vi.advanceTimersByTimeAsync(0);
    expect(both.map((d) => [d.settled(), d.cleanedUp()])).toEqual([[true, true], [true, true]]);
  });

  it.each([
    ["ends", (stream: PassThrough) => (stream.resume(), stream.end(), once(stream, "end"))],
    ["closes without ending", (stream: PassThrough) => (stream.destroy(), once(stream, "close"))],
    ["never ends: at the deadline", () => vi.advanceTimersByTimeAsync(1)],
  ])("resolves when the stream %s, not before, leaving no listener or timer", async (_, finish) => {
    // No 'close' after 'end' (autoDestroy off): each case is told apart by its own event.
    const stream = new PassThrough({ autoDestroy: false });
    const d = drain(stream);
    await vi.advanceTimersByTimeAsync(199);
    expect(d.settled()).toBe(false);
    await finish(stream);
    await vi.advanceTimersByTimeAsync(0);
    expect([d.settled(), d.cleanedUp()]).toEqual([true, true]);
  });
});
