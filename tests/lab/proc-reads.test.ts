// The /proc readers that keep a descriptor open between reads (readSmall in the lab's
// observers, procInfo in the grader's process table): a kept descriptor must never give a
// process's old text once that process is gone, nor the wrong process's when its pid is
// taken again, and the number kept open stays bounded.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { procInfo } from "../../grader/procs.ts";
import { readSmall } from "../../labs/33-mcp-lite/tests/observers.ts";

const linux = process.platform === "linux" && existsSync("/proc/self/stat");
const openFds = () => readdirSync("/proc/self/fd").length;

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
  }
});
function sleeper(): ChildProcess & { pid: number } {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  children.push(child);
  return child as ChildProcess & { pid: number };
}
async function end(child: ChildProcess): Promise<void> {
  child.kill("SIGKILL");
  await once(child, "exit");
}

describe.runIf(linux)("kept /proc descriptors", () => {
  it("readSmall gives a live process's file, and nothing once the process is gone and reaped", async () => {
    const child = sleeper();
    const file = `/proc/${child.pid}/stat`;
    expect(readSmall(file)).toMatch(new RegExp(`^${child.pid} \\(sleep\\) `));
    // Read again through the kept descriptor: the text is made afresh.
    expect(readSmall(file)).toMatch(/^\d+ \(sleep\) [SR] /);
    await end(child);
    expect(readSmall(file)).toBeUndefined();
  });

  it("procInfo gives a live process's state, and nothing once the process is gone and reaped", async () => {
    const child = sleeper();
    expect(procInfo(child.pid)).toMatchObject({ pid: child.pid, ppid: process.pid });
    expect(procInfo(child.pid)?.state).toMatch(/^[SR]$/);
    await end(child);
    expect(procInfo(child.pid)).toBeUndefined();
  });

  it("a pid's kept descriptor is never read for another process: a gone process's file is opened again", async () => {
    // Stands in for pid reuse, which cannot be forced: a descriptor kept for one path whose
    // process is gone must not answer, and the next read must open the path again.
    const first = sleeper();
    const file = `/proc/${first.pid}/schedstat`;
    expect(readSmall(file)).toMatch(/^\d+ \d+ \d+/);
    await end(first);
    const before = openFds();
    expect(readSmall(file)).toBeUndefined();
    // The dead process's descriptor was closed, and no new one was kept.
    expect(openFds()).toBe(before - 1);
  });

  it("keeps a bounded number of descriptors however many files are read", () => {
    const before = openFds();
    const pids = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry));
    const files = pids.flatMap((pid) => [`/proc/${pid}/stat`, `/proc/${pid}/schedstat`, `/proc/${pid}/status`, `/proc/${pid}/comm`]);
    expect(files.length).toBeGreaterThan(160); // (more than readSmall keeps: the bound is reached)
    for (let round = 0; round < 2; round++) {
      for (const file of files) readSmall(file);
      for (const pid of pids) procInfo(Number(pid));
    }
    // At most 160 for each reader.
    expect(openFds() - before).toBeLessThanOrEqual(160 + Math.min(pids.length, 160));
  });

  it("does not keep a descriptor for a file outside /proc", () => {
    const before = openFds();
    expect(readSmall("/etc/hostname") ?? readSmall("/etc/os-release")).toBeDefined();
    expect(openFds()).toBe(before);
  });
});
