// The lab's hang detectors (labs/33-mcp-lite/tests/support.ts) give no false "hung" on a
// loaded machine: their clock counts the time this process had to run, not wall time in
// which it was starved, and the initialize() wait does not count the server's start-up and
// handshake answer against the client.

import "../../labs/33-mcp-lite/probes/spawn-recorder.ts";
import { spawn } from "node:child_process";
import { describe, expect, it, vi } from "vitest";
import type { LogEntry } from "../../fixtures/index.ts";
import { HangClock, HungError, settleWithin, startupWithin, type ClockSources } from "../../labs/33-mcp-lite/tests/support.ts";
import { childrenOf, runDelayMs } from "../../labs/33-mcp-lite/tests/observers.ts";

function busyWait(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // the process is starved: nothing else runs
  }
}

describe("hang detectors under load", () => {
  it("does not call a promise hung because the process could not run for longer than the deadline", async () => {
    // The answer is ready as soon as the process gets to run again, but the
    // process is blocked for 3x the deadline first, as a starved worker on a loaded machine.
    let release!: () => void;
    const answer = new Promise<string>((resolve) => (release = () => resolve("answered")));
    const waiting = settleWithin(answer, "an answer that is ready", 300);
    await new Promise((resolve) => setTimeout(resolve, 20));
    busyWait(900);
    setTimeout(release, 1); // due after the detector's own deadline, as a late reply would be
    expect(await waiting).toEqual({ status: "fulfilled", value: "answered" });
  });

  it("still calls a promise that never settles hung", async () => {
    const outcome = settleWithin(new Promise(() => {}), "a promise that never settles", 200);
    await expect(outcome).rejects.toBeInstanceOf(HungError);
  });

  it("does not count the server's start-up and handshake against initialize()", async () => {
    // A client whose server takes 1.5 s to start and answer initialize (a loaded machine),
    // judged with a 300 ms hang deadline: the server's turn is not the client's.
    const log: LogEntry[] = [];
    const pids: number[] = [];
    let slow: ReturnType<typeof spawn> | undefined;
    // Like initialize(): the client starts its server once the wait has begun.
    const initialize = Promise.resolve().then(
      () =>
        new Promise<string>((resolve) => {
          slow = spawn(process.execPath, ["-e", "setTimeout(() => {}, 1500)"], { stdio: "ignore" });
          setTimeout(() => {
            pids.push(slow!.pid!);
            log.push({ dir: "in", msg: { jsonrpc: "2.0", id: 1, method: "initialize" } }, { dir: "out", msg: { jsonrpc: "2.0", id: 1, result: {} } });
            setTimeout(() => resolve("initialized"), 50);
          }, 1_500);
        }),
    );
    try {
      await expect(startupWithin({ pids: () => pids, log: () => log }, initialize, "initialize()", 300)).resolves.toBe("initialized");
    } finally {
      slow?.kill("SIGKILL");
    }
  });

  it("still calls an initialize() that never starts a server hung", async () => {
    const outcome = startupWithin({ pids: () => [], log: () => [] }, new Promise(() => {}), "initialize()", 200);
    await expect(outcome).rejects.toBeInstanceOf(HungError);
  });
});

