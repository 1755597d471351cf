// The lab's hang detectors (labs/33-mcp-lite/tests/support.ts) give no false "hung" on a
// loaded machine: their clock counts the time this process had to run, not wall time in
// which it was starved, and the initialize() wait does not count the server's start-up and
// handshake answer against the client.

import "../../labs/33-mcp-lite/probes/spawn-recorder.ts";
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { LogEntry } from "../../fixtures/index.ts";
import { HangClock, HungError, settleWithin, startupWithin, type ClockSources } from "../../labs/33-mcp-lite/tests/support.ts";
import { runDelayMs } from "../../labs/33-mcp-lite/tests/observers.ts";

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
// count of the time this process and the client's host spent runnable, waiting for a CPU.
describe("the hang detectors' clock", () => {
  function scripted(steps: Array<{ wall: number; host?: { pid: number; ms: number } }>): { clock: HangClock; counted: () => number[] } {
    let at = 0;
    const sources: ClockSources = { now: () => steps[at]!.wall, hostDelay: () => steps[at]!.host };
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
    const { counted } = scripted([{ wall: 0, host: { pid: 7, ms: 9 } }, { wall: 10, host: { pid: 7, ms: 9 } }, { wall: 210, host: { pid: 7, ms: 9 } }]);
    expect(counted()).toEqual([10, 60]);
  });

  it("does not count the time the client's host waited for a CPU", () => {
    // Each 50 ms poll, the host was runnable but not running for 40 ms of it.
    const { counted } = scripted([0, 1, 2, 3].map((i) => ({ wall: i * 50, host: { pid: 7, ms: 100 + i * 40 } })));
    expect(counted()).toEqual([10, 20, 30]);
  });

  it("never counts backwards, and counts the wall clock where there is no host to read", () => {
    // 120 ms of the host's waiting falls in one 50 ms poll: that poll counts nothing, no less.
    const { counted } = scripted([{ wall: 0, host: { pid: 7, ms: 0 } }, { wall: 50, host: { pid: 7, ms: 120 } }, { wall: 100, host: { pid: 7, ms: 120 } }, { wall: 150 }, { wall: 200 }]);
    expect(counted()).toEqual([0, 50, 100, 150]);
  });

  it("counts a host that loops or waits on nothing, and never compares two hosts' counts", () => {
    // A host replaced between two polls (pid 7, then pid 8) has a count of its own.
    const { counted } = scripted([{ wall: 0, host: { pid: 7, ms: 500 } }, { wall: 50, host: { pid: 8, ms: 0 } }, { wall: 100, host: { pid: 8, ms: 0 } }]);
    expect(counted()).toEqual([50, 100]);
  });

  it("reads the kernel's count where there is one, and none where there is no such file", () => {
    if (process.platform === "linux") expect(runDelayMs()).toBeGreaterThanOrEqual(0);
    expect(runDelayMs("/proc/0/no-such-file")).toBeUndefined();
  });
});