// The clock's arithmetic, from readings the test scripts: the wall clock and the kernel's
// count of the time each thread on the answer's path spent runnable, waiting for a CPU.
describe("the hang detectors' clock", () => {
  function scripted(steps: Array<{ wall: number; waits?: Record<number, number> }>): { clock: HangClock; counted: () => number[] } {
    let at = 0;
    const sources: ClockSources = {
      now: () => steps[at]!.wall,
      pathDelays: () => {
        const waits = steps[at]!.waits;
        return waits && new Map(Object.entries(waits).map(([tid, ms]) => [Number(tid), ms]));
      },
    };
    const clock = new HangClock(sources);
    return {
      clock,
      counted: () => {
        const totals: number[] = [];
        for (at = 1; at < steps.length; at++) totals.push(clock.advance());
        return totals;
      },
    };
  }

  it("counts the wall clock, at most 50 ms a poll, when nothing waited for a CPU", () => {
    const { counted } = scripted([{ wall: 0, waits: { 7: 9 } }, { wall: 10, waits: { 7: 9 } }, { wall: 210, waits: { 7: 9 } }]);
    expect(counted()).toEqual([10, 60]);
  });

  it("does not count the time the client's host waited for a CPU", () => {
    // Each 50 ms poll, the host was runnable but not running for 40 ms of it.
    const { counted } = scripted([0, 1, 2, 3].map((i) => ({ wall: i * 50, waits: { 7: 100 + i * 40 } })));
    expect(counted()).toEqual([10, 20, 30]);
  });

  it("takes off the longest wait on the answer's path, whichever thread it was, and not the sum of waits that overlap", () => {
    // Host 7 idle, its relay 9 waiting 30 ms, then the bridge thread 12 waiting 45 ms while
    // the relay waited 20 ms of the same poll.
    const { counted } = scripted([
      { wall: 0, waits: { 7: 0, 9: 0, 12: 0 } },
      { wall: 50, waits: { 7: 0, 9: 30, 12: 0 } },
      { wall: 100, waits: { 7: 0, 9: 50, 12: 45 } },
      { wall: 150, waits: { 7: 0, 9: 50, 12: 45 } },
    ]);
    expect(counted()).toEqual([20, 25, 75]);
  });

  it("never counts backwards, and counts the wall clock where there is no host to read", () => {
    // 120 ms of the host's waiting falls in one 50 ms poll: that poll counts nothing, no less.
    const { counted } = scripted([{ wall: 0, waits: { 7: 0 } }, { wall: 50, waits: { 7: 120 } }, { wall: 100, waits: { 7: 120 } }, { wall: 150 }, { wall: 200 }]);
    expect(counted()).toEqual([0, 50, 100, 150]);
  });

  it("counts a host that loops or waits on nothing, and compares only threads it read both times", () => {
    // A host replaced between two polls (thread 7, then thread 8), and a relay that started
    // meanwhile (thread 9): neither has a step to give.
    const { counted } = scripted([{ wall: 0, waits: { 7: 500 } }, { wall: 50, waits: { 8: 0, 9: 400 } }, { wall: 100, waits: { 8: 0, 9: 400 } }]);
    expect(counted()).toEqual([50, 100]);
  });

  it("reads the kernel's count where there is one, and none where there is no such file", () => {
    if (process.platform === "linux") expect(runDelayMs()).toBeGreaterThanOrEqual(0);
    expect(runDelayMs("/proc/0/no-such-file")).toBeUndefined();
  });

  it.runIf(process.platform === "linux")("finds the processes a process's main thread started and has not reaped", async () => {
    expect(childrenOf(0)).toEqual([]);
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      await new Promise((resolve) => child.once("spawn", resolve));
      expect(childrenOf(process.pid)).toContain(child.pid);
    } finally {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    expect(childrenOf(process.pid)).not.toContain(child.pid);
  });
});

describe("the hang trace (LAB_HANG_TRACE=1, for corpus:stress)", () => {
  it("puts where the time went first in a hung initialize() wait's message, and nothing without it", async () => {
    const hung = async () => {
      const support = await import("../../labs/33-mcp-lite/tests/support.ts");
      return support.startupWithin({ pids: () => [], log: () => [] }, new Promise(() => {}), "initialize()", 100).catch((error: Error) => error.message);
    };
    try {
      vi.stubEnv("LAB_HANG_TRACE", "1");
      vi.resetModules();
      expect(await hung()).toMatch(/^\[trace w\d+ c\d+ p\d+ big\d+ off\d+ own\d+ st- an- srv0 \| [^\]]*\] /);
      vi.stubEnv("LAB_HANG_TRACE", "");
      vi.resetModules();
      expect(await hung()).not.toContain("[trace");
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});
